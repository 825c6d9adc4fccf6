// How many bytes a directory holds (gc's store quota, doctor's data directory line).
import { type Dirent, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** Apparent size of every file under `dir` (symlinks counted as themselves, never followed); 0 when it is gone. */
export function directoryBytes(dir: string): number {
  let total = 0;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) total += directoryBytes(path);
    else {
      try {
        total += lstatSync(path).size;
      } catch {}
    }
  }
  return total;
}
