// Compiles the CLI + MCP server + backends + embedded wrapper into one standalone executable.
// ssh2's optional native addons stay external: Bun cannot load them, and embedding them would make
// every start extract them into $TMPDIR (see docs/architecture.md). The executable reads no .env or
// bunfig.toml from the directory it runs in (a job would inherit a project's .env; a bunfig could
// change the runtime), and starts with the JIT 16× more reluctant to compile: most of what a command
// runs, runs once (a quarter less CPU for a start; hot loops of a long scan or server still compile). The bundle is
// split into chunks (ESM, embedded in the one executable): the entry answers --version without evaluating the rest,
// and each command evaluates the chunks it imports; two MCP SDK modules a stdio server never uses load on first use.
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { sdkDeferred } from "./sdk-deferred.ts";

const root = join(import.meta.dir, "..");
const target = process.argv.find((a) => a.startsWith("--target="))?.slice("--target=".length);
const outfile =
  process.argv.find((a) => a.startsWith("--outfile="))?.slice("--outfile=".length) ??
  join(root, "dist", "awaitless");

mkdirSync(join(root, "dist"), { recursive: true });
await compile();
chmodSync(outfile, 0o755);

/** The one executable (the same options as `bun build --compile --minify --bytecode --format=esm --splitting
 * --no-compile-autoload-dotenv --no-compile-autoload-bunfig --compile-jit-policy=16 --external cpu-features
 * --external '*.node'`), with the MCP SDK's modules a stdio server never uses deferred (build/sdk-deferred.ts). */
async function compile(): Promise<void> {
  const deferred = sdkDeferred();
  const result = await Bun.build({
    entrypoints: [join(root, "src", "main.ts")],
    target: "bun",
    compile: {
      outfile,
      ...(target ? { target: target as Bun.Build.CompileTarget } : {}),
      autoloadDotenv: false,
      autoloadBunfig: false,
      jitPolicy: 16,
    },
    minify: true,
    bytecode: true,
    format: "esm",
    splitting: true,
    external: ["cpu-features", "*.node"],
    plugins: [deferred.plugin],
    throw: false,
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    console.error(`build failed (${outfile})`);
    process.exit(1);
  }
  deferred.check();
}
