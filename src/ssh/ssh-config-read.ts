// Reading ssh_config files for one alias: Host-block activity, Include (globs, nesting, ~/.ssh or /etc/ssh
// relative paths) and refusing what we will not evaluate (Match). Yields the active lines in order.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  type ConfigLine,
  configError,
  hostLineMatches,
  matchGlob,
  splitConfigLine,
} from "./ssh-config-syntax.ts";

/** Returns a file's text, or undefined when it does not exist. */
export type ReadConfigFile = (path: string) => string | undefined;
/** Expands an absolute glob pattern to the existing paths, sorted. */
export type GlobPaths = (pattern: string) => string[];

export interface ReadContext {
  alias: string;
  home: string;
  readFile: ReadConfigFile;
  glob: GlobPaths;
  /** Files read, in order (for diagnostics). */
  filesRead: string[];
}

const MAX_INCLUDE_DEPTH = 16;

// Active lines of one config file. `userConfig` decides where relative Include paths live
// (~/.ssh for the user's file and -F files, /etc/ssh for the system file), as in OpenSSH.
export function activeLines(
  path: string,
  userConfig: boolean,
  ctx: ReadContext,
  neverMatch = false,
  depth = 0,
): ConfigLine[] {
  const text = ctx.readFile(path);
  if (text === undefined) return [];
  ctx.filesRead.push(path);
  const out: ConfigLine[] = [];
  let active = !neverMatch;
  const lines = text.split("\n");
  for (let n = 0; n < lines.length; n++) {
    const line = splitConfigLine(lines[n] ?? "", { file: path, line: n + 1 });
    if (line === undefined) continue;
    if (line.keyword === "host") {
      active = !neverMatch && hostLineMatches(ctx.alias, line.args);
    } else if (line.keyword === "match") {
      throw configError(
        line,
        `"Match ${line.args.join(" ")}" is not supported (awaitless does not evaluate Match blocks and never runs Match exec)`,
        `Rewrite it as a "Host <patterns>" block, or describe this host under [hosts.${ctx.alias}] in the awaitless config, or set transport = "openssh" for it.`,
      );
    } else if (line.keyword === "include") {
      if (depth >= MAX_INCLUDE_DEPTH) {
        throw configError(
          line,
          `Include nested more than ${MAX_INCLUDE_DEPTH} deep`,
          "Remove the Include loop.",
        );
      }
      for (const arg of line.args) {
        for (const file of ctx.glob(includePath(arg, userConfig, ctx.home))) {
          out.push(...activeLines(file, userConfig, ctx, !active, depth + 1));
        }
      }
    } else if (active) {
      out.push(line);
    }
  }
  return out;
}

function includePath(arg: string, userConfig: boolean, home: string): string {
  if (arg.startsWith("~/")) return join(home, arg.slice(2));
  if (arg.startsWith("/")) return arg;
  return userConfig ? join(home, ".ssh", arg) : join("/etc/ssh", arg);
}

export function readConfigFileFromDisk(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return undefined;
    throw err;
  }
}

// glob(3) as Include uses it: `*`, `?` per path component; a leading dot must be matched explicitly.
export function globFromDisk(pattern: string): string[] {
  const parts = pattern.split("/").filter((p) => p !== "");
  let paths = ["/"];
  for (const part of parts) {
    const next: string[] = [];
    for (const dir of paths) {
      if (!/[*?]/.test(part)) {
        next.push(join(dir, part));
        continue;
      }
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const name of names.sort()) {
        if (name.startsWith(".") && !part.startsWith(".")) continue;
        if (matchGlob(name, part)) next.push(join(dir, name));
      }
    }
    paths = next;
  }
  return /[*?]/.test(pattern) ? paths.filter(isFile) : paths;
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
