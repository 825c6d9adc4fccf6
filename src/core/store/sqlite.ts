// The only importer of bun:sqlite: the store's database type, and opening a SQLite file that the store does not own.
import { constants, Database, type SQLQueryBindings } from "bun:sqlite";

export { constants, Database, type SQLQueryBindings };

/**
 * Opens a SQLite file that this module does not own: "immutable" reads without locks, journals or writes
 * (a file another program keeps, e.g. Awaitless 0.8's); "readwrite" never creates it.
 */
export function openSqlite(path: string, mode: "immutable" | "readwrite"): Database {
  if (mode === "readwrite") return new Database(path, { create: false, readwrite: true, strict: true });
  const uri = `file:${encodeURI(path).replace(/[?#]/g, encodeURIComponent)}?immutable=1`;
  return new Database(uri, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI);
}
