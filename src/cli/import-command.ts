// `awaitless import`: the jobs of an Awaitless 0.8 store (its one-time offer: import-offer.ts).
import { dirname, resolve } from "node:path";
import type { Ctx } from "../context.ts";
import { awaitless08Dirs, find08Store } from "../core/import-08/find-08.ts";
import type { ImportReport } from "../core/import-08/import-08.ts";
import { EXIT } from "../core/model/errors.ts";
import type { CliIo } from "./cli-io.ts";
import { toJson } from "./output.ts";
import { paint, styleFor } from "./render.ts";
import { shown } from "./terminal-safe.ts";

type Opts = Record<string, unknown> & { json?: boolean; from?: string };

function dataDirOf(ctx: Ctx): string {
  return dirname(ctx.store.path);
}

export async function importCommand(
  args: unknown[],
  io: CliIo,
  makeCtx: () => Promise<Ctx>,
): Promise<number> {
  const opts = (args[args.length - 1] ?? {}) as Opts;
  const ctx = await makeCtx();
  const dataDir = dataDirOf(ctx);
  let source: string | null;
  if (opts.from !== undefined) source = resolve(String(opts.from));
  else source = find08Store(awaitless08Dirs(io.env, dataDir));
  if (source === null) {
    const looked = awaitless08Dirs(io.env, dataDir).join(", ");
    const report = {
      source: null,
      imported: 0,
      message: `no Awaitless 0.8 store found (looked in ${looked})`,
    };
    if (opts.json) io.stdout.write(`${toJson(report)}\n`);
    else
      io.stdout.write(`${report.message}; if 0.8 used another data directory: awaitless import --from DIR\n`);
    return EXIT.ok;
  }
  const report = await ctx.import08(source, opts.from !== undefined ? "--from" : "the Awaitless 0.8 store");
  io.stdout.write(opts.json ? `${toJson(report)}\n` : renderImport(report, styleFor(io.stdout, io.env)));
  return EXIT.ok;
}

export function renderImport(r: ImportReport, style: ReturnType<typeof styleFor>): string {
  const lines: string[] = [];
  const states = Object.entries(r.by_state)
    .map(([s, n]) => `${n} ${s}`)
    .join(", ");
  if (r.imported > 0) lines.push(`imported ${r.imported} job(s) from ${shown(r.source)}: ${states}`);
  else lines.push(`nothing new to import from ${shown(r.source)}`);
  if (r.already_imported > 0)
    lines.push(`${r.already_imported} job(s) were imported before (left as they are)`);
  for (const s of r.skipped)
    lines.push(
      `${paint(style, "yellow", "skipped")} ${shown(`${s.job_id} (${s.backend}, ${s.state}): ${s.reason}`)}`,
    );
  if (r.skipped_count > r.skipped.length)
    lines.push(
      `${paint(style, "yellow", "skipped")} ${r.skipped_count - r.skipped.length} more job(s) (--json lists the first ${r.skipped.length})`,
    );
  if (r.watching_count > 0) {
    const more =
      r.watching_count > r.watching.length ? `, and ${r.watching_count - r.watching.length} more` : "";
    lines.push(
      `watching ${r.watching_count} job(s) still running under Awaitless 0.8 until 0.8 records their end: ${r.watching.map((w) => w.job_id).join(", ")}${more}`,
    );
  }
  for (const n of r.notes) lines.push(`${paint(style, "dim", "note:")} ${shown(n)}`);
  if (r.imported > 0) lines.push(`their 0.8 IDs work here: awaitless status ${r.job_ids[0]}`);
  return `${lines.join("\n")}\n`;
}
