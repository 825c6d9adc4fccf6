// Runs one generated hostile 0.8 store through `awaitless import` and every read and gc of what came in, and says
// what went wrong: a crash, a canary in any output, a file of ours not private, or anything outside the data
// directory changed. Shared by the fuzz test and bench/import-fuzz.ts.
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, type CliResult, type Sandbox } from "./cli.ts";
import { CANARY, writeHostileStore } from "./hostile-stores.ts";

/** Every path under `dir` but `except`, with its type, mode and content hash (links: their target). */
export function tree(dir: string, except: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string) => {
    if (p === except) return;
    const st = lstatSync(p);
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isDirectory()) {
      out[p] = `d ${mode}`;
      for (const e of readdirSync(p)) walk(join(p, e));
    } else if (st.isFile())
      out[p] = `f ${mode} ${createHash("sha256").update(readFileSync(p)).digest("hex")}`;
    else out[p] = `${st.isSymbolicLink() ? "l" : "o"} ${mode} ${st.size}`;
  };
  walk(dir);
  return out;
}

/** The binary in the sandbox, given at most 60 s (a command blocked on a FIFO the store planted is a failure too). */
function run(sb: Sandbox, args: string[]): CliResult {
  const r = Bun.spawnSync([BINARY, ...args], {
    cwd: sb.work,
    env: sb.env,
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
  });
  const stdout = r.stdout.toString();
  let json: unknown = null;
  try {
    json = JSON.parse(stdout);
  } catch {}
  return {
    code: r.exitCode ?? -1,
    stdout,
    stderr: r.exitCode === null ? "timed out after 60 s" : r.stderr.toString(),
    json,
  };
}

/** Runs one generated store through import and every read and gc; returns what went wrong (empty: nothing). */
export function fuzzOne(sb: Sandbox, seed: number): string[] {
  const from = join(sb.root, "from");
  writeHostileStore(from, sb.root, seed);
  const before = tree(sb.root, sb.dataDir);
  const problems: string[] = [];
  const check = (what: string, r: { code: number; stdout: string; stderr: string }) => {
    if (r.code !== 0 && r.code !== 2) problems.push(`${what} exited ${r.code}: ${r.stderr.slice(0, 400)}`);
    if (/internal error/.test(r.stderr)) problems.push(`${what}: ${r.stderr.slice(0, 400)}`);
    if (`${r.stdout}${r.stderr}`.includes(CANARY)) problems.push(`${what} printed a canary`);
  };
  const imp = run(sb, ["import", "--from", from, "--json"]);
  check("import", imp);
  const ids: string[] = imp.code === 0 ? imp.json.job_ids : [];
  check("list", run(sb, ["list", "--limit", "10000"]));
  for (const id of ids) {
    check(`inspect ${id}`, run(sb, ["inspect", id]));
    check(`logs ${id}`, run(sb, ["logs", id]));
    check(`status ${id}`, run(sb, ["status", id]));
  }
  for (const f of safeList(join(sb.dataDir, "imported-0.8"))) {
    const st = lstatSync(f);
    if (
      st.isSymbolicLink() ||
      (st.isFile() && (st.mode & 0o777) !== 0o600) ||
      (st.isDirectory() && (st.mode & 0o777) !== 0o700)
    )
      problems.push(`${f}: ${st.isSymbolicLink() ? "a link" : (st.mode & 0o777).toString(8)}`);
  }
  check("gc", run(sb, ["gc", "--older-than", "0s", "--forget-unreachable"]));
  const after = tree(sb.root, sb.dataDir);
  for (const p of new Set([...Object.keys(before), ...Object.keys(after)]))
    if (before[p] !== after[p])
      problems.push(`${p} changed: ${before[p] ?? "absent"} → ${after[p] ?? "absent"}`);
  return problems;
}

function safeList(dir: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    let entries: string[];
    try {
      entries = readdirSync(p);
    } catch {
      return;
    }
    for (const e of entries) {
      const q = join(p, e);
      out.push(q);
      if (lstatSync(q).isDirectory()) walk(q);
    }
  };
  walk(dir);
  return out;
}
