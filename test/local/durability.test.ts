// Durability promises through the compiled binary: idempotency under races, crash between reservation
// and launch, completion feed replay, gc, and the binary running without node_modules.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, Sandbox, until } from "../helpers/cli.ts";
import { structured, textOf } from "../mcp/harness.ts";
import { connectStdio } from "../mcp/stdio-client.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

describe("idempotent creation", () => {
  test("20 concurrent processes with one client_request_id launch exactly once", async () => {
    const marker = join(sb.work, "launches");
    const argv = ["sh", "-c", `echo launched >> ${marker}`];
    const runs = await Promise.all(
      Array.from({ length: 20 }, () =>
        sb.runAsync(["submit", "--json", "--client-request-id", "race-1", "--", ...argv]),
      ),
    );
    for (const r of runs) expect(r.code).toBe(0);
    const ids = new Set(runs.map((r) => r.json.job_id));
    expect(ids.size).toBe(1);
    expect(runs.filter((r) => r.json.idempotent_replay === false).length).toBe(1);
    const [id] = [...ids];
    sb.run(["wait", id!]);
    expect(readFileSync(marker, "utf8")).toBe("launched\n");
  });

  test("the same key with other arguments is refused before anything starts", () => {
    const id = sb.submit(["true"], ["--client-request-id", "conflict-1"]);
    const before = sb.jobCount();
    const r = sb.run(["submit", "--json", "--client-request-id", "conflict-1", "--", "false"]);
    expect(r.code).toBe(2);
    expect(r.json.error.code).toBe("idempotency_conflict");
    expect(r.json.error.job_id).toBe(id);
    expect(r.stderr).toContain(id);
    expect(sb.jobCount()).toBe(before);
  });

  /** A submit whose command appends one line to `marker` per execution, under client_request_id `key`. */
  function keyed(key: string, marker: string): string[] {
    return ["submit", "--json", "--client-request-id", key, "--", "sh", "-c", `echo x >> ${marker}`];
  }
  const CRASH_AFTER_RESERVE = { AWAITLESS_TEST_CRASH_AFTER_RESERVE: "1" };

  test("a client killed after reservation: a retry with the same key finishes that launch, exactly once", () => {
    const marker = join(sb.work, "crash-launches");
    const crashed = sb.run(keyed("crash-1", marker), { env: CRASH_AFTER_RESERVE });
    expect(crashed.code).toBe(99);
    const list = sb.run(["list", "--json", "--state", "starting"]).json.jobs;
    expect(list.length).toBe(1);
    const id = list[0].job_id;
    expect(existsSync(marker)).toBe(false);

    const retry = sb.run(keyed("crash-1", marker));
    expect(retry.code).toBe(0);
    expect(retry.json.job_id).toBe(id);
    expect(retry.json.idempotent_replay).toBe(true);
    expect(retry.json.launch_resumed).toBe(true);
    expect(sb.run(["wait", "--json", id]).json.state).toBe("succeeded");
    expect(readFileSync(marker, "utf8")).toBe("x\n");

    // once launched, a further retry is a plain replay: nothing runs again
    const again = sb.run(keyed("crash-1", marker));
    expect(again.json.job_id).toBe(id);
    expect(again.json.idempotent_replay).toBe(true);
    expect(again.json).not.toHaveProperty("launch_resumed");
    expect(readFileSync(marker, "utf8")).toBe("x\n");
    const history = sb.run(["inspect", "--json", id]).json.history.map((h: { reason: string }) => h.reason);
    // `started` is there when a look saw the job running; a job this quick can end before any look does
    expect(history.filter((r: string) => r !== "started")).toEqual([
      "created",
      "launch_resumed",
      "succeeded",
    ]);
    expect(history.slice(2, -1).every((r: string) => r === "started")).toBe(true);
    // people are told that this retry launched it
    const human = sb.run(["submit", "--client-request-id", "crash-1h", "--", "true"], {
      env: CRASH_AFTER_RESERVE,
    });
    expect(human.code).toBe(99);
    expect(sb.run(["submit", "--client-request-id", "crash-1h", "--", "true"]).stderr).toContain(
      "launched now",
    );
  });

  test("20 concurrent retries of a launch abandoned after reservation launch it once", async () => {
    const marker = join(sb.work, "crash-race-launches");
    expect(sb.run(keyed("crash-race", marker), { env: CRASH_AFTER_RESERVE }).code).toBe(99);
    const runs = await Promise.all(
      Array.from({ length: 20 }, () => sb.runAsync(keyed("crash-race", marker))),
    );
    for (const r of runs) expect(r.code).toBe(0);
    const ids = new Set(runs.map((r) => r.json.job_id));
    expect(ids.size).toBe(1);
    expect(runs.every((r) => r.json.idempotent_replay === true)).toBe(true);
    expect(runs.filter((r) => r.json.launch_resumed === true).length).toBe(1);
    sb.run(["wait", [...ids][0]!]);
    expect(readFileSync(marker, "utf8")).toBe("x\n");
  });

  test("a retry that itself dies after claiming the launch leaves it to the next retry", () => {
    const marker = join(sb.work, "crash-twice-launches");
    expect(sb.run(keyed("crash-twice", marker), { env: CRASH_AFTER_RESERVE }).code).toBe(99);
    expect(sb.run(keyed("crash-twice", marker), { env: CRASH_AFTER_RESERVE }).code).toBe(99);
    const retry = sb.run(keyed("crash-twice", marker));
    expect(retry.json.launch_resumed).toBe(true);
    sb.run(["wait", retry.json.job_id]);
    expect(readFileSync(marker, "utf8")).toBe("x\n");
  });

  test("a client killed after the wrapper started (before recording it): a retry never relaunches", async () => {
    const marker = join(sb.work, "crash-after-launch");
    const args = keyed("crash-after-launch", marker);
    const crashed = sb.run(args, { env: { AWAITLESS_TEST_CRASH_AFTER_LAUNCH: "1" } });
    expect(crashed.code).toBe(98);
    const id = sb.run(["list", "--json", "--limit", "1"]).json.jobs[0].job_id;
    expect(sb.run(["inspect", "--json", id]).json.job.backend_id).toBeNull();
    // the wrapper left its trace before the command could start: not certain it never ran, so no relaunch
    const retry = sb.run(args);
    expect(retry.json.job_id).toBe(id);
    expect(retry.json).not.toHaveProperty("launch_resumed");
    expect(sb.run(["wait", "--json", id]).json.state).toBe("succeeded");
    expect(readFileSync(marker, "utf8")).toBe("x\n");
  });

  test("an MCP retry (submit_job with the same client_request_id) finishes the abandoned launch once", async () => {
    const marker = join(sb.work, "crash-mcp");
    expect(sb.run(keyed("crash-mcp", marker), { env: CRASH_AFTER_RESERVE }).code).toBe(99);
    const conn = await connectStdio("modern", sb.env, sb.work, "launch-resume");
    try {
      const args = { command: ["sh", "-c", `echo x >> ${marker}`], client_request_id: "crash-mcp" };
      const first = await conn.client.callTool({ name: "submit_job", arguments: args });
      const body = structured<{ job_id: string; launch_resumed?: boolean }>(first);
      expect(body.launch_resumed).toBe(true);
      expect(textOf(first)).toContain("launched now");
      const again = structured<{ job_id: string }>(
        await conn.client.callTool({ name: "submit_job", arguments: args }),
      );
      expect(again).not.toHaveProperty("launch_resumed");
      expect(again.job_id).toBe(body.job_id);
      sb.run(["wait", body.job_id]);
      expect(readFileSync(marker, "utf8")).toBe("x\n");
    } finally {
      await conn.close();
    }
  });

  test("a job cancelled before the retry is not launched by it", () => {
    const marker = join(sb.work, "crash-cancelled");
    const args = keyed("crash-cancelled", marker);
    expect(sb.run(args, { env: CRASH_AFTER_RESERVE }).code).toBe(99);
    const id = sb.run(["list", "--json", "--state", "starting"]).json.jobs[0].job_id;
    sb.run(["cancel", "--grace-period", "0", "--json", id]);
    const retry = sb.run(args);
    expect(retry.json.job_id).toBe(id);
    expect(retry.json).not.toHaveProperty("launch_resumed");
    expect(existsSync(marker)).toBe(false);
  });

  test("after the launch grace an interrupted launch is lost, never relaunched", () => {
    const own = new Sandbox();
    try {
      own.writeConfig("[defaults]\nlaunch_grace_seconds = 0\n");
      own.run(["submit", "--client-request-id", "crash-2", "--", "true"], {
        env: { AWAITLESS_TEST_CRASH_AFTER_RESERVE: "1" },
      });
      const id = own.run(["list", "--json"]).json.jobs[0].job_id;
      const w = own.run(["wait", "--json", id]);
      expect(w.json.state).toBe("lost");
      expect(w.json.reason).toBe("launch_interrupted");
      expect(w.json.error.suggestion).toContain("never ran");
      // lost is final: a retry with the same key hands back the lost job and starts nothing
      const retry = own.run(["submit", "--json", "--client-request-id", "crash-2", "--", "true"]);
      expect(retry.json.job_id).toBe(id);
      expect(retry.json.state).toBe("lost");
      expect(retry.json).not.toHaveProperty("launch_resumed");
    } finally {
      own.cleanup();
    }
  });
});

describe("completion feed", () => {
  test("returns completions as jobs finish and replays a cursor deterministically", () => {
    const a = sb.submit(["sh", "-c", "echo a"]);
    const b = sb.submit(["sh", "-c", "sleep 0.5; exit 2"]);
    const c = sb.submit(["sleep", "30"]);
    sb.run(["wait", a]);
    sb.run(["wait", b]);
    const first = sb.run(["completions", "--json", "--timeout", "0", a, b, c]);
    expect(first.json.completions.map((x: { job_id: string }) => x.job_id)).toEqual([a, b]);
    expect(first.json.active_job_ids).toEqual([c]);
    expect(first.json.completions[0].completion_id).toMatch(/^cmp_\d{16}$/);
    const again = sb.run(["completions", "--json", "--timeout", "0", a, b, c]);
    expect(again.stdout).toBe(first.stdout);
    const after = sb.run([
      "completions",
      "--json",
      "--timeout",
      "0.2",
      "--after",
      first.json.next_cursor,
      a,
      b,
      c,
    ]);
    expect(after.json.completions).toEqual([]);
    expect(after.json.wait_timed_out).toBe(true);
    expect(after.json.next_cursor).toBe(first.json.next_cursor);
    const page = sb.run(["completions", "--json", "--limit", "1", "--timeout", "0", a, b]);
    expect(page.json.completions.length).toBe(1);
    expect(page.json.has_more).toBe(true);
    sb.run(["cancel", "--grace-period", "0", c]);
    const last = sb.run(["completions", "--json", "--after", first.json.next_cursor, a, b, c]);
    expect(last.json.completions.map((x: { state: string }) => x.state)).toEqual(["cancelled"]);
  });

  test("blocks until a selected job finishes", async () => {
    const a = sb.submit(["sh", "-c", "sleep 0.5; echo done"]);
    const r = await sb.runAsync(["completions", "--json", a]);
    expect(r.json.completions[0].job_id).toBe(a);
    expect(r.json.completions[0].result.stdout_tail).toBe("done\n");
  });
});

describe("gc", () => {
  test("removes finished jobs' rows and files by count, never an active one", () => {
    const own = new Sandbox();
    try {
      const done = [own.submit(["true"]), own.submit(["true"]), own.submit(["true"])];
      for (const id of done) own.run(["wait", id]);
      const active = own.submit(["sleep", "30"]);
      const dry = own.run(["gc", "--json", "--keep", "1", "--dry-run"]);
      expect(dry.json.dry_run).toBe(true);
      expect(dry.json.would_remove.length).toBe(2);
      expect(dry.json).not.toHaveProperty("removed");
      expect(own.jobCount()).toBe(4);
      const dryHuman = own.run(["gc", "--keep", "1", "--dry-run"]);
      expect(dryHuman.stdout).toStartWith("would remove 2 finished job(s): ");
      expect(own.jobCount()).toBe(4);
      const r = own.run(["gc", "--json", "--keep", "0"]);
      expect(r.json.removed.sort()).toEqual([...done].sort());
      expect(own.jobCount()).toBe(1);
      expect(readdirSync(join(own.dataDir, "jobs"))).toEqual([active]);
      expect(own.status(active).state).toBe("running");
      own.run(["cancel", "--grace-period", "0", active]);
    } finally {
      own.cleanup();
    }
  });
});

describe("gc store quota", () => {
  test("removes the oldest finished jobs until all job files fit the quota; active jobs still count", async () => {
    const own = new Sandbox();
    try {
      const finished: string[] = [];
      for (let i = 0; i < 3; i++) {
        const id = own.submit(["head", "-c", "100000", "/dev/zero"]);
        own.run(["wait", id]);
        finished.push(id);
      }
      const active = own.submit(["sh", "-c", "head -c 50000 /dev/zero; exec sleep 30"]);
      // Its files count: wait until all of its output is on disk and its monitor's heartbeat has counted it (the
      // monitor's records change no more until its next heartbeat, 30 s on), so that every gc below sees the same sizes.
      const activeOut = join(own.dataDir, "jobs", active, "stdout");
      const activeBeat = join(own.dataDir, "jobs", active, "heartbeat");
      await until(
        "the active job's output, counted by its heartbeat",
        () =>
          existsSync(activeOut) &&
          statSync(activeOut).size === 50_000 &&
          existsSync(activeBeat) &&
          /^out=50000$/m.test(readFileSync(activeBeat, "utf8")),
      );
      const keepAll = ["--keep", "100", "--older-than", "30d"];
      const dry = own.run(["gc", "--json", ...keepAll, "--max-bytes", "260000", "--dry-run"]);
      expect(dry.code).toBe(0);
      expect(dry.json.dry_run).toBe(true);
      expect(dry.json.would_remove).toEqual([finished[0]]);
      expect(dry.json).not.toHaveProperty("removed");
      expect(dry.json.quota_bytes).toBe(260_000);
      expect(dry.json.store_bytes).toBeGreaterThan(250_000);
      expect(dry.json.store_bytes).toBeLessThanOrEqual(260_000);
      expect(own.jobCount()).toBe(4);

      const first = own.run(["gc", "--json", ...keepAll, "--max-bytes", "260000"]);
      const { dry_run: _d, would_remove, ...dryQuota } = dry.json;
      expect(first.json).toEqual({ removed: would_remove, ...dryQuota });
      expect(first.json).not.toHaveProperty("dry_run");
      expect(own.jobCount()).toBe(3);
      expect(existsSync(join(own.dataDir, "jobs", finished[0]!))).toBe(false);

      // Below what the active job alone takes: every finished job goes, the active one stays and gc says why.
      const human = own.run(["gc", ...keepAll, "--max-bytes", "10K"]);
      expect(human.code).toBe(0);
      expect(human.stdout).toContain(`removed 2 finished job(s): ${finished[1]} ${finished[2]}`);
      expect(human.stdout).toContain("still over, because active jobs alone exceed it");
      expect(readdirSync(join(own.dataDir, "jobs"))).toEqual([active]);
      expect(own.status(active).state).toBe("running");

      const none = own.run(["gc", "--json", ...keepAll, "--max-bytes", "0"]);
      expect(none.json).toEqual({ removed: [] });
      own.run(["cancel", "--grace-period", "0", active]);
    } finally {
      own.cleanup();
    }
  });

  test("a bad --max-bytes is refused with the accepted forms, and nothing is removed", () => {
    const own = new Sandbox();
    try {
      own.run(["wait", own.submit(["true"])]);
      const r = own.run(["gc", "--json", "--keep", "0", "--max-bytes", "5 parsecs"]);
      expect(r.code).toBe(2);
      expect(r.json.error.message).toContain("--max-bytes");
      expect(r.json.error.hint).toContain("10GiB");
      expect(own.jobCount()).toBe(1);
    } finally {
      own.cleanup();
    }
  });
});

interface DoctorCheck {
  check: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

describe("doctor", () => {
  test("checks the local set-up, and reports a store over its quota with the fix", () => {
    const own = new Sandbox();
    try {
      const fresh = own.run(["doctor", "--json"]);
      expect(fresh.code).toBe(0);
      const byName = (r: typeof fresh) =>
        Object.fromEntries((r.json.checks as DoctorCheck[]).map((c) => [c.check, c])) as Record<
          string,
          DoctorCheck
        >;
      const checks = byName(fresh);
      for (const name of ["config", "store", "data dir", "housekeeping", "file events", "shell", "setsid"])
        expect(checks[name]).toMatchObject({ ok: true });
      expect(checks.housekeeping!.detail).toContain("the clock starts at the next launch");

      own.writeConfig("[defaults]\nstore_quota_bytes = 4000\n");
      own.run(["wait", own.submit(["head", "-c", "5000", "/dev/zero"])]);
      const over = own.run(["doctor", "--json"]);
      expect(over.code).not.toBe(0);
      const house = byName(over).housekeeping!;
      expect(house.ok).toBe(false);
      expect(house.detail).toMatch(
        /job files take [\d.]+ KiB of the 3\.9 KiB quota; automatic gc every 24 h; next due in/,
      );
      expect(house.fix).toContain("awaitless gc");
      own.run(["gc"]);
      expect(byName(own.run(["doctor", "--json"])).housekeeping!.ok).toBe(true);
    } finally {
      own.cleanup();
    }
  });
});

describe("automatic gc", () => {
  const setAutoGcAt = (sb: Sandbox, iso: string) => {
    const db = new Database(join(sb.dataDir, "store.db"));
    try {
      db.query("UPDATE store_meta SET value = ? WHERE key = 'auto_gc_at'").run(iso);
    } finally {
      db.close();
    }
  };
  const meta = (sb: Sandbox, key: string) => {
    const db = new Database(join(sb.dataDir, "store.db"), { readonly: true });
    try {
      return (db.query("SELECT value FROM store_meta WHERE key = ?").get(key) as { value: string } | null)
        ?.value;
    } finally {
      db.close();
    }
  };

  test("a launch after the interval starts gc in the background with the configured retention", async () => {
    const own = new Sandbox();
    try {
      own.writeConfig("[defaults]\nretention_max_jobs = 1\n");
      const old = [own.submit(["true"]), own.submit(["true"])];
      for (const id of old) own.run(["wait", id]);
      // The first launch started the clock; nothing ran, both finished jobs are still here.
      expect(Date.now() - Date.parse(meta(own, "auto_gc_at")!)).toBeLessThan(60_000);
      expect(meta(own, "auto_gc_pid")).toBeUndefined();
      expect(own.jobCount()).toBe(2);

      setAutoGcAt(own, new Date(Date.now() - 25 * 3_600_000).toISOString());
      // The launch that finds it due runs as `awaitless-mcp` (the MCP name of the binary) with a config path
      // relative to its cwd: the background gc must still be the gc command, reading the same file.
      writeFileSync(join(own.work, "cfg.toml"), "[defaults]\nretention_max_jobs = 1\n");
      const asMcp = join(own.root, "awaitless-mcp");
      symlinkSync(BINARY, asMcp);
      const launched = Bun.spawnSync([asMcp, "submit", "--json", "--", "sleep", "30"], {
        cwd: own.work,
        env: { ...own.env, AWAITLESS_CONFIG: "cfg.toml" },
      });
      expect(launched.exitCode).toBe(0);
      const active = JSON.parse(launched.stdout.toString()).job_id as string;
      const pid = Number(meta(own, "auto_gc_pid"));
      expect(pid).toBeGreaterThan(0);
      try {
        // keep 1 finished job: the older of the two goes; the active one is never touched.
        await until("the background gc", () => (own.jobCount() === 2 ? true : undefined), 20_000);
        const ids = (own.run(["list", "--json"]).json.jobs as { job_id: string }[])
          .map((j) => j.job_id)
          .sort();
        expect(ids).toEqual([old[1]!, active].sort());
        expect(existsSync(join(own.dataDir, "jobs", old[0]!))).toBe(false);
        expect(Date.now() - Date.parse(meta(own, "auto_gc_at")!)).toBeLessThan(60_000);
      } finally {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
      own.run(["cancel", "--grace-period", "0", active]);
    } finally {
      own.cleanup();
    }
  });

  test("auto_gc_interval_hours = 0 never starts one", () => {
    const own = new Sandbox();
    try {
      own.writeConfig("[defaults]\nauto_gc_interval_hours = 0\nretention_max_jobs = 0\n");
      own.run(["wait", own.submit(["true"])]);
      expect(meta(own, "auto_gc_at")).toBeUndefined();
      own.writeConfig("[defaults]\nretention_max_jobs = 0\n");
      own.run(["wait", own.submit(["true"])]); // starts the clock only
      setAutoGcAt(own, "2020-01-01T00:00:00.000Z");
      own.writeConfig("[defaults]\nauto_gc_interval_hours = 0\nretention_max_jobs = 0\n");
      own.run(["wait", own.submit(["true"])]);
      // The claim is made inside the launching process: unchanged means no gc was started.
      expect(meta(own, "auto_gc_at")).toBe("2020-01-01T00:00:00.000Z");
      expect(meta(own, "auto_gc_pid")).toBeUndefined();
      expect(own.jobCount()).toBe(3);
    } finally {
      own.cleanup();
    }
  });
});

describe("files and the binary", () => {
  test("data dir is 0700, database and spec 0600", () => {
    const id = sb.submit(["true"]);
    sb.run(["wait", id]);
    expect(statSync(sb.dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(sb.dataDir, "store.db")).mode & 0o777).toBe(0o600);
    const dir = join(sb.dataDir, "jobs", id);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "spec.sh")).mode & 0o777).toBe(0o600);
  });

  test("the compiled binary runs `demo` from a directory with no node_modules", () => {
    const dir = mkdtempSync(join(tmpdir(), "awl-bin-"));
    try {
      const bin = join(dir, "awaitless");
      copyFileSync(BINARY, bin);
      Bun.spawnSync(["chmod", "755", bin]);
      const r = Bun.spawnSync([bin, "demo", "--json"], {
        cwd: dir,
        env: { PATH: "/usr/bin:/bin", HOME: dir, AWAITLESS_DATA_DIR: join(dir, "data"), NO_COLOR: "1" },
      });
      const out = JSON.parse(r.stdout.toString());
      expect(r.exitCode).toBe(0);
      expect(out.ok).toBe(true);
      expect(out.results[0].artifacts[0].content).toEqual({ passed: 42, failed: 0 });
      expect(existsSync(join(dir, "node_modules"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
