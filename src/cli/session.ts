// What every CLI command shares around its action, whether the command table (cli.ts) or the direct path (direct.ts)
// dispatched it: one context per invocation, opened on first use (with the offer to import an Awaitless 0.8 store
// found beside ours), an error reported once in the shape the output asked for, and what the store could not keep
// said once after the output. Nothing here loads the command table.
import type { Ctx } from "../context.ts";
import { AwaitlessError } from "../core/model/errors.ts";
import { noSpaceFromErrno } from "../core/util/no-space.ts";
import type { CliIo } from "./cli-io.ts";
import { paint, type Style } from "./render.ts";
import { shownLines } from "./terminal-safe.ts";

/** Commands that never offer the import: `import` itself, and the MCP server (its stderr is the client's log). */
const QUIET = new Set(["import", "mcp"]);

export type CliSession = {
  /** The invocation's context, opened on the first call. */
  ctx: () => Promise<Ctx>;
  /** Writes what was observed but could not be stored (a full disk), once, after the output. */
  notices: (style: Style) => void;
};

export function cliSession(command: () => string, io: CliIo, makeCtx: () => Promise<Ctx>): CliSession {
  let opening: Promise<Ctx> | undefined;
  let opened: Ctx | undefined;
  return {
    ctx: () => {
      opening ??= makeCtx().then(async (c) => {
        opened = c;
        if (!QUIET.has(command()) && c.store.near08(io.env)) {
          const { offerImport } = await import("./import-offer.ts");
          offerImport(c, io);
        }
        return c;
      });
      return opening;
    },
    notices: (style) => {
      for (const notice of opened?.service.storeNotices() ?? [])
        io.stderr.write(`${paint(style, "yellow", "warning:")} ${shownLines(notice)}\n`);
    },
  };
}

/** Reports `e` on stderr (and as `{"error":…}` on stdout with --json); returns the exit code it maps to. */
export function reportError(e: unknown, io: CliIo, json: boolean, style: Style): number {
  const err =
    e instanceof AwaitlessError
      ? e
      : noSpaceFromErrno(e)
        ? noSpaceFromErrno(e)!
        : (e as { name?: string })?.name === "CACError"
          ? new AwaitlessError(
              "invalid_argument",
              (e as Error).message,
              "run `awaitless <command> --help` for its options",
            )
          : new AwaitlessError(
              "internal",
              String((e as Error)?.stack ?? e),
              "this is a bug: please report it with the command you ran",
            );
  if (json) io.stdout.write(JSON.stringify({ error: err.toJSON() }) + "\n");
  io.stderr.write(
    `${paint(style, "red", "error:")} ${shownLines(err.message)}\n${paint(style, "dim", "hint:")} ${shownLines(err.hint)}\n`,
  );
  return err.exitCode;
}
