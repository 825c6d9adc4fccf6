// `awaitless import` of a hostile Awaitless 0.8 store, through the compiled binary: path-shaped job IDs, log paths
// pointing anywhere, links in its jobs/, a command that is not a list, deep JSON, a view in place of its table,
// a --from of another user, a failure halfway (full disk); and what gc, list and inspect do with hostile rows an
// earlier version imported. Nothing outside the data directory may change.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";
import { createLocalUser, localUsersAvailable } from "../helpers/local-users.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import { FIXTURE_08, id08, row08, write08Store } from "../helpers/store08.ts";
import { fillUp, mountTmpfs, tmpfsAvailable, unmountTmpfs } from "../helpers/tmpfs.ts";
import { until } from "../helpers/until.ts";

const boxes: Sandbox[] = [];
afterAll(() => {
  for (const b of boxes) b.cleanup();
});
function box(): Sandbox {
  const sb = new Sandbox();
  boxes.push(sb);
  return sb;
}

/** A victim directory outside the data directory, with a file in it: it must survive everything. */
function victim(sb: Sandbox, name = "important"): string {
  const dir = join(sb.root, "home", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "thesis.tex"), "years of work\n");
  return dir;
}

/** Every path under `dir` except the data directory, with type, mode and size: what must not change. */
function snapshot(dir: string, except: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string) => {
    if (p === except) return;
    const st = lstatSync(p);
    out[p] =
      `${st.isDirectory() ? "d" : st.isSymbolicLink() ? "l" : "f"} ${(st.mode & 0o7777).toString(8)} ${st.isDirectory() ? "" : st.size}`;
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
  };
  walk(dir);
  return out;
}

describe("import refuses what a hostile 0.8 store says", () => {
  test("a job ID shaped like a path is skipped, and gc deletes nothing outside the data directory", () => {
    const sb = box();
    const target = victim(sb);
    const from = join(sb.root, "from");
    const good = id08();
    write08Store(from, [
      row08(from, { job_id: "../../home/important" }),
      row08(from, { job_id: `${good}/../../../planted` }),
      row08(from, { job_id: good }),
    ]);
    const before = snapshot(sb.root, sb.dataDir);
    const r = sb.run(["import", "--from", from, "--json"]);
    expect(r.code).toBe(0);
    expect(r.json.imported).toBe(1);
    expect(r.json.job_ids).toEqual([good]);
    expect(r.json.skipped_count).toBe(2);
    for (const s of r.json.skipped) expect(s.reason).toContain("not an Awaitless 0.8 job ID");
    expect(sb.run(["gc", "--older-than", "0s"]).code).toBe(0);
    expect(readFileSync(join(target, "thesis.tex"), "utf8")).toBe("years of work\n");
    expect(snapshot(sb.root, sb.dataDir)).toEqual(before);
    expect(existsSync(join(sb.root, "planted"))).toBe(false);
  });

  test("logs come only from <from>/jobs/<ID>/ as regular files, never through a link, copied 0600", () => {
    const sb = box();
    const secrets = join(sb.root, ".ssh");
    mkdirSync(secrets, { mode: 0o700 });
    writeFileSync(join(secrets, "canary"), "PRIVATE KEY CANARY\n");
    const from = join(sb.root, "from");
    const [recorded, linked, plain] = [id08(), id08(), id08()];
    write08Store(from, [
      // the row names files anywhere: never read
      row08(from, {
        job_id: recorded,
        stdout_path: join(secrets, "canary"),
        stderr_path: "../../../../etc/passwd",
      }),
      row08(from, { job_id: linked }),
      row08(from, { job_id: plain }),
    ]);
    mkdirSync(join(from, "jobs", linked), { recursive: true });
    symlinkSync(join(secrets, "canary"), join(from, "jobs", linked, "stdout.log"));
    mkdirSync(join(from, "jobs", plain), { recursive: true });
    writeFileSync(join(from, "jobs", plain, "stdout.log"), "plain output\n", { mode: 0o644 });
    const r = sb.run(["import", "--from", from, "--json"]);
    expect(r.code).toBe(0);
    expect(r.json.imported).toBe(3);
    expect(r.json.notes.join("\n")).toContain(
      `${recorded}: 0.8 recorded its stdout at ${JSON.stringify(join(secrets, "canary"))}`,
    );
    expect(r.json.notes.join("\n")).toContain(
      `${recorded}: 0.8 recorded its stderr at "../../../../etc/passwd"`,
    );
    for (const id of [recorded, linked]) {
      const logs = sb.run(["logs", id]);
      expect(logs.code).toBe(0);
      expect(logs.stdout).not.toContain("CANARY");
      expect(logs.stdout).not.toContain("root:");
    }
    expect(sb.run(["logs", plain]).stdout).toContain("plain output");
    for (const id of [recorded, linked, plain]) {
      for (const f of ["stdout", "stderr"]) {
        const st = lstatSync(join(sb.dataDir, "imported-0.8", id, f));
        expect(st.isFile()).toBe(true);
        expect(st.mode & 0o777).toBe(0o600);
      }
    }
  });

  test("a command that is not a list and deep JSON are skipped with the reason; the rest of the store lists", () => {
    const sb = box();
    const from = join(sb.root, "from");
    const [notList, deep, ok] = [id08(), id08(), id08()];
    write08Store(from, [
      row08(from, { job_id: notList, command_json: '{"not":"an array"}' }),
      row08(from, { job_id: deep, artifacts_json: `${"[".repeat(200_000)}${"]".repeat(200_000)}` }),
      row08(from, { job_id: ok }),
    ]);
    const r = sb.run(["import", "--from", from, "--json"]);
    expect(r.code).toBe(0);
    expect(r.json.job_ids).toEqual([ok]);
    const reasons = Object.fromEntries(
      r.json.skipped.map((s: { job_id: string; reason: string }) => [s.job_id, s.reason]),
    );
    expect(reasons[notList]).toBe("command_json is not a JSON array");
    expect(reasons[deep]).toBe("artifacts_json: JSON nested deeper than 4 levels");
    expect(sb.run(["list"]).code).toBe(0);
    expect(sb.run(["inspect", ok]).code).toBe(0);
  });

  test("a view in place of 0.8's jobs table is refused before any row is read", () => {
    const sb = box();
    const from = join(sb.root, "from");
    write08Store(from, [], {
      sql: [
        "ALTER TABLE jobs RENAME TO jobs_table",
        "CREATE VIEW jobs AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT * FROM jobs_table, n",
      ],
    });
    const r = sb.run(["import", "--from", from]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("its jobs is a view, not 0.8's table");
  });

  test("nothing is stored when the import fails halfway (a full disk)", () => {
    if (!gateOnAvailability("import's one transaction on a full tmpfs", tmpfsAvailable())) return;
    const sb = box();
    const from = join(sb.root, "from");
    const ids = [id08(), id08(), id08()];
    write08Store(
      from,
      ids.map((job_id) => row08(from, { job_id })),
    );
    for (const id of ids) {
      mkdirSync(join(from, "jobs", id), { recursive: true });
      writeFileSync(join(from, "jobs", id, "stdout.log"), "x".repeat(300 * 1024));
    }
    const data = join(sb.root, "small");
    mountTmpfs(data, "2m", ["mode=0700"]);
    try {
      const env = { AWAITLESS_DATA_DIR: data };
      expect(sb.run(["list"], { env }).code).toBe(0);
      writeFileSync(join(data, "filler-keep"), ""); // room for the store, little for logs
      fillUp(data);
      Bun.spawnSync(["truncate", "-s", `-${512 * 1024}`, join(data, "filler")]);
      const r = sb.run(["import", "--from", from, "--json"], { env });
      expect(r.code).not.toBe(0);
      expect(sb.run(["list", "--json"], { env }).json.jobs).toEqual([]);
      expect(readdirSync(join(data, "imported-0.8"))).toEqual([]);
    } finally {
      unmountTmpfs(data);
    }
  });
});

describe("--from another user could have filled", () => {
  if (!gateOnAvailability("a --from of another user (a throwaway user, root)", localUsersAvailable())) return;

  test("owned by another user, or open to others: refused with the fix, nothing imported", () => {
    const sb = box();
    const other = createLocalUser();
    try {
      const theirs = join(sb.root, "theirs");
      cpSync(FIXTURE_08, theirs, { recursive: true });
      Bun.spawnSync(["chown", "-R", `${other.uid}:${other.gid}`, theirs]);
      chmodSync(theirs, 0o777);
      const r = sb.run(["import", "--from", theirs]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `refusing --from ${theirs}: ${theirs} is owned by another user (uid ${other.uid})`,
      );
      expect(r.stderr).toContain("choose a directory you own");
      expect(sb.jobCount()).toBe(0);

      const open = join(sb.root, "open");
      cpSync(FIXTURE_08, open, { recursive: true });
      chmodSync(open, 0o1777);
      const o = sb.run(["import", "--from", open]);
      expect(o.code).toBe(2);
      expect(o.stderr).toContain(`refusing --from ${open}: it is writable by other users`);
      expect(o.stderr).toContain(`chmod go-w ${open}`);
      expect(sb.jobCount()).toBe(0);
      chownSync(theirs, 0, 0);
    } finally {
      other.remove();
    }
  });
});

/** Adds a row to our store as an earlier version's import left it (from a hostile 0.8 store). */
function plantImportedRow(sb: Sandbox, row: { job_id: string; job_dir: string; spec: unknown }): void {
  const db = new Database(join(sb.dataDir, "store.db"));
  try {
    db.query(
      `INSERT INTO jobs (job_id, name, backend, host, queue, state, spec_json, fingerprint, created_at, started_at,
         finished_at, job_dir, backend_id_json, status_message, exit_code, signal, reason, stdout_bytes, stderr_bytes,
         result_json, result_sha256)
       VALUES (?, 'x', 'local', NULL, NULL, 'succeeded', ?, ?, '2020-01-01T00:00:00.000Z', NULL,
         '2020-01-01T00:00:01.000Z', ?, '{"imported_from":"awaitless-0.8"}', NULL, 0, NULL, NULL, 0, 0, NULL, NULL)`,
    ).run(row.job_id, JSON.stringify(row.spec), `awaitless-0.8:${row.job_id}`, row.job_dir);
  } finally {
    db.close();
  }
}

describe("hostile rows an earlier version imported", () => {
  test("list and inspect show them; gc forgets them and touches nothing they name", () => {
    const sb = box();
    const target = victim(sb);
    sb.run(["wait", sb.submit(["true"])]); // the store exists
    const pathId = "../../home/important";
    const validId = id08();
    plantImportedRow(sb, {
      job_id: pathId,
      job_dir: join(sb.dataDir, "imported-0.8", pathId),
      spec: { argv: { not: "an array" }, cwd: 7, env: [], artifacts: "x", name: null },
    });
    plantImportedRow(sb, { job_id: validId, job_dir: target, spec: { argv: ["true"], cwd: "/", env: {} } });
    const before = snapshot(sb.root, sb.dataDir);
    const list = sb.run(["list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(validId);
    expect(sb.run(["list", "--json"]).code).toBe(0);
    expect(sb.run(["inspect", validId]).code).toBe(0);
    const gc = sb.run(["gc", "--older-than", "1s"]);
    expect(gc.code).toBe(0);
    expect(gc.stdout).toContain(`forgot ${validId} without touching its files: refusing to remove or write`);
    expect(gc.stdout).toContain(`forgot ${pathId} without touching its files`);
    expect(readFileSync(join(target, "thesis.tex"), "utf8")).toBe("years of work\n");
    expect(snapshot(sb.root, sb.dataDir)).toEqual(before);
    const left = sb.run(["list", "--json"]).json.jobs.map((j: { job_id: string }) => j.job_id);
    expect(left).not.toContain(validId);
    expect(left).not.toContain(pathId);
  });

  test("the daily gc, started in the background, touches nothing they name either", async () => {
    const sb = box();
    const target = victim(sb);
    sb.writeConfig("[defaults]\nretention_days = 1\n");
    sb.run(["wait", sb.submit(["true"])]); // starts the daily clock
    plantImportedRow(sb, { job_id: id08(), job_dir: target, spec: { argv: ["true"], cwd: "/", env: {} } });
    const before = snapshot(sb.root, sb.dataDir);
    const db = new Database(join(sb.dataDir, "store.db"));
    db.query("UPDATE store_meta SET value = '2020-01-01T00:00:00.000Z' WHERE key = 'auto_gc_at'").run();
    db.close();
    const active = sb.submit(["sleep", "30"]);
    try {
      await until("the background gc", () => (sb.jobCount() === 2 ? true : undefined), 30_000);
      expect(readFileSync(join(target, "thesis.tex"), "utf8")).toBe("years of work\n");
      expect(snapshot(sb.root, sb.dataDir)).toEqual(before);
    } finally {
      sb.run(["cancel", "--grace-period", "0", active]);
    }
  });

  test("a link in place of the data directory's jobs/: gc refuses it, --forget-unreachable too", () => {
    const sb = box();
    const id = sb.submit(["true"]);
    sb.run(["wait", id]);
    const elsewhere = join(sb.root, "elsewhere");
    mkdirSync(join(elsewhere, id), { recursive: true });
    writeFileSync(join(elsewhere, id, "keep"), "not the job's\n");
    cpSync(join(sb.dataDir, "jobs"), join(sb.root, "jobs-moved"), { recursive: true });
    Bun.spawnSync(["rm", "-rf", join(sb.dataDir, "jobs")]);
    symlinkSync(elsewhere, join(sb.dataDir, "jobs"));
    for (const flags of [[], ["--forget-unreachable"]]) {
      const gc = sb.run(["gc", "--older-than", "0s", ...flags]);
      expect(gc.code).toBe(0);
      expect(readFileSync(join(elsewhere, id, "keep"), "utf8")).toBe("not the job's\n");
    }
    expect(sb.jobCount()).toBe(0);
  });
});
