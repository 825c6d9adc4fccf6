// Where an Awaitless 0.8 store is found for this environment, and the mark of one imported: what every command's
// offer to import needs, without the import's own modules (import-08.ts, store-08.ts).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { classifyDb, LEGACY_FILE } from "../store/store-file.ts";

/** The store meta key set when an 0.8 store's jobs were imported. */
export const IMPORTED_META = "awaitless08_imported_at";

/** 0.8's data directories for this environment: ours (same layout), then 0.8's own default. */
export function awaitless08Dirs(env: Record<string, string | undefined>, ourDataDir: string): string[] {
  const home = env.HOME || "";
  const own = env.AWAITLESS_DATA_DIR || join(home, ".local", "share", "awaitless");
  return [...new Set([ourDataDir, own])];
}

/** The first of `dirs` holding an 0.8 database, or null. */
export function find08Store(dirs: string[]): string | null {
  for (const d of dirs) if (classifyDb(join(d, LEGACY_FILE)) === "awaitless-0.8") return d;
  return null;
}

/** Whether any of `dirs` holds a file by 0.8's database name: one stat each, before anything is opened or queried. */
export function any08File(dirs: string[]): boolean {
  return dirs.some((d) => existsSync(join(d, LEGACY_FILE)));
}
