// The one-time notice that offers `awaitless import` when an Awaitless 0.8 store is found beside ours: a command that
// opens the store loads it only when a file by 0.8's database name is there (the store's near08), and it loads only
// the look-up (core/import-08/find-08.ts), not the import.
import { dirname } from "node:path";
import type { Ctx } from "../context.ts";
import { awaitless08Dirs, find08Store, IMPORTED_META } from "../core/import-08/find-08.ts";
import type { CliIo } from "./cli-io.ts";
import { paint, styleFor } from "./render.ts";

/** store_meta key: the first-run notice about an 0.8 store was shown (it is shown once per store). */
const NOTICED_META = "awaitless08_noticed_at";

/**
 * Once per store, on stderr: an 0.8 store is here and has not been imported. Never on stdout (where --json
 * output goes); silent once `awaitless import` ran or the notice was shown.
 */
export function offerImport(ctx: Ctx, io: CliIo): void {
  const store = ctx.store;
  try {
    if (store.meta(IMPORTED_META) !== undefined || store.meta(NOTICED_META) !== undefined) return;
    const source = find08Store(awaitless08Dirs(io.env, dirname(store.path)));
    if (source === null) return;
    store.setMeta(NOTICED_META, new Date().toISOString());
    const style = styleFor(io.stderr, io.env);
    io.stderr.write(
      `${paint(style, "dim", "notice:")} an Awaitless 0.8 store is in ${source} (left untouched); bring its jobs here with: awaitless import\n`,
    );
  } catch {
    // the offer is a courtesy: it never fails a command
  }
}
