// What a local job array costs against the same tasks submitted one by one: the array's one `submit --array` (every
// task launched into its private queue) against N `awaitless submit --queue` CLI calls into a queue of the same
// concurrency (the baseline, same run); then `wait` and `status` on the whole array.
// Usage: bun run build && bun bench/arrays.ts [--n 1000] [--throttle 8]   AWAITLESS_BENCH_BIN: another build.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const BIN = process.env.AWAITLESS_BENCH_BIN ?? join(ROOT, "dist", "awaitless");
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const N = arg("--n", 200);
const THROTTLE = arg("--throttle", 8);

function sandbox(): { env: Record<string, string>; remove(): void } {
  const home = mkdtempSync(join(tmpdir(), "awl-bench-arrays-"));
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    AWAITLESS_DATA_DIR: join(home, "data"),
    AWAITLESS_CONFIG: join(home, "config.toml"),
    NO_COLOR: "1",
  };
  writeFileSync(env.AWAITLESS_CONFIG, "");
  return { env, remove: () => rmSync(home, { recursive: true, force: true }) };
}

function cli(env: Record<string, string>, args: string[]): string {
  const r = Bun.spawnSync([BIN, ...args], { env, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`awaitless ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

function timed<T>(f: () => T): { ms: number; value: T } {
  const t = performance.now();
  const value = f();
  return { ms: performance.now() - t, value };
}

const arr = sandbox();
const base = sandbox();
try {
  const submit = timed(() => cli(arr.env, ["submit", "--array", `0-${N - 1}%${THROTTLE}`, "--", "true"]));
  const id = submit.value;
  const wait = timed(() => cli(arr.env, ["wait", "--json", id]));
  const status = timed(() => cli(arr.env, ["status", "--json", id]));
  const counts = JSON.parse(wait.value).counts;

  cli(base.env, ["queue", "create", "b", "--concurrency", String(THROTTLE)]);
  const one = timed(() => {
    for (let i = 0; i < N; i++) cli(base.env, ["submit", "--queue", "b", "--env", `I=${i}`, "--", "true"]);
  });

  const rows = [
    ["tasks, throttle", `${N}, %${THROTTLE}`, ""],
    [
      "submit --array (all tasks launched)",
      `${(submit.ms / 1000).toFixed(1)} s`,
      `${(submit.ms / N).toFixed(1)} ms/task`,
    ],
    [
      `baseline: ${N} × submit --queue (CLI each)`,
      `${(one.ms / 1000).toFixed(1)} s`,
      `${(one.ms / N).toFixed(1)} ms/task`,
    ],
    ["baseline / array", `${(one.ms / submit.ms).toFixed(2)}×`, ""],
    ["wait on the array (ended)", `${wait.ms.toFixed(0)} ms`, JSON.stringify(counts)],
    ["status of the array", `${status.ms.toFixed(0)} ms`, ""],
  ];
  console.log("| measurement | value | note |\n|---|---|---|");
  for (const r of rows) console.log(`| ${r.join(" | ")} |`);
} finally {
  arr.remove();
  base.remove();
}
