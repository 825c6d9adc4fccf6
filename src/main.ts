// Composition root: argv → CLI or MCP; loads config, opens the store, builds the backends on demand.
import { refuseInvalidUtf8 } from "./cli/argv-utf8.ts";
import type { Ctx } from "./context.ts";
import { stderrWriter, stdoutWriter } from "./stdio-writer.ts";
import { VERSION } from "./version.ts";

// The CLI writes fd 1 and 2 synchronously: when the process exits, the reader has every byte, however slow it is.
const stderr = stderrWriter();
const stdout = stdoutWriter(stderr);

const MCP_NAMES = ["awaitless-mcp", "awaitless-runner"];
let noticed = false;

async function makeCtx(configFlag: string | undefined): Promise<Ctx> {
  const { createContext } = await import("./context.ts");
  const ctx = createContext(process.env, configFlag);
  // One notice per process about 0.8 names in the config, on stderr (never in --json or MCP stdout).
  if (!noticed) {
    noticed = true;
    const { legacyNotice } = await import("./config/config-legacy.ts");
    const notice = legacyNotice(ctx.config.path, ctx.config.legacyNotes);
    if (notice) stderr.write(notice);
  }
  return ctx;
}

function configFlag(argv: string[]): string | undefined {
  const i = argv.indexOf("--config");
  const end = argv.indexOf("--");
  if (i >= 0 && (end < 0 || i < end)) return argv[i + 1];
  const eq = argv.find((a, j) => a.startsWith("--config=") && (end < 0 || j < end));
  return eq?.slice("--config=".length);
}

async function main(): Promise<number> {
  const invokedAs = (process.argv[1] ?? "").split("/").pop() ?? "";
  const args = process.argv.slice(2);
  // The binary installed (or linked) as `awaitless-mcp` or `awaitless-runner` (Awaitless 0.8's two names for its
  // stdio server) serves MCP when given no command (options only, e.g. `--config FILE`); a command still runs as
  // a command (`awaitless-mcp gc`: the automatic gc starts the binary it runs as).
  const asMcp = MCP_NAMES.some((name) => invokedAs === name || process.argv0.endsWith(name));
  const argv = asMcp && (args.length === 0 || args[0]!.startsWith("-")) ? ["mcp", ...args] : args;
  const io = { stdout, stderr, env: process.env };
  // The version alone is answered before the CLI (its command table and every action's module) is loaded.
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V" || argv[0] === "version")) {
    stdout.write(`awaitless ${VERSION}\n`);
    return 0;
  }
  const { reportError, runCli } = await import("./cli/cli.ts");
  try {
    refuseInvalidUtf8(args);
  } catch (e) {
    const { styleFor } = await import("./cli/render.ts");
    return reportError(e, io, args.includes("--json"), styleFor(stderr, process.env));
  }
  return runCli(argv, io, () => makeCtx(configFlag(argv)));
}

main().then(
  (code) => process.exit(code),
  (e) => {
    stderr.write(`awaitless: internal error: ${(e as Error)?.stack ?? e}\n`);
    process.exit(1);
  },
);
