// The sandbox a doc example runs in: stand-ins, tools on PATH, the placeholder lookup, jobs left over.
import { chmodSync, cpSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, ROOT, type Sandbox } from "../helpers/cli.ts";

export const PRELUDE = `set -e -o pipefail
PS4='+ '
AWL_WORK=$PWD
# awl_job last | N: the newest job of this sandbox, or its Nth (oldest first); with none yet, a stand-in
awl_job() {
  { local was=$- ids; set +x; } 2>/dev/null
  ids=$(awaitless list --limit 10000 2>/dev/null | awk 'NR > 1 { print $1 }')
  if [ -z "$ids" ]; then ids=$(awaitless submit --name doc-stand-in --cwd "$AWL_WORK" -- ./bench.sh 2>/dev/null); fi
  if [ "$1" = last ]; then printf '%s\\n' "$ids" | head -n 1; else printf '%s\\n' "$ids" | tac | sed -n "$1p"; fi
  case $was in *x*) set -x ;; esac
}
set -x`;

/** Placeholder job IDs become the sandbox's real ones, looked up when their line runs. */
export function substitute(cmds: string): string {
  return cmds
    .replace(/\bjob_[0-9A-Za-z]*…/g, '"$(awl_job last)"')
    .replace(/\bjob_([A-Z])\b/g, (_, l: string) => `"$(awl_job ${l.charCodeAt(0) - 64})"`);
}

export function standIns(sb: Sandbox): void {
  const script = (name: string, body: string) => {
    writeFileSync(join(sb.work, name), body);
    chmodSync(join(sb.work, name), 0o755);
  };
  const results = `mkdir -p results && echo '{"latency_us": 42, "correct": true}' > results/benchmark.json\n`;
  script("bench.sh", `#!/bin/sh\n${results}echo "bench.sh stand-in: $*"\n`);
  script("train.sh", '#!/bin/sh\necho "train.sh stand-in: $*"\n');
  writeFileSync(join(sb.work, "Makefile"), "test:\n\t@echo 'make test stand-in: ok'\n");
  for (const py of ["train.py", "eval.py"]) {
    writeFileSync(join(sb.work, py), `import sys\nprint("${py} stand-in:", *sys.argv[1:])\n`);
  }
  cpSync(join(ROOT, "install.sh"), join(sb.work, "install.sh"));
  mkdirSync(join(sb.work, "dist"));
  symlinkSync(BINARY, join(sb.work, "dist", "awaitless"));
  cpSync(join(ROOT, "test", "fixtures", "awaitless-08", "data"), join(sb.root, "old-awaitless-data"), {
    recursive: true,
  });
}

/** `python` and `make` on PATH: this machine's own (found outside the sandbox), else stand-ins. */
export function linkTools(bin: string): void {
  const python =
    found(["python3", "-c", "import sys; print(sys.executable)"]) ||
    found(["python", "-c", "import sys; print(sys.executable)"]);
  const make = found(["sh", "-c", "command -v make"]);
  for (const [name, exe] of [
    ["python", python],
    ["make", make],
  ] as const) {
    if (exe) symlinkSync(exe, join(bin, name));
    else {
      writeFileSync(join(bin, name), `#!/bin/sh\necho "${name} stand-in: $*"\n`);
      chmodSync(join(bin, name), 0o755);
    }
  }
}

/** `jq` on PATH (when installed) refuses to print null: a doc's `| jq .field` must name a field the answer has. */
export function jqShim(bin: string): void {
  const jq = found(["sh", "-c", "command -v jq"]);
  if (!jq) return;
  const shim = `#!/bin/sh
out=$("${jq}" "$@") || exit $?
printf '%s\\n' "$out"
if printf '%s\\n' "$out" | grep -qx null; then
  echo "doc example: jq printed null: the answer has no such field" >&2
  exit 1
fi
`;
  writeFileSync(join(bin, "jq"), shim);
  chmodSync(join(bin, "jq"), 0o755);
}

export function found(argv: string[]): string {
  try {
    const r = Bun.spawnSync(argv, { stdout: "pipe", stderr: "ignore" });
    return r.exitCode === 0 ? r.stdout.toString().trim() : "";
  } catch {
    return "";
  }
}

export function cancelActive(sb: Sandbox): void {
  const r = sb.run(["list", "--state", "active", "--json", "--limit", "10000"]);
  for (const j of r.json?.jobs ?? []) sb.run(["cancel", j.job_id, "--grace-period", "1s"]);
}
