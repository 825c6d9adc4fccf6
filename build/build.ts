// Compiles the CLI + MCP server + backends + embedded wrapper into one standalone executable.
// ssh2's optional native addons stay external: Bun cannot load them, and embedding them would make
// every start extract them into $TMPDIR (see docs/architecture.md). The executable reads no .env or
// bunfig.toml from the directory it runs in (a job would inherit a project's .env; a bunfig could
// change the runtime), and starts with the JIT 16× more reluctant to compile: most of what a command
// runs, runs once (a quarter less CPU for a start; hot loops of a long scan or server still compile). The bundle is
// split into chunks (ESM, embedded in the one executable): the entry answers --version without evaluating the rest,
// and each command evaluates the chunks it imports.
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const target = process.argv.find((a) => a.startsWith("--target="))?.slice("--target=".length);
const outfile =
  process.argv.find((a) => a.startsWith("--outfile="))?.slice("--outfile=".length) ??
  join(root, "dist", "awaitless");

mkdirSync(join(root, "dist"), { recursive: true });
const args = [
  "build",
  "--compile",
  "--minify",
  "--bytecode",
  "--format=esm",
  "--splitting",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  "--compile-jit-policy=16",
  "--external",
  "cpu-features",
  "--external",
  "*.node",
  ...(target ? [`--target=${target}`] : []),
  join(root, "src", "main.ts"),
  "--outfile",
  outfile,
];
const proc = Bun.spawnSync([process.execPath, ...args], { cwd: root, stdout: "inherit", stderr: "inherit" });
if (proc.exitCode !== 0) {
  console.error(`build failed (bun ${args.join(" ")})`);
  process.exit(proc.exitCode ?? 1);
}
chmodSync(outfile, 0o755);
