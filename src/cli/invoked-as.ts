// The name to print in "Try: …" hints: `awaitless` when PATH finds this very binary, else the path it was run by.
import { realpathSync, statSync } from "node:fs";
import { basename, delimiter, join } from "node:path";
import { selfArgv } from "../self.ts";
import { launchesThis } from "./npm-launcher.ts";
import { shellWord } from "./render.ts";

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function sameFile(a: string, b: string): boolean {
  return isFile(a) && realpathSync(a) === realpathSync(b);
}

/**
 * `awaitless` (or the link name it was run as) when a PATH lookup of that name reaches this binary;
 * otherwise the path as typed (`./dist/awaitless`, valid from the directory the user is in) or, when it
 * was found through PATH under another file, the absolute path.
 */
export function invokedName(
  env: Record<string, string | undefined>,
  argv0: string = process.argv0,
  self: string[] = selfArgv(),
): string {
  if (self.length > 1) return self.map(shellWord).join(" ");
  const exec = self[0]!;
  const dirs = (env.PATH ?? "").split(delimiter).filter((d) => d.startsWith("/"));
  for (const name of new Set(["awaitless", basename(argv0)])) {
    // The first hit is the one the shell runs.
    const found = dirs.map((d) => join(d, name)).find(isFile);
    if (found && (sameFile(found, exec) || launchesThis(found, exec))) return name;
  }
  return shellWord(argv0.includes("/") && sameFile(argv0, exec) ? argv0 : exec);
}
