// Every shell file of the repository is shellcheck-clean, as it runs: programs with their fragments spliced in
// (`# awaitless:include`), fragments on their own, bash scripts as bash. Also the texts the client generates.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { assemble, HOST_PROGRAM_FILES, specFunction } from "../../src/wrapper/host-scripts.ts";
import { renderSpec } from "../../src/wrapper/protocol.ts";
import { FRAGMENTS, INCLUDE_RE } from "../../src/wrapper/shell-text.ts";

const ROOT = join(import.meta.dir, "..", "..");
const SKIP = new Set(["node_modules", "dist", ".git"]);

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) return walk(p);
    return st.isFile() ? [p] : [];
  });
}

/** Shell files: *.sh, *.sbatch, and any file without an extension whose first line is a sh or bash shebang. */
function shellFiles(): string[] {
  return walk(ROOT).filter((p) => {
    if (/\.(sh|sbatch)$/.test(p)) return true;
    if (/\.[^/]+$/.test(p.slice(p.lastIndexOf("/")))) return false;
    const head = readFileSync(p).subarray(0, 64).toString("latin1");
    return /^#!.*\b(sh|bash)\b/.test(head);
  });
}

function dialect(text: string): "sh" | "bash" {
  return /^#!.*\bbash\b/.test(text) ? "bash" : "sh";
}

function shellcheck(text: string, shell: "sh" | "bash", name: string, exclude: string[] = []): string {
  const args = [
    "shellcheck",
    "-s",
    shell,
    "-f",
    "gcc",
    ...(exclude.length ? ["-e", exclude.join(",")] : []),
    "-",
  ];
  const r = Bun.spawnSync(args, { stdin: Buffer.from(text), stdout: "pipe", stderr: "pipe" });
  const out = (r.stdout.toString() + r.stderr.toString()).replaceAll("-:", `${name}:`);
  return r.exitCode === 0 ? "" : out || `shellcheck exited ${r.exitCode}`;
}

function haveShellcheck(): boolean {
  if (Bun.spawnSync(["sh", "-c", "command -v shellcheck"]).exitCode === 0) return true;
  if (process.env.AWAITLESS_REQUIRE_ALL === "1") throw new Error("shellcheck is not installed");
  console.warn("[skip] shellcheck not installed (apt-get install shellcheck)");
  return false;
}

const FRAGMENT_TEXTS = new Set(Object.values(FRAGMENTS));

// shellcheck over every shell file takes seconds, more on a busy machine: each test's bound is generous (a bound, not a
// measure)
test("every shell file is shellcheck-clean", () => {
  if (!haveShellcheck()) return;
  const files = shellFiles();
  const names = files.map((p) => relative(ROOT, p));
  // the set is what we think it is: the wrapper, its host programs and fragments, install.sh, CI and test infra
  for (const f of ["install.sh", "src/wrapper/wrapper.sh", "src/wrapper/prelude.sh", ".ci/run"]) {
    expect(names).toContain(f);
  }
  expect(names.filter((n) => n.startsWith("src/wrapper/host/")).length).toBeGreaterThanOrEqual(12);
  const problems: string[] = [];
  for (const p of files) {
    const name = relative(ROOT, p);
    const text = readFileSync(p, "utf8");
    if (FRAGMENT_TEXTS.has(text)) {
      // a fragment sets variables for the programs that include it and reads some that they (or other fragments)
      // set: those are checked with it below, in the assembled programs
      problems.push(shellcheck(text, "sh", name, ["SC2034", "SC2153", "SC2154"]));
    } else if (INCLUDE_RE.test(text)) {
      INCLUDE_RE.lastIndex = 0;
      problems.push(shellcheck(assemble(text), dialect(text), `${name} (assembled)`));
    } else {
      problems.push(shellcheck(text, dialect(text), name));
    }
    INCLUDE_RE.lastIndex = 0;
  }
  expect(problems.filter(Boolean).join("\n")).toBe("");
}, 120_000);

test("launch.sh with the spec function the client generates is shellcheck-clean", () => {
  if (!haveShellcheck()) return;
  const spec = renderSpec({
    jobId: "job_01JD0000000000000000000000",
    cwd: "/tmp",
    argv: ["echo", "a'b", "$HOME"],
    env: { A: "1" },
    timeoutSeconds: 0,
    graceSeconds: 10,
  });
  const launch = `set -- a b c\n${specFunction(spec)}${assemble(HOST_PROGRAM_FILES["launch.sh"])}`;
  const problems = [shellcheck(launch, "sh", "launch.sh with its spec")];
  expect(problems.filter(Boolean).join("\n")).toBe("");
}, 120_000);
