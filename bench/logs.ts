// Benchmark of the whole-log read path: `awaitless logs --grep` for a line near the start of a 1 GiB log, on the
// local backend and over SSH (a private sshd; run as root), side by side with `grep -n PATTERN FILE | tail -n 20`
// (and the same grep run through plain `ssh`) in the same run. Prints medians of wall time and peak RSS, and ratios.
// Usage: bun run bench:logs    (builds first)    bun bench/logs.ts --quick   (fewer repetitions)
import { chmodSync, closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBenchSshd } from "./sshd.ts";

const ROOT = join(import.meta.dir, "..");
const BIN = join(ROOT, "dist", "awaitless");
const quick = process.argv.includes("--quick");
const N = quick ? 3 : 7;
const SIZE = 1 << 30;
const PATTERN = "line 000000123 ";
const REGEX = "line 0+123 +CC";

// The 1 GiB log lives in a temp dir that the sshd's test user can read, and is deleted at the end.
const work = mkdtempSync(join(tmpdir(), "awl-bench-logs-"));
chmodSync(work, 0o755);
const source = join(work, "build.log");

function writeLog(): void {
  const fd = openSync(source, "w", 0o644);
  let written = 0;
  let i = 0;
  const filler = "  CC src/module/file.c -o build/module/file.o (warnings: 0) ok\n";
  try {
    while (written < SIZE) {
      const parts: string[] = [];
      for (let k = 0; k < 50_000; k++) {
        i++;
        parts.push(i <= 1_000_000 ? `line ${String(i).padStart(9, "0")} ${filler}` : filler);
      }
      const buf = Buffer.from(parts.join(""));
      const n = Math.min(buf.length, SIZE - written);
      writeSync(fd, buf, 0, n);
      written += n;
    }
  } finally {
    closeSync(fd);
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

interface Sample {
  ms: number;
  rssMiB: number;
  stdout: string;
}
/**
 * Wall time, and the peak RSS of the command's process tree as GNU time reports it (%M, KiB). Async spawns, so
 * that this process keeps draining the sshd's log pipe (a full pipe stalls the sshd).
 */
async function measure(argv: string[], env: Record<string, string>, tries = 3): Promise<Sample> {
  const t0 = performance.now();
  const p = Bun.spawn(["/usr/bin/time", "-f", "@rss %M", ...argv], { env, stdout: "pipe", stderr: "pipe" });
  const [stdout, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  const ms = performance.now() - t0;
  // A plain ssh refused at connect on a loaded machine (255) is retried: the connect is not what is measured.
  if (code === 255 && argv[0] === "ssh" && tries > 1) return measure(argv, env, tries - 1);
  if (code !== 0) throw new Error(`${argv.join(" ")} failed (${code}): ${err}`);
  const kib = Number(/@rss (\d+)/.exec(err)?.[1]);
  return { ms, rssMiB: kib / 1024, stdout };
}
async function repeat(argv: string[], env: Record<string, string>): Promise<Sample> {
  const first = await measure(argv, env); // warms the page cache
  const xs: Sample[] = [];
  for (let k = 0; k < N; k++) xs.push(await measure(argv, env));
  return { ms: median(xs.map((x) => x.ms)), rssMiB: median(xs.map((x) => x.rssMiB)), stdout: first.stdout };
}

const home = mkdtempSync(join(tmpdir(), "awl-bench-logs-home-"));
const { sshd, configPath: cfg } = await startBenchSshd(home);
const env: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  AWAITLESS_DATA_DIR: join(home, "data"),
  AWAITLESS_CONFIG: join(home, "config.toml"),
  NO_COLOR: "1",
};
await Bun.write(env.AWAITLESS_CONFIG as string, "[defaults]\nlog_cap_bytes = 0\n");
const remoteDirs: string[] = [];

interface Row {
  what: string;
  ms: number;
  rssMiB: number;
  baseline: string;
  baselineMs: number;
  baselineRssMiB: number;
  target?: string;
}
const rows: Row[] = [];

try {
  writeLog();
  const cli = (args: string[]) => measure([BIN, ...args], env);
  const job = async (flags: string[]): Promise<string> => {
    const id = JSON.parse((await cli(["submit", "--json", ...flags, "--", "cat", source])).stdout)
      .job_id as string;
    await cli(["wait", id]);
    return id;
  };
  const local = await job([]);
  const remote = await job(["--backend", "ssh", "--host", "bench"]);
  remoteDirs.push(JSON.parse((await cli(["status", "--json", remote])).stdout).backend_id.remote_dir);
  const tail = await cli(["logs", local, "--stream", "stdout", "--tail", "1", "--json"]);
  const bytes = JSON.parse(tail.stdout).stdout_bytes;
  if (bytes !== SIZE) throw new Error(`the local job's log is ${bytes} bytes, not ${SIZE}`);

  const grep = (p: string) => repeat(["sh", "-c", 'grep -n -- "$1" "$2" | tail -n 20', "sh", p, source], env);
  const sshGrep = (p: string) =>
    repeat(
      ["ssh", "-F", cfg, "-o", "BatchMode=yes", "bench", `grep -n -- '${p}' '${source}' | tail -n 20`],
      env,
    );
  const logs = (id: string, p: string) => repeat([BIN, "logs", id, "--stream", "stdout", "--grep", p], env);

  for (const [label, p] of [
    ["literal", PATTERN],
    ["regex", REGEX],
  ] as const) {
    const g = await grep(p);
    const l = await logs(local, p);
    const line = l.stdout.trim().split("\n").at(-1);
    if (!line?.startsWith("123:"))
      throw new Error(`awaitless logs found ${JSON.stringify(l.stdout.slice(0, 200))}`);
    rows.push({
      what: `local: logs --grep '${p}' (${label}), 1 GiB log`,
      ms: l.ms,
      rssMiB: l.rssMiB,
      baseline: "`grep -n PATTERN FILE \\| tail -n 20`",
      baselineMs: g.ms,
      baselineRssMiB: g.rssMiB,
      target: label === "literal" ? "≤ 1.5× grep, RSS < 64 MiB" : "",
    });
    const sg = await sshGrep(p);
    const sl = await logs(remote, p);
    if (!sl.stdout.trim().split("\n").at(-1)?.startsWith("123:"))
      throw new Error("the SSH scan missed the line");
    rows.push({
      what: `ssh: logs --grep '${p}' (${label}), 1 GiB log on the host`,
      ms: sl.ms,
      rssMiB: sl.rssMiB,
      baseline: "`ssh HOST 'grep -n PATTERN FILE \\| tail -n 20'`",
      baselineMs: sg.ms,
      baselineRssMiB: sg.rssMiB,
      target: label === "literal" ? "≤ 1.5× grep, RSS < 64 MiB" : "",
    });
  }
} finally {
  for (const d of remoteDirs) rmSync(d, { recursive: true, force: true });
  await sshd.stop();
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}

const header = [
  "measurement",
  "median",
  "peak RSS",
  "baseline",
  "baseline median",
  "baseline RSS",
  "ratio",
  "target",
];
console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
for (const r of rows) {
  const cells = [
    r.what,
    `${r.ms.toFixed(0)} ms`,
    `${r.rssMiB.toFixed(1)} MiB`,
    r.baseline,
    `${r.baselineMs.toFixed(0)} ms`,
    `${r.baselineRssMiB.toFixed(1)} MiB`,
    `${(r.ms / r.baselineMs).toFixed(2)}×`,
    r.target ?? "",
  ];
  console.log(`| ${cells.join(" | ")} |`);
}
console.log(
  `\n${new Date().toISOString()} · ${navigator.hardwareConcurrency} CPUs · Bun ${Bun.version} · ${Bun.spawnSync(["grep", "--version"]).stdout.toString().split("\n")[0]} · n=${N}${quick ? " (quick)" : ""} · peak RSS of the client process (the remote grep/awk run on the host)`,
);
process.exit(0);
