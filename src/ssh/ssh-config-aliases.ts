// The host aliases an ssh_config names (Host lines without patterns, Include followed), for shell completion.
import { join } from "node:path";
import { globFromDisk, readConfigFileFromDisk } from "./ssh-config-read.ts";
import { splitConfigLine } from "./ssh-config-syntax.ts";

const MAX_DEPTH = 16;

/** Aliases from `~/.ssh/config` and the files it Includes, in file order, without `*`/`?` patterns or `!` negations. */
export function sshHostAliases(home: string, path = join(home, ".ssh", "config"), depth = 0): string[] {
  let text: string | undefined;
  try {
    text = readConfigFileFromDisk(path);
  } catch {
    return [];
  }
  if (text === undefined || depth > MAX_DEPTH) return [];
  const out: string[] = [];
  text.split("\n").forEach((raw, n) => {
    let line: ReturnType<typeof splitConfigLine>;
    try {
      line = splitConfigLine(raw, { file: path, line: n + 1 });
    } catch {
      return;
    }
    if (line?.keyword === "host") out.push(...line.args.filter((a) => !/[*?!]/.test(a)));
    if (line?.keyword === "include") {
      for (const arg of line.args) {
        const abs = arg.startsWith("~/")
          ? join(home, arg.slice(2))
          : arg.startsWith("/")
            ? arg
            : join(home, ".ssh", arg);
        for (const file of globFromDisk(abs)) out.push(...sshHostAliases(home, file, depth + 1));
      }
    }
  });
  return [...new Set(out)];
}
