// The command scripts run in a loop, `status JOB_ID [--json]`, answered without the command table: building cac's
// table and parsing against it cost a quick command about 3 ms of CPU, a sixth of a `status` (docs/performance.md).
// Only these exact words take this path: `status`, one job ID (a full ID, a prefix, an array's ID or a task address
// ARRAY.N, resolved as the table resolves it) and at most `--json`, in either order. Anything else, another option,
// `--last`, `--help`, a second word, goes to the table (cli.ts), which parses, checks and explains it. The action, the
// context and the error report are the table's own (commands.ts, session.ts).
import type { Ctx } from "../context.ts";
import type { CliIo } from "./cli-io.ts";
import { COMMANDS } from "./commands.ts";
import { styleFor } from "./render.ts";
import { cliSession, reportError } from "./session.ts";

/** The job ID and output form when `argv` is exactly `status ID [--json]` (or `status --json ID`), else undefined. */
export function directStatus(argv: readonly string[]): { id: string; json: boolean } | undefined {
  if (argv[0] !== "status" || argv.length < 2 || argv.length > 3) return undefined;
  // at most two words after `status`: one left once `--json` is taken out is the ID
  const words = argv.slice(1).filter((w) => w !== "--json");
  if (words.length !== 1) return undefined;
  const id = words[0]!;
  return id === "" || id.startsWith("-") ? undefined : { id, json: argv.includes("--json") };
}

/** Runs `status ID [--json]` as the table would: same context, same action, same error report and notices. */
export async function runDirectStatus(
  given: { id: string; json: boolean },
  io: CliIo,
  makeCtx: () => Promise<Ctx>,
): Promise<number> {
  const session = cliSession(() => "status", io, makeCtx);
  const style = styleFor(io.stderr, io.env);
  let code: number;
  try {
    const { arrays } = await session.ctx();
    const id = arrays.resolve(given.id).id;
    code = await COMMANDS.status!([id, { "--": [], json: given.json }], io, session.ctx);
  } catch (e) {
    code = reportError(e, io, given.json, style);
  }
  session.notices(style);
  return code;
}
