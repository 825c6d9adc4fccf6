// What the npm package's launcher (npm/launcher.sh) adds to a start: `awaitless --version` through it, as npm lays
// it out (a project's node_modules/.bin, and a global prefix), against the binary run directly in the same run,
// beside the floor of any sh launcher (`sh -c 'exec BINARY'`) and a Node launcher of the esbuild/biome kind
// (node + child_process.spawnSync with inherited stdio). Interleaved rounds; medians of wall time, and of CPU time
// (user + system of the process and the children it waited for), which a loaded machine disturbs less.
// Run: bun bench/npm-launcher.ts [--rounds=N]   (after bun run build; needs node for the Node row)
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { LAUNCHER } from "../build/npm.ts";
import { printRatioTable, type RatioRow } from "./ratio-table.ts";

const BINARY = join(import.meta.dir, "..", "dist", "awaitless");
const rounds = Number(process.argv.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 60);
const plat = `${process.platform}-${process.arch === "x64" ? "x64" : "arm64"}`;

/** A node_modules tree as npm writes it: the launcher in awaitless/bin, the platform package beside it. */
function layout(root: string): string {
  const nm = join(root, "node_modules");
  mkdirSync(join(nm, "awaitless", "bin"), { recursive: true });
  copyFileSync(LAUNCHER, join(nm, "awaitless", "bin", "awaitless"));
  chmodSync(join(nm, "awaitless", "bin", "awaitless"), 0o755);
  mkdirSync(join(nm, "@awaitless", plat, "bin"), { recursive: true });
  symlinkSync(BINARY, join(nm, "@awaitless", plat, "bin", "awaitless"));
  return nm;
}

const dir = mkdtempSync(join(tmpdir(), "awl-npm-bench-"));
try {
  const local = layout(join(dir, "project"));
  mkdirSync(join(local, ".bin"));
  symlinkSync("../awaitless/bin/awaitless", join(local, ".bin", "awaitless"));
  layout(join(dir, "prefix", "lib"));
  mkdirSync(join(dir, "prefix", "bin"));
  symlinkSync("../lib/node_modules/awaitless/bin/awaitless", join(dir, "prefix", "bin", "awaitless"));
  const nodeLauncher = join(dir, "node-launcher.js");
  writeFileSync(
    nodeLauncher,
    `const r = require("child_process").spawnSync(${JSON.stringify(BINARY)}, process.argv.slice(2), { stdio: "inherit" });\nprocess.exit(r.status ?? 1);\n`,
  );
  const hasNode = Bun.which("node") !== null;
  const cases: [string, string[]][] = [
    ["the binary", [BINARY, "--version"]],
    ["node_modules/.bin/awaitless (launcher)", [join(local, ".bin", "awaitless"), "--version"]],
    ["PREFIX/bin/awaitless (launcher, npm i -g)", [join(dir, "prefix", "bin", "awaitless"), "--version"]],
    ["sh -c 'exec BINARY' (any sh launcher's floor)", ["/bin/sh", "-c", `exec "${BINARY}" --version`]],
    ...(hasNode
      ? [["node + spawnSync (a Node launcher)", ["node", nodeLauncher, "--version"]] as [string, string[]]]
      : []),
  ];
  const samples = new Map<string, number[]>(cases.map(([n]) => [n, []]));
  const cpu = new Map<string, number[]>(cases.map(([n]) => [n, []]));
  for (let i = 0; i < rounds + 3; i++) {
    for (const [name, argv] of cases) {
      const t = performance.now();
      const r = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
      const ms = performance.now() - t;
      if (r.exitCode !== 0 || !r.stdout.toString().startsWith("awaitless "))
        throw new Error(`${name} failed (${r.exitCode}): ${r.stderr.toString()}`);
      if (i < 3) continue; // the first rounds warm the page cache
      samples.get(name)!.push(ms);
      cpu.get(name)!.push(Number(r.resourceUsage.cpuTime.total) / 1000);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const table = (of: Map<string, number[]>, what: string): RatioRow[] =>
    cases.map(([name]) => ({
      what: `${name} --version, ${what}`,
      median: median(of.get(name)!),
      unit: "ms",
      baseline: "the binary",
      baselineMedian: median(of.get("the binary")!),
    }));
  console.log(
    `npm launcher: ${rounds} interleaved rounds, medians (${plat}, load ${loadavg()[0]!.toFixed(1)})`,
  );
  printRatioTable([...table(samples, "wall"), ...table(cpu, "CPU")]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
