// Peak memory of `awaitless import` against the number of rows in the 0.8 store: generated stores of 1 k, 100 k and
// 3 M rows (0.8's schema, real tables) in which 1 % are finished local jobs (imported with their directories),
// 3 % are local jobs 0.8 still runs (imported, watched) and the rest SSH jobs still running there (typed, then
// skipped): every row is read and typed, and the report stays bounded. Prints wall time and peak RSS per size, and
// the ratio of each peak to the 1 k store's in the same run (bounded memory: close to 1).
// Usage: bun run build && bun bench/import-memory.ts [--max 3000000]   (writes and deletes a few GB of temp files)
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { schema08 } from "../test/helpers/store08.ts";

const BIN = join(import.meta.dir, "..", "dist", "awaitless");
const i = process.argv.indexOf("--max");
const max = i >= 0 ? Number(process.argv[i + 1]) : 3_000_000;
const sizes = [1_000, 100_000, max].filter((n, k, all) => n <= max && all.indexOf(n) === k);

function build(dir: string, rows: number): void {
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, "awaitless.db"), { create: true });
  for (const s of schema08()) db.exec(s);
  db.exec("PRAGMA journal_mode = OFF");
  db.exec("PRAGMA synchronous = OFF");
  // 1 % finished local, 3 % running local, the rest running on an SSH host
  db.exec(`
    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ${rows})
    INSERT INTO jobs (job_id, name, backend, host, command_json, cwd, env_json, state, created_at, started_at,
      finished_at, exit_code, job_dir, stdout_path, stderr_path, artifacts_json, updated_at)
    SELECT printf('job_%012X%010X', 1700000000000 + i, i), 'bench', CASE WHEN i % 100 < 4 THEN 'local' ELSE 'ssh' END,
      CASE WHEN i % 100 < 4 THEN NULL ELSE 'cluster' END, '["sh","-c","echo hello; sleep 1"]', '/tmp',
      '{"A":"1"}', CASE WHEN i % 100 = 0 THEN 'succeeded' ELSE 'running' END, '2026-01-01T00:00:00Z',
      '2026-01-01T00:00:01Z', CASE WHEN i % 100 = 0 THEN '2026-01-01T00:00:02Z' END,
      CASE WHEN i % 100 = 0 THEN 0 END, '/nowhere', '/nowhere/stdout.log', '/nowhere/stderr.log', '[]', 'x'
    FROM n`);
  db.close();
}

const rows: { rows: number; seconds: number; rssMiB: number; imported: string }[] = [];
for (const n of sizes) {
  const work = mkdtempSync(join(tmpdir(), "awl-bench-import-"));
  try {
    build(join(work, "from"), n);
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: work,
      AWAITLESS_DATA_DIR: join(work, "data"),
      XDG_CONFIG_HOME: join(work, "config"),
    };
    const t0 = performance.now();
    const p = Bun.spawnSync(
      ["/usr/bin/time", "-f", "@rss %M", BIN, "import", "--from", join(work, "from"), "--json"],
      { env, stdout: "pipe", stderr: "pipe" },
    );
    const seconds = (performance.now() - t0) / 1000;
    const rss = Number(/@rss (\d+)/.exec(p.stderr.toString())?.[1] ?? Number.NaN) / 1024;
    const r = JSON.parse(p.stdout.toString() || "{}") as {
      imported?: number;
      watching_count?: number;
      skipped_count?: number;
    };
    if (p.exitCode !== 0) throw new Error(`import of ${n} rows failed: ${p.stderr.toString().slice(0, 500)}`);
    rows.push({
      rows: n,
      seconds,
      rssMiB: rss,
      imported: `${r.imported} finished, ${r.watching_count} watched, ${r.skipped_count} skipped`,
    });
    console.log(
      `${n} rows: ${seconds.toFixed(1)} s, peak RSS ${rss.toFixed(0)} MiB (${rows.at(-1)?.imported})`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
const base = rows[0]?.rssMiB ?? Number.NaN;
console.log(
  "\n| rows in the 0.8 store | import wall time | peak RSS | peak / 1 k rows' peak |\n|---|---|---|---|",
);
for (const r of rows)
  console.log(
    `| ${r.rows.toLocaleString("en")} | ${r.seconds.toFixed(1)} s | ${r.rssMiB.toFixed(0)} MiB | ${(r.rssMiB / base).toFixed(2)} |`,
  );
