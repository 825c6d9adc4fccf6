// Start-up and quick-command latency of the compiled binary against a floor (a compiled Bun hello world, same Bun
// and flags) and a baseline build of an earlier commit, interleaved in one run (medians, spread, peak RSS, ratios).
// Usage: bun bench/startup.ts [--baseline COMMIT] [--runs N] [--quick] [--only version,status,...]
//        [--head-bin PATH] [--baseline-bin PATH]   (npm run bench:startup -- --baseline COMMIT)
// A binary given by path is copied into the run's directory first, beside the floor's and any built one.
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const BUN = process.execPath;

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0) return process.argv[i + 1];
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

const quick = process.argv.includes("--quick");
const RUNS = Number(flag("runs") ?? (quick ? 7 : 21));
const WARMUP = 2;
const ROWS = ["version", "status", "list", "run", "submit", "mcp-start", "mcp-run-echo"] as const;
type RowName = (typeof ROWS)[number];
const only = flag("only")?.split(",").filter(Boolean);
const unknownRows = (only ?? []).filter((r) => !(ROWS as readonly string[]).includes(r));
if (unknownRows.length > 0 || !(RUNS >= 1)) {
  console.error(
    `bench/startup.ts: ${unknownRows.length > 0 ? `unknown row(s) ${unknownRows.join(", ")}` : `--runs ${flag("runs")} is not a positive number`}; rows: ${ROWS.join(", ")}`,
  );
  process.exit(2);
}
const rows = ROWS.filter((r) => !only || only.includes(r));

function git(...args: string[]): string {
  return execFileSync("git", args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/** `--baseline COMMIT`, else the newest tag before HEAD; none: refused with what to pass. */
function baselineCommit(): string {
  const given = flag("baseline");
  if (given) return git("rev-parse", "--verify", `${given}^{commit}`);
  try {
    return git("rev-parse", "--verify", `${git("describe", "--tags", "--abbrev=0", "HEAD^")}^{commit}`);
  } catch {
    console.error(
      "bench/startup.ts: no tag before HEAD to compare with; pass the baseline commit, e.g. --baseline $(git merge-base HEAD main)",
    );
    process.exit(2);
  }
}

const work = realpathSync(mkdtempSync(join(tmpdir(), "awl-bench-startup-")));
const children = new Set<Bun.Subprocess>();

function build(outfile: string, root: string): void {
  const r = Bun.spawnSync([BUN, join(root, "build", "build.ts")], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0)
    throw new Error(`build in ${root} failed: ${r.stderr.toString()}${r.stdout.toString()}`);
  execFileSync("cp", [join(root, "dist", "awaitless"), outfile]);
}

/** The baseline binary: the commit checked out in a temporary worktree with the shared node_modules, then removed. */
function buildBaseline(commit: string, outfile: string): void {
  const tree = join(work, "baseline-tree");
  git("worktree", "add", "--detach", tree, commit);
  try {
    symlinkSync(realpathSync(join(ROOT, "node_modules")), join(tree, "node_modules"));
    build(outfile, tree);
  } finally {
    git("worktree", "remove", "--force", tree);
    git("worktree", "prune");
  }
}

/** The floor: a compiled hello world, by the same Bun and with the same flags as build/build.ts. */
function buildFloor(outfile: string): void {
  const src = join(work, "hello.ts");
  writeFileSync(src, 'console.log("hello");\n');
  const r = Bun.spawnSync([BUN, "build", "--compile", "--minify", "--bytecode", src, "--outfile", outfile], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`building the floor failed: ${r.stderr.toString()}`);
}

interface Sample {
  ms: number;
  rssBytes?: number;
  /** CPU time (user + system) the measured process spent: less sensitive to the machine's other load. */
  cpuMs?: number;
}

type Variant = "head" | "base";

/** One binary under test with its own HOME, config and data directory. */
class Subject {
  readonly env: Record<string, string>;
  doneJob = "";
  warm?: McpSession;
  constructor(
    readonly name: Variant,
    readonly bin: string,
  ) {
    const home = join(work, `home-${name}`);
    mkdirSync(home, { recursive: true });
    this.env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      AWAITLESS_DATA_DIR: join(home, "data"),
      AWAITLESS_CONFIG: join(home, "config.toml"),
      NO_COLOR: "1",
    };
    writeFileSync(this.env.AWAITLESS_CONFIG!, "");
  }

  /** Runs the binary to its end; the wall time of the spawn and its peak RSS. */
  time(args: string[]): Sample & { stdout: string } {
    const t0 = performance.now();
    const r = Bun.spawnSync([this.bin, ...args], { env: this.env, stdout: "pipe", stderr: "pipe" });
    const ms = performance.now() - t0;
    if (r.exitCode !== 0)
      throw new Error(
        `${this.name}: awaitless ${args.join(" ")} exited ${r.exitCode}: ${r.stderr.toString()}`,
      );
    return {
      ms,
      rssBytes: r.resourceUsage.maxRSS,
      cpuMs: Number(r.resourceUsage.cpuTime.total) / 1000,
      stdout: r.stdout.toString(),
    };
  }

  /** Waits (outside any timing) until a job's exit record exists, so no wrapper runs during the next sample. */
  async settle(jobId: string): Promise<void> {
    const exit = join(this.env.AWAITLESS_DATA_DIR!, "jobs", jobId, "exit");
    for (let i = 0; i < 400 && !existsSync(exit); i++) await Bun.sleep(25);
  }
}

/** A raw JSON-RPC session with `awaitless mcp` over stdio (no client library: what is timed is the server). */
class McpSession {
  private buffer = "";
  private readonly waiters = new Map<number, (line: string) => void>();
  private nextId = 1;
  readonly proc: Bun.Subprocess<"pipe", "pipe", "pipe">;

  constructor(subject: Subject) {
    this.proc = Bun.spawn([subject.bin, "mcp"], {
      env: subject.env,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    children.add(this.proc);
    void this.read();
    void new Response(this.proc.stderr).text();
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stdout) {
      this.buffer += decoder.decode(chunk, { stream: true });
      for (let nl = this.buffer.indexOf("\n"); nl >= 0; nl = this.buffer.indexOf("\n")) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        const id = (JSON.parse(line) as { id?: number }).id;
        if (typeof id === "number") this.waiters.get(id)?.(line);
      }
    }
  }

  send(method: string, params?: unknown): Promise<string> {
    const id = this.nextId++;
    const answered = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} within 30 s`)), 30_000);
      this.waiters.set(id, (line) => {
        clearTimeout(timer);
        this.waiters.delete(id);
        resolve(line);
      });
    });
    this.proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    this.proc.stdin.flush();
    return answered;
  }

  notify(method: string): void {
    this.proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`);
    this.proc.stdin.flush();
  }

  async handshake(): Promise<void> {
    const init = this.send("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "awaitless-bench-startup", version: "1" },
    });
    this.notify("notifications/initialized");
    const tools = this.send("tools/list");
    await init;
    const listed = JSON.parse(await tools) as { result?: { tools?: unknown[] } };
    if (!(listed.result?.tools?.length ?? 0)) throw new Error(`tools/list answered no tools: ${await tools}`);
  }

  /** CPU time (user + system) so far, in ms (10 ms clock ticks). */
  cpuMs(): number {
    const f = readFileSync(`/proc/${this.proc.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  }

  /** The peak RSS so far (VmHWM). */
  peakRss(): number | undefined {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.proc.pid}/status`, "utf8"));
      return m ? Number(m[1]) * 1024 : undefined;
    } catch {
      return undefined;
    }
  }

  async close(): Promise<void> {
    this.proc.stdin.end();
    const ended = await Promise.race([this.proc.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
    if (!ended) this.proc.kill("SIGKILL");
    await this.proc.exited;
    children.delete(this.proc);
  }
}

/** How each row measures one sample of a subject. */
const MEASURE: Record<RowName, (s: Subject) => Promise<Sample>> = {
  version: async (s) => s.time(["--version"]),
  status: async (s) => s.time(["status", s.doneJob, "--json"]),
  list: async (s) => s.time(["list"]),
  run: async (s) => {
    const r = s.time(["run", "--json", "--", "true"]);
    const answer = JSON.parse(r.stdout) as { job_state?: string; state?: string };
    if ((answer.job_state ?? answer.state) !== "succeeded")
      throw new Error(`run -- true answered ${r.stdout}`);
    return r;
  },
  submit: async (s) => {
    const r = s.time(["submit", "--", "true"]);
    await s.settle(r.stdout.trim().split("\n")[0]!);
    return r;
  },
  "mcp-start": async (s) => {
    const t0 = performance.now();
    const session = new McpSession(s);
    await session.handshake();
    const ms = performance.now() - t0;
    const rssBytes = session.peakRss();
    const cpuMs = session.cpuMs();
    await session.close();
    return { ms, cpuMs, ...(rssBytes !== undefined ? { rssBytes } : {}) };
  },
  "mcp-run-echo": async (s) => {
    const cpu0 = s.warm!.cpuMs();
    const t0 = performance.now();
    const line = await s.warm!.send("tools/call", { name: "run", arguments: { command: ["echo", "hi"] } });
    const ms = performance.now() - t0;
    const cpuMs = s.warm!.cpuMs() - cpu0;
    const answer = JSON.parse(line) as {
      result?: { structuredContent?: { state?: string; job_id?: string } };
    };
    if (answer.result?.structuredContent?.state !== "succeeded")
      throw new Error(`MCP run echo answered ${line}`);
    return { ms, cpuMs };
  },
};

/** The floor of each row: the hello binary for a process start; an in-process spawn of `echo hi` for a warm run. */
const FLOOR: Record<RowName, { what: string; measure: (hello: string) => Promise<Sample> }> =
  Object.fromEntries(
    ROWS.map((r) => [
      r,
      r === "mcp-run-echo"
        ? {
            what: "spawn `echo hi` and see it exit (in-process)",
            measure: async () => {
              const t0 = performance.now();
              const p = Bun.spawn(["echo", "hi"], { stdout: "pipe" });
              await new Response(p.stdout).text();
              await p.exited;
              return { ms: performance.now() - t0 };
            },
          }
        : {
            what: "compiled Bun hello world",
            measure: async (hello: string) => {
              const t0 = performance.now();
              const r = Bun.spawnSync([hello], { stdout: "pipe", stderr: "pipe" });
              return {
                ms: performance.now() - t0,
                rssBytes: r.resourceUsage.maxRSS,
                cpuMs: Number(r.resourceUsage.cpuTime.total) / 1000,
              };
            },
          },
    ]),
  ) as Record<RowName, { what: string; measure: (hello: string) => Promise<Sample> }>;

const LABEL: Record<RowName, string> = {
  version: "`--version`",
  status: "`status JOB --json`",
  list: "`list`",
  run: "`run --json -- true`",
  submit: "`submit -- true`",
  "mcp-start": "MCP start → `tools/list` answered",
  "mcp-run-echo": 'MCP `run ["echo","hi"]`, warm server',
};

const TARGET: Partial<Record<RowName, { text: string; met: (head: number, floor: number) => boolean }>> = {
  version: { text: "≤ 1.5× floor", met: (h, f) => h <= 1.5 * f },
  status: { text: "≤ 2.5× floor", met: (h, f) => h <= 2.5 * f },
  run: { text: "≤ 4× floor", met: (h, f) => h <= 4 * f },
  "mcp-start": { text: "≤ 80 ms", met: (h) => h <= 80 },
  "mcp-run-echo": { text: "≤ 15 ms", met: (h) => h <= 15 },
};

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return s[lo]! + (s[Math.ceil(at)]! - s[lo]!) * (at - lo);
}
const median = (xs: number[]) => quantile(xs, 0.5);
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function main(): Promise<void> {
  // A given binary is copied beside the others: the same bytes started about a millisecond sooner from a file just
  // written than from one built earlier elsewhere (measured: `--version` 0.84x of an identical build), so every
  // subject is a fresh file in the same directory, as the floor is.
  const headGiven = flag("head-bin");
  const head = join(work, "awaitless-head");
  if (headGiven) copyFileSync(headGiven, head);
  const baseGiven = flag("baseline-bin");
  const commit = baseGiven ? undefined : baselineCommit();
  const base = join(work, "awaitless-base");
  if (baseGiven) copyFileSync(baseGiven, base);
  const hello = join(work, "hello");
  console.error(`building: floor, head${commit ? `, baseline ${commit.slice(0, 10)}` : ""} (in ${work})`);
  buildFloor(hello);
  if (!headGiven) build(head, ROOT);
  if (commit) buildBaseline(commit, base);

  const subjects = [new Subject("head", head), new Subject("base", base)];
  for (const s of subjects) {
    const out = s.time(["submit", "--json", "--", "true"]).stdout;
    s.doneJob = (JSON.parse(out) as { job_id: string }).job_id;
    await s.settle(s.doneJob);
    s.time(["wait", s.doneJob]);
    if (rows.includes("mcp-run-echo")) {
      s.warm = new McpSession(s);
      await s.warm.handshake();
    }
  }

  const samples = new Map<string, Sample[]>();
  const add = (row: RowName, who: string, sample: Sample) => {
    const key = `${row}/${who}`;
    samples.set(key, [...(samples.get(key) ?? []), sample]);
  };
  const load0 = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  for (let round = 0; round < WARMUP + RUNS; round++) {
    for (const row of rows) {
      // floor, head and baseline in a rotating order, so none is always first after another row
      const order: ("floor" | Variant)[] = ["floor", "head", "base"];
      for (let k = 0; k < round % 3; k++) order.push(order.shift()!);
      for (const who of order) {
        const sample =
          who === "floor"
            ? await FLOOR[row].measure(hello)
            : await MEASURE[row](subjects.find((s) => s.name === who)!);
        if (round >= WARMUP) add(row, who, sample);
      }
    }
    process.stderr.write(`\rround ${round + 1}/${WARMUP + RUNS}`);
  }
  process.stderr.write("\n");
  const load1 = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

  const header = [
    "command",
    "head median (p25–p75)",
    "baseline median (p25–p75)",
    "floor median",
    "head / floor",
    "head / baseline",
    "CPU head / baseline / floor (mean)",
    "peak RSS head / baseline / floor",
    "target",
  ];
  console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
  const floors = new Set<string>();
  for (const row of rows) {
    const get = (who: string) => samples.get(`${row}/${who}`)!;
    const ms = (who: string) => get(who).map((s) => s.ms);
    const cell = (who: string) =>
      `${median(ms(who)).toFixed(1)} ms (${quantile(ms(who), 0.25).toFixed(1)}–${quantile(ms(who), 0.75).toFixed(1)})`;
    const cpu = (who: string) => {
      const xs = get(who).flatMap((s) => (s.cpuMs === undefined ? [] : [s.cpuMs]));
      return xs.length > 0 ? (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1) : "–";
    };
    const rss = (who: string) => {
      const xs = get(who).flatMap((s) => (s.rssBytes === undefined ? [] : [s.rssBytes]));
      return xs.length > 0 ? mib(median(xs)) : "–";
    };
    const h = median(ms("head"));
    const f = median(ms("floor"));
    const b = median(ms("base"));
    const target = TARGET[row];
    floors.add(FLOOR[row].what);
    console.log(
      `| ${[
        LABEL[row],
        cell("head"),
        cell("base"),
        `${f.toFixed(1)} ms`,
        `${(h / f).toFixed(2)}×`,
        `${(h / b).toFixed(2)}×`,
        `${cpu("head")} / ${cpu("base")} / ${cpu("floor")} ms`,
        `${rss("head")} / ${rss("base")} / ${rss("floor")}`,
        target ? `${target.text}: ${target.met(h, f) ? "met" : "NOT met"}` : "",
      ].join(" | ")} |`,
    );
  }
  const bunVersion = Bun.spawnSync([BUN, "--version"]).stdout.toString().trim();
  console.log(
    `\nhead: ${headGiven ?? `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain", "--untracked-files=no") ? " (+ uncommitted changes)" : ""}`}; baseline: ${commit ? commit.slice(0, 10) : baseGiven}; floor: ${[...floors].join("; ")}; Bun ${bunVersion}; ${RUNS} interleaved rounds after ${WARMUP} warm-up; load average ${load0} → ${load1}`,
  );
}

let failed = false;
try {
  await main();
} catch (e) {
  failed = true;
  console.error(`bench/startup.ts: ${(e as Error).stack ?? e}`);
} finally {
  for (const p of children) p.kill("SIGKILL");
  // the jobs the bench started have ended (settled); their files go with the work directory
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
