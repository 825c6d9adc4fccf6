// Generated hostile Awaitless 0.8 stores (seeded): rows whose every column may be a path, a link target, the wrong
// type, too long or too deep, and a jobs/ tree with links, FIFOs, hard links and directories where logs should be.
// Used by the fuzz test (a few stores) and bench/import-fuzz.ts (many). Canaries and victims live in the sandbox.
import { existsSync, linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { prng } from "./prng.ts";
import { id08, type Row08, row08, write08Store } from "./store08.ts";

export const CANARY = "CANARY-7f3a9c";

/** Files outside the data directory that a hostile store tries to read, overwrite or delete. */
export function plantVictims(root: string): { secret: string; victimDir: string } {
  const secret = join(root, "home", ".ssh", "id_canary");
  mkdirSync(join(root, "home", ".ssh"), { recursive: true, mode: 0o700 });
  writeFileSync(secret, `${CANARY} private key\n`, { mode: 0o600 });
  const victimDir = join(root, "home", "important");
  mkdirSync(victimDir, { recursive: true });
  writeFileSync(join(victimDir, "thesis.tex"), `${CANARY} years of work\n`);
  return { secret, victimDir };
}

/** Writes a hostile 0.8 store into `from` (seeded by `seed`); `root` holds the victims. */
export function writeHostileStore(from: string, root: string, seed: number): void {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const chance = (p: number) => rand() < p;
  const { secret, victimDir } = plantVictims(root);
  const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
  const escapes = ["\x1b]52;c;Y2FuYXJ5\x07", "\x1b]0;owned\x07", "\x1b[2J", "\u202e", "\x9b31m", "\x00"];
  const paths = [
    "../../home/important",
    "../../../../../../../../../home/important",
    `${victimDir}`,
    `${secret}`,
    "/etc/passwd",
    "~/.ssh/id_canary",
    "",
    "jobs/../../home/important",
  ];
  const ids: string[] = [];
  const rows: Row08[] = [];
  const events: Row08[] = [];
  const snapshots: Row08[] = [];
  const count = 1 + Math.floor(rand() * 8);
  for (let i = 0; i < count; i++) {
    const good = id08(rand);
    const job_id = chance(0.6)
      ? good
      : pick<unknown>([
          `${good}/../../../home/important`,
          pick(paths),
          `job_${"A".repeat(10_000)}`,
          `${good}\x00`,
          12345,
          new Uint8Array([1, 2, 3]),
          good.toLowerCase(),
          ids[0] ?? good,
        ]);
    if (typeof job_id === "string") ids.push(job_id);
    const over: Row08 = { job_id };
    if (chance(0.3)) over.stdout_path = pick(paths);
    if (chance(0.3)) over.stderr_path = pick(paths);
    if (chance(0.3)) over.job_dir = pick(paths);
    if (chance(0.2))
      over.command_json = pick([
        '{"not":"an array"}',
        "[1,2]",
        "not json",
        deep(100_000),
        "[]",
        JSON.stringify(["x".repeat(2 << 20)]),
      ]);
    if (chance(0.2))
      over.artifacts_json = pick([
        deep(50_000),
        '{"a":1}',
        JSON.stringify(Array(5000).fill("x")),
        JSON.stringify([pick(paths)]),
      ]);
    if (chance(0.2)) over.env_json = pick(["[]", '{"A":1}', '{"../x":"y"}', deep(1000)]);
    if (chance(0.2))
      over.state = pick(["running", "queued", "pending", "stalled", "weird", "failed", "cancelled", ""]);
    if (chance(0.15)) over.backend = pick(["ssh", "slurm", "nope", ""]);
    if (chance(0.15)) over.host = pick(["host", `evil${pick(escapes)}`, null]);
    if (chance(0.15)) over.created_at = pick(["yesterday", 5, ""]);
    if (chance(0.15)) over.finished_at = pick([null, "never", "2026-01-01T00:00:00Z"]);
    if (chance(0.15)) over.exit_code = pick<unknown>(["3", 2 ** 40, 1.5, -1]);
    if (chance(0.15)) over.pid = pick<unknown>([1, 0, -1, 2 ** 40, "123"]);
    if (chance(0.2)) over.name = pick(escapes.map((e) => `name${e}`).concat(["x".repeat(10_000)]));
    if (chance(0.2)) over.cwd = pick([`/tmp${pick(escapes)}`, "x".repeat(100_000)]);
    if (chance(0.1)) over.error = "e".repeat(200_000);
    rows.push(row08(from, over));
    if (typeof job_id === "string" && chance(0.5)) {
      const n = chance(0.1) ? 1500 : 3;
      for (let k = 0; k < n; k++)
        events.push({
          job_id,
          state: k === n - 1 ? "succeeded" : pick(["starting", "running", "x"]),
          occurred_at: "2026-01-01T00:00:00Z",
          detail: chance(0.1) ? "d".repeat(10_000) : null,
        });
    }
    if (typeof job_id === "string" && chance(0.5)) {
      const snap = pick([
        deep(100_000),
        "not json",
        "[]",
        JSON.stringify({
          stdout_tail: `tail ${pick(escapes)}`,
          artifacts: [{ path: `f${pick(escapes)}`, exists: true, content: JSON.parse(deep(30)) }],
        }),
        JSON.stringify({ artifacts: "nope" }),
        JSON.stringify({ stdout_tail: "x".repeat(100_000) }),
      ]);
      snapshots.push({
        job_id,
        captured_at: "2026-01-01T00:00:00Z",
        result_json: snap,
        result_sha256: "0",
        size_bytes: snap.length,
      });
    }
    if (typeof job_id === "string" && /^job_[0-9A-F]{22}$/.test(job_id))
      plantJobFiles(from, job_id, secret, victimDir, pick, chance);
  }
  const unique = new Map<string, Row08>();
  for (const r of rows) {
    const key = r.job_id instanceof Uint8Array ? `blob:${[...r.job_id].join(",")}` : String(r.job_id);
    if (!unique.has(key)) unique.set(key, r); // the table's primary key
  }
  write08Store(from, [...unique.values()], {
    preSql: ["DROP INDEX state_events_terminal_job_idx"],
    events,
    snapshots: [...new Map(snapshots.map((s) => [s.job_id, s])).values()],
  });
}

/** What `<from>/jobs/<ID>/` holds: logs, or links/FIFOs/hard links/directories in their place. */
function plantJobFiles(
  from: string,
  id: string,
  secret: string,
  victimDir: string,
  pick: <T>(xs: readonly T[]) => T,
  chance: (p: number) => boolean,
): void {
  const dir = join(from, "jobs", id);
  if (existsSync(dir)) return; // a duplicated ID: planted once
  if (chance(0.1)) {
    mkdirSync(join(from, "jobs"), { recursive: true });
    try {
      symlinkSync(victimDir, dir);
    } catch {}
    return;
  }
  mkdirSync(dir, { recursive: true });
  for (const stream of ["stdout.log", "stderr.log"]) {
    const p = join(dir, stream);
    switch (pick(["plain", "plain", "link", "hardlink", "fifo", "dir", "none"] as const)) {
      case "plain":
        writeFileSync(p, `${stream} of ${id}\n`);
        break;
      case "link":
        symlinkSync(secret, p);
        break;
      case "hardlink":
        try {
          linkSync(secret, p);
        } catch {}
        break;
      case "fifo":
        Bun.spawnSync(["mkfifo", p]);
        break;
      case "dir":
        mkdirSync(p);
        break;
      case "none":
        break;
    }
  }
}
