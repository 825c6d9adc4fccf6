// Beside Awaitless 0.8: its store (a fixture written by 0.8 itself) is never changed, `import` brings its jobs,
// whose 0.8 IDs then answer the CLI and MCP; our own store left at the old file name keeps working.

import { constants, Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, killQuietly, pidAlive, ROOT, Sandbox, until } from "../helpers/cli.ts";
import { structured } from "../mcp/harness.ts";
import { connectStdio } from "../mcp/stdio-client.ts";

const FIXTURE = join(ROOT, "test", "fixtures", "awaitless-08", "data");
const OK = "job_01A2310DB514DEE970B970";
const FAIL3 = "job_01A2310DB7418ED6207486";
const ART = "job_01A2310DBA1B12FF724AD2";
const CANCELLED = "job_01A2310DC0757ACE291053";
const RUNNING = "job_01A2310DC69F59BCEC8703";

const boxes: Sandbox[] = [];
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  for (const b of boxes.splice(0)) b.cleanup();
});

/** A sandbox whose data directory holds a copy of the 0.8 store, as if 0.8 had run there. */
function beside08(): Sandbox {
  const sb = new Sandbox();
  boxes.push(sb);
  cpSync(FIXTURE, sb.dataDir, { recursive: true, preserveTimestamps: true });
  return sb;
}

/** Every file 0.8 owns under `dir` (its database and its jobs/ID directories), with content hash and mtime. */
function tree08(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const r = join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else {
        const st = statSync(join(dir, r));
        out[r] = `${createHash("sha256")
          .update(readFileSync(join(dir, r)))
          .digest("hex")} ${st.mtimeMs} ${st.size}`;
      }
    }
  };
  for (const name of readdirSync(dir)) {
    if (name.startsWith("awaitless.db")) out[name] = tree08File(join(dir, name));
  }
  for (const id of readdirSync(join(dir, "jobs"))) if (/^job_[0-9A-F]{22}$/.test(id)) walk(join("jobs", id));
  return out;
}

function tree08File(path: string): string {
  const st = statSync(path);
  return `${createHash("sha256").update(readFileSync(path)).digest("hex")} ${st.mtimeMs} ${st.size}`;
}

/** A row of the fixture's 0.8 jobs table, read without locks or writes. */
function fixtureRow(jobId: string): Record<string, unknown> {
  const db = new Database(
    `file:${join(FIXTURE, "awaitless.db")}?immutable=1`,
    constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI,
  );
  try {
    return db.query("SELECT * FROM jobs WHERE job_id = ?").get(jobId) as Record<string, unknown>;
  } finally {
    db.close();
  }
}

describe("beside an Awaitless 0.8 store", () => {
  test("our commands work, keep their own file, offer the import once on stderr, and leave 0.8's files alone", () => {
    const sb = beside08();
    const before = tree08(sb.dataDir);
    const first = sb.run(["list", "--json"]);
    expect(first.stderr).not.toContain("already exists");
    expect(first.code).toBe(0);
    expect(first.json).toEqual({ jobs: [] }); // stdout is the JSON only
    expect(first.stderr).toMatch(
      /^notice: an Awaitless 0\.8 store is in .*; bring its jobs here with: awaitless import\n$/,
    );
    const id = sb.submit(["sh", "-c", "echo ours"]);
    expect(sb.run(["wait", id, "--json"]).json.stdout_tail).toBe("ours\n");
    const again = sb.run(["status", id, "--json"]);
    expect(again.stderr).toBe("");
    expect(existsSync(join(sb.dataDir, "store.db"))).toBe(true);
    expect(tree08(sb.dataDir)).toEqual(before);
    expect(readdirSync(sb.dataDir).filter((f) => f.startsWith("awaitless.db"))).toEqual(["awaitless.db"]);
  });

  test("a fresh data directory gets no awaitless.db (0.8 started later finds none of ours)", () => {
    const sb = new Sandbox();
    boxes.push(sb);
    sb.submit(["true"]);
    expect(readdirSync(sb.dataDir).filter((f) => f.startsWith("awaitless.db"))).toEqual([]);
    expect(existsSync(join(sb.dataDir, "store.db"))).toBe(true);
  });

  test("an 0.8 ID before import says how to bring it in", () => {
    const sb = beside08();
    const r = sb.run(["status", OK]);
    expect(r.code).toBe(2);
    // the first command (here status, which skips the command table: src/cli/direct.ts) offers the import too
    expect(r.stderr).toMatch(
      /^notice: an Awaitless 0\.8 store is in .*; bring its jobs here with: awaitless import\n/,
    );
    expect(r.stderr).toContain(`no job ${OK}`);
    expect(r.stderr).toContain("awaitless import");
  });
});

describe("awaitless import", () => {
  test("brings the finished jobs with state, exit code, timestamps, result, logs and artifacts; once", () => {
    const sb = beside08();
    const before = tree08(sb.dataDir);
    const r = sb.run(["import", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json.imported).toBe(4);
    expect(r.json.by_state).toEqual({ succeeded: 2, failed: 1, cancelled: 1 });
    expect(r.json.skipped).toEqual([]);
    // running when the store was copied: watched, and found lost (its runner and command are gone, no exit recorded)
    expect(r.json.watching).toEqual([{ job_id: RUNNING, state: "running" }]);
    expect(r.stderr).toBe(""); // no offer on the import itself
    const gone = sb.run(["wait", RUNNING, "--json"]);
    expect(gone.code).toBe(6);
    expect(gone.json).toMatchObject({ state: "lost", reason: "runner_gone" });

    const fail = sb.run(["wait", FAIL3, "--json"]);
    expect(fail.code).toBe(3);
    const row = fixtureRow(FAIL3);
    expect(fail.json).toMatchObject({
      state: "failed",
      exit_code: 3,
      created_at: row.created_at,
      started_at: row.started_at,
      finished_at: row.finished_at,
      stdout_tail: "about to fail\n",
      name: "fail3",
    });
    const ok = sb.run(["wait", OK, "--json"]).json;
    expect(ok).toMatchObject({
      state: "succeeded",
      exit_code: 0,
      stdout_tail: "hello from 0.8\n",
      stderr_tail: "warn\n",
    });
    const art = sb.run(["wait", ART, "--json"]).json;
    expect(art.parsed_results).toEqual({ correctness: true, latency_us: 24.7 });
    expect(art.artifacts[0]).toMatchObject({ path: "result.json", exists: true, size_bytes: 41 });
    expect(art.artifacts[0].sha256).toMatch(/^[0-9a-f]{64}$/);
    const cancelled = sb.run(["status", CANCELLED, "--json"]);
    expect(cancelled.json.state).toBe("cancelled");

    const logs = sb.run(["logs", OK]);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toContain("hello from 0.8");
    expect(logs.stdout).toContain("warn");
    expect(sb.run(["logs", FAIL3, "--tail", "1", "--json"]).json.stdout).toBe("about to fail\n");
    const inspect = sb.run(["inspect", CANCELLED, "--json"]).json;
    expect(inspect.job.backend_id.imported_from).toBe("awaitless-0.8");
    expect(inspect.history.map((h: { to_state: string }) => h.to_state)).toEqual([
      "starting",
      "running",
      "cancelled",
    ]);
    expect(
      sb
        .run(["list", "--json"])
        .json.jobs.map((j: { job_id: string }) => j.job_id)
        .sort(),
    ).toEqual([OK, FAIL3, ART, CANCELLED, RUNNING].sort());

    const second = sb.run(["import"]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("nothing new to import");
    expect(second.stdout).toContain("5 job(s) were imported before");
    expect(sb.run(["import", "--json"]).json).toMatchObject({
      imported: 0,
      already_imported: 5,
      watching: [],
    });
    expect(sb.run(["list", "--json"]).json.jobs).toHaveLength(5);
    // a gc of ours removes our copy of an imported job, never 0.8's files
    expect(sb.run(["gc", "--older-than", "0s"]).code).toBe(0);
    expect(tree08(sb.dataDir)).toEqual(before);
  });

  test("--from reads a store elsewhere; without one it says where it looked", () => {
    const sb = new Sandbox();
    boxes.push(sb);
    const none = sb.run(["import"]);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain("no Awaitless 0.8 store found");
    const elsewhere = join(sb.root, "old-08");
    cpSync(FIXTURE, elsewhere, { recursive: true, preserveTimestamps: true });
    const before = tree08(elsewhere);
    const r = sb.run(["import", "--from", elsewhere, "--json"]);
    expect(r.json.imported).toBe(4);
    expect(sb.run(["logs", OK]).stdout).toContain("hello from 0.8");
    expect(tree08(elsewhere)).toEqual(before);
    const bad = sb.run(["import", "--from", sb.work]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("no Awaitless 0.8 store in");
  });

  test("SSH/Slurm jobs: last known state and 0.8's tails, with a note; an active remote one is skipped", () => {
    const sb = new Sandbox();
    boxes.push(sb);
    // A variant of the fixture (edited here, in a copy): one finished job ran on an SSH host, one still runs on Slurm.
    const variant = join(sb.root, "variant-08");
    cpSync(FIXTURE, variant, { recursive: true });
    const db = new Database(join(variant, "awaitless.db"));
    db.query("UPDATE jobs SET backend = 'ssh', host = 'gpu' WHERE job_id = ?").run(OK);
    db.query("UPDATE jobs SET backend = 'slurm', host = 'cluster', backend_id = '4242' WHERE job_id = ?").run(
      RUNNING,
    );
    db.close();
    const r = sb.run(["import", "--from", variant, "--json"]);
    expect(r.json.imported).toBe(4);
    expect(r.json.notes.join(" ")).toContain("full logs stay on the host");
    expect(r.json.skipped).toEqual([
      expect.objectContaining({ job_id: RUNNING, backend: "slurm", state: "running" }),
    ]);
    const st = sb.status(OK);
    expect(st).toMatchObject({ state: "succeeded", backend: "ssh", host: "gpu" });
    const logs = sb.run(["logs", OK, "--json"]);
    expect(logs.code).toBe(0);
    expect(logs.json.stdout).toBe("hello from 0.8\n");
    expect(sb.run(["inspect", OK, "--json"]).json.job.backend_id.logs).toContain("tails kept by 0.8");
  });

  test("a local job 0.8 still runs is watched until 0.8's runner records its end; ours never writes", async () => {
    const sb = new Sandbox();
    boxes.push(sb);
    const variant = join(sb.root, "live-08");
    cpSync(FIXTURE, variant, { recursive: true });
    // This test plays 0.8's runner: a real command process, registered in 0.8's row as 0.8 does.
    const cmd = Bun.spawn(["sleep", "60"]);
    closers.push(() => killQuietly(cmd.pid));
    const ticks = readFileSync(`/proc/${cmd.pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19];
    const db = new Database(join(variant, "awaitless.db"));
    closers.push(() => db.close());
    db.query("UPDATE jobs SET pid = ?, pid_start_ticks = ?, runner_pid = NULL WHERE job_id = ?").run(
      cmd.pid,
      Number(ticks),
      RUNNING,
    );
    const r = sb.run(["import", "--from", variant, "--json"]);
    expect(r.json.watching).toEqual([{ job_id: RUNNING, state: "running" }]);
    const before = tree08(variant);
    expect(sb.status(RUNNING).state).toBe("running");
    expect(sb.run(["logs", RUNNING]).stdout).toContain("still going");
    const cancel = sb.run(["cancel", RUNNING]);
    expect(cancel.code).toBe(2);
    expect(cancel.stderr).toContain("run by Awaitless 0.8");
    expect(tree08(variant)).toEqual(before);
    expect(pidAlive(cmd.pid)).toBe(true);

    const waiting = sb.runAsync(["wait", RUNNING, "--json"]);
    await until("the waiter to observe the job", () => sb.status(RUNNING).state === "running");
    // 0.8's runner at the command's exit: the last output, then update_if_active in one transaction.
    writeFileSync(join(variant, "jobs", RUNNING, "stdout.log"), "still going\ndone\n");
    const finished = new Date().toISOString();
    db.exec("BEGIN IMMEDIATE");
    db.query(
      "UPDATE jobs SET state = 'succeeded', exit_code = 0, finished_at = ?, updated_at = ? WHERE job_id = ? AND state = 'running'",
    ).run(finished, finished, RUNNING);
    db.query("INSERT INTO state_events (job_id, state, occurred_at) VALUES (?, 'succeeded', ?)").run(
      RUNNING,
      finished,
    );
    db.exec("COMMIT");
    killQuietly(cmd.pid);
    const w = await waiting;
    expect(w.code).toBe(0);
    expect(w.json).toMatchObject({
      state: "succeeded",
      exit_code: 0,
      finished_at: finished,
      stdout_tail: "still going\ndone\n",
    });
    expect(sb.run(["logs", RUNNING]).stdout).toContain("done");
  }, 60_000);

  test("imported 0.8 IDs answer the MCP tools", async () => {
    const sb = beside08();
    expect(sb.run(["import"]).code).toBe(0);
    const conn = await connectStdio("modern", sb.env, sb.work);
    closers.push(conn.close);
    const status = structured<{ state: string; exit_code: number }>(
      await conn.client.callTool({ name: "get_job_status", arguments: { job_id: FAIL3 } }),
    );
    expect(status).toMatchObject({ state: "failed", exit_code: 3 });
    const waited = await conn.client.callTool({ name: "wait_for_job", arguments: { job_id: ART } });
    expect(JSON.stringify(structured(waited))).toContain('"latency_us":24.7');
    const logs = structured<{ stdout: string; stderr: string }>(
      await conn.client.callTool({ name: "get_job_logs", arguments: { job_id: OK } }),
    );
    expect(logs.stdout).toBe("hello from 0.8\n");
    expect(logs.stderr).toBe("warn\n");
  }, 30_000);
});

describe("our store at the old file name (awaitless.db, before this release)", () => {
  /** A store of ours as the previous release left it: the same schema, at the name 0.8 also uses. */
  function oldNameStore(): { sb: Sandbox; id: string } {
    const sb = new Sandbox();
    boxes.push(sb);
    const id = sb.submit(["sh", "-c", "echo from-before"]);
    sb.run(["wait", id]);
    renameSync(join(sb.dataDir, "store.db"), join(sb.dataDir, "awaitless.db"));
    return { sb, id };
  }

  test("moves to store.db when nothing has it open, jobs intact; no notice (it is not 0.8's)", () => {
    const { sb, id } = oldNameStore();
    const r = sb.run(["wait", id, "--json"]);
    expect(r.code).toBe(0);
    expect(r.json.stdout_tail).toBe("from-before\n");
    expect(r.stderr).toBe("");
    expect(existsSync(join(sb.dataDir, "awaitless.db"))).toBe(false);
    expect(existsSync(join(sb.dataDir, "store.db"))).toBe(true);
    expect(sb.jobCount()).toBe(1);
  });

  test("eight processes finding it at once: each answers, no job is lost, it moves once it is free", async () => {
    const { sb, id } = oldNameStore();
    // At once however busy the machine: each shell says it is ready, then waits for `go` before it becomes the binary.
    const go = join(sb.work, "go");
    const line = `: > "ready.$2"; while [ ! -e go ]; do sleep 0.01; done; exec "$0" status "$1" --json`;
    const procs = Array.from({ length: 8 }, (_, i) =>
      Bun.spawn(["sh", "-c", line, BINARY, id, String(i)], {
        cwd: sb.work,
        env: sb.env,
        stdout: "pipe",
        stderr: "pipe",
      }),
    );
    let results: { stdout: string; stderr: string }[];
    try {
      await until(
        "eight processes ready",
        () => procs.every((_, i) => existsSync(join(sb.work, `ready.${i}`))),
        60_000,
      );
    } finally {
      writeFileSync(go, "");
      results = await Promise.all(
        procs.map(async (p) => {
          const [stdout, stderr] = await Promise.all([
            new Response(p.stdout).text(),
            new Response(p.stderr).text(),
          ]);
          return { stdout, stderr };
        }),
      );
    }
    for (const r of results) {
      expect(r.stderr).toBe("");
      expect(JSON.parse(r.stdout).state).toBe("succeeded");
    }
    // Each of the eight may have found another holding it (a busy machine interleaves them): then it is still at
    // its old name, and the next command, finding it free, moves it. Never two stores: the job is in the one.
    expect(sb.submit(["true"])).toMatch(/^job_/);
    expect(readdirSync(sb.dataDir).filter((f) => f.startsWith("awaitless.db"))).toEqual([]);
    expect(sb.jobCount()).toBe(2);
  });

  test("stays where it is while another process has it open, and moves once it is free", () => {
    const { sb, id } = oldNameStore();
    const held = new Database(join(sb.dataDir, "awaitless.db"));
    held.exec("PRAGMA journal_mode = WAL");
    held.query("SELECT COUNT(*) FROM jobs").get();
    let closed = false;
    closers.push(() => {
      if (!closed) held.close();
    });
    expect(sb.status(id).state).toBe("succeeded");
    const second = sb.submit(["true"]);
    expect(existsSync(join(sb.dataDir, "store.db"))).toBe(false);
    expect((held.query("SELECT COUNT(*) AS n FROM jobs").get() as { n: number }).n).toBe(2);
    held.close();
    closed = true;
    sb.run(["wait", second]);
    expect(existsSync(join(sb.dataDir, "awaitless.db"))).toBe(false);
    expect(sb.jobCount()).toBe(2);
  });
});
