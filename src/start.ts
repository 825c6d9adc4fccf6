// Composition root: argv → CLI or MCP; loads config, opens the store, builds the backends on demand (main.ts, the
// entry, has answered the version and mapped Awaitless 0.8's server names to `mcp`).
import { refuseInvalidUtf8 } from "./cli/argv-utf8.ts";
import type { Ctx } from "./context.ts";
import { stderrWriter, stdoutWriter } from "./stdio-writer.ts";

// The CLI writes fd 1 and 2 synchronously: when the process exits, the reader has every byte, however slow it is.
const stderr = stderrWriter();
const stdout = stdoutWriter(stderr);

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

async function main(argv: string[], args: string[]): Promise<number> {
  const io = { stdout, stderr, env: process.env };
  try {
    refuseInvalidUtf8(args);
  } catch (e) {
    const { reportError } = await import("./cli/session.ts");
    const { styleFor } = await import("./cli/render.ts");
    return reportError(e, io, args.includes("--json"), styleFor(stderr, process.env));
  }
  // `status ID [--json]`, the command scripts loop on, skips the command table (cli/direct.ts)
  const { directStatus, runDirectStatus } = await import("./cli/direct.ts");
  const direct = directStatus(argv);
  if (direct) return runDirectStatus(direct, io, () => makeCtx(undefined));
  const { runCli } = await import("./cli/cli.ts");
  return runCli(argv, io, () => makeCtx(configFlag(argv)));
}

/** Runs `argv` (the words as main.ts mapped them; `args`: as given, for the UTF-8 check) and exits with its code. */
export function start(argv: string[], args: string[]): void {
  main(argv, args).then(
    (code) => process.exit(code),
    (e) => {
      stderr.write(`awaitless: internal error: ${(e as Error)?.stack ?? e}\n`);
      process.exit(1);
    },
  );
}
