// `mcp-config --npx`: an entry that starts the server with `npx -y awaitless mcp …` (the npm package) rather than by
// this binary's path; and the note for a binary that itself runs from npx's cache, which npm may clear.

/** What starts the server: a command and the words before `mcp …`. */
export interface Launcher {
  command: string;
  args: string[];
}

/** The npm package through npx: fetched on first use, then from npx's cache; `-y` answers npx's install prompt. */
export const NPX_LAUNCHER: Launcher = { command: "npx", args: ["-y", "awaitless"] };

/**
 * The entry started by the launcher: its command, then its words, then the server's arguments; for an entry whose
 * command is one argv array (opencode's), the same inside that array.
 */
export function launched<T extends { command: string | string[]; args?: string[] }>(
  entry: T,
  launcher: Launcher | undefined,
): T {
  if (!launcher) return entry;
  if (Array.isArray(entry.command))
    return { ...entry, command: [launcher.command, ...launcher.args, ...entry.command.slice(1)] };
  return { ...entry, command: launcher.command, args: [...launcher.args, ...(entry.args ?? [])] };
}

/** The command line an entry runs, words joined by spaces (for a message, not a shell). */
export function commandLine(entry: { command: string | string[]; args?: string[] }): string {
  return (Array.isArray(entry.command) ? entry.command : [entry.command, ...(entry.args ?? [])]).join(" ");
}

/** npm's cache for `npx` (`~/.npm/_npx/<hash>/node_modules/…`): a binary there is gone after `npm cache clean`. */
export function npxCacheNote(binary: string): string | undefined {
  if (!/\/_npx\/[^/]+\/node_modules\//.test(binary)) return undefined;
  return `note: this awaitless runs from npx's cache (${binary}), which npm may clear; --npx writes an entry that starts it with npx -y awaitless instead\n`;
}
