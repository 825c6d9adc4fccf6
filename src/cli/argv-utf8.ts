// Arguments that are not valid UTF-8: Bun hands them to us with U+FFFD in place of the bad bytes, which would
// silently change the command; where the raw bytes are readable (Linux: /proc/self/cmdline) they are refused.
import { readFileSync } from "node:fs";
import { invalid } from "../core/model/errors.ts";
import { isUtf8 } from "../core/util/utf8-text.ts";

function splitCmdline(raw: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0) {
      parts.push(raw.subarray(start, i));
      start = i + 1;
    }
  }
  return parts;
}

function readCmdline(): Buffer | undefined {
  try {
    return readFileSync("/proc/self/cmdline");
  } catch {
    return undefined; // not Linux: the replacement characters cannot be told from typed ones
  }
}

/**
 * Throws invalid_argument for the first of `args` (the process's arguments after the program) whose raw bytes
 * are not valid UTF-8. Only arguments holding U+FFFD are looked at; `cmdline` defaults to /proc/self/cmdline.
 */
export function refuseInvalidUtf8(args: string[], cmdline: Buffer | undefined = undefined): void {
  if (!args.some((a) => a.includes("\uFFFD"))) return;
  const raw = cmdline ?? readCmdline();
  if (raw === undefined) return;
  const parts = splitCmdline(raw);
  if (parts.length < args.length) return;
  const mine = parts.slice(parts.length - args.length);
  for (let i = 0; i < args.length; i++) {
    const bytes = mine[i] as Buffer;
    const arg = args[i] as string;
    if (!arg.includes("\uFFFD") || isUtf8(bytes) || bytes.toString("utf8") !== arg) continue;
    throw invalid(
      `argument ${i + 1} (${JSON.stringify(arg)}) is not valid UTF-8 (bytes: ${bytes.toString("hex").replace(/(..)/g, "$1 ").trim()}); awaitless keeps commands as UTF-8 text and would change it`,
      'pass such bytes through a shell inside the job instead, e.g. -- sh -c \'exec mycmd "$(printf "\\377")"\'',
      { argument: i + 1 },
    );
  }
}
