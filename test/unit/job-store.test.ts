import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newJobId } from "../../src/core/model/ids.ts";
import type { JobSpec } from "../../src/core/model/job.ts";
import { JobStore, type NewJob, SCHEMA_VERSION } from "../../src/core/store/job-store.ts";
import { plainSpec } from "../helpers/spec.ts";

const dir = mkdtempSync(join(tmpdir(), "awl-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const spec: JobSpec = plainSpec();

function newJob(over: Partial<NewJob> = {}): NewJob {
  const id = newJobId();
  return {
    job_id: id,
    state: "starting",
    spec,
    fingerprint: "fp-1",
    client_request_id: null,
    active_key: `key-${id}`,
    created_at: new Date().toISOString(),
    job_dir: join(dir, id),
    ...over,
  };
}

const terminal = (json = "{}") => ({
  exit_code: 0,
  signal: null,
  reason: null,
  finished_at: new Date().toISOString(),
  stdout_bytes: 0,
  stderr_bytes: 0,
  result_json: json,
  result_sha256: "x",
});

describe("JobStore", () => {
  const store = JobStore.open(join(dir, "data"));

  test("creates a 0700 data dir and a 0600 WAL database at the current schema", () => {
    expect(statSync(join(dir, "data")).mode & 0o777).toBe(0o700);
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    const raw = new Database(store.path);
    expect((raw.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
    expect((raw.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(
      SCHEMA_VERSION,
    );
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(1);
    raw.close();
  });

  test("automatic gc: the first claim starts the clock, a due claim wins once, the interval then restarts", () => {
    const own = JobStore.open(join(dir, "auto-gc"));
    const other = JobStore.open(join(dir, "auto-gc"));
    const t0 = new Date("2026-01-01T00:00:00Z");
    const at = (hours: number) => new Date(t0.getTime() + hours * 3_600_000);
    expect(own.meta.claimAutoGc(86_400, t0)).toBe(false);
    expect(own.meta.get("auto_gc_at")).toBe(t0.toISOString());
    expect(other.meta.claimAutoGc(86_400, at(23.9))).toBe(false);
    // Due: of two clients (two connections, as two processes would have) exactly one claims it.
    expect([own.meta.claimAutoGc(86_400, at(24)), other.meta.claimAutoGc(86_400, at(24))]).toEqual([
      true,
      false,
    ]);
    expect(other.meta.get("auto_gc_at")).toBe(at(24).toISOString());
    expect(own.meta.claimAutoGc(86_400, at(47))).toBe(false);
    expect(other.meta.claimAutoGc(86_400, at(48))).toBe(true);
    // A value edited into something unparseable restarts the clock instead of stopping it for good.
    own.meta.set("auto_gc_at", "yesterday-ish");
    expect(own.meta.claimAutoGc(86_400, at(49))).toBe(true);
    expect(own.meta.get("auto_gc_at")).toBe(at(49).toISOString());
  });

  test("reopening migrates nothing twice", () => {
    const again = JobStore.open(join(dir, "data"));
    expect(again.gc.countJobs()).toBe(store.gc.countJobs());
    again.close();
  });

  test("client_request_id: same fingerprint replays, other fingerprint conflicts", () => {
    const a = store.reserve(newJob({ client_request_id: "k1" }), false);
    expect(a.kind).toBe("created");
    const b = store.reserve(newJob({ client_request_id: "k1" }), false);
    expect(b).toMatchObject({ kind: "replay", job: { job_id: a.job.job_id } });
    const c = store.reserve(newJob({ client_request_id: "k1", fingerprint: "fp-2" }), false);
    expect(c).toMatchObject({ kind: "conflict", job: { job_id: a.job.job_id } });
  });

  test("duplicate guard only while the first is active, and only when asked", () => {
    const first = store.reserve(newJob({ active_key: "dup" }), false);
    expect(store.reserve(newJob({ active_key: "dup" }), false).kind).toBe("duplicate");
    expect(store.reserve(newJob({ active_key: "dup" }), true).kind).toBe("created");
    store.transition(first.job.job_id, "succeeded", { terminal: terminal() });
  });

  test("terminal state is immutable and writes exactly one completion", () => {
    const j = store.reserve(newJob(), false).job;
    expect(store.transition(j.job_id, "running", {}).changed).toBe(true);
    expect(store.transition(j.job_id, "failed", { terminal: terminal('{"a":1}') }).changed).toBe(true);
    const again = store.transition(j.job_id, "cancelled", { terminal: terminal('{"b":2}') });
    expect(again.changed).toBe(false);
    expect(again.job.state).toBe("failed");
    expect(store.get(j.job_id)!.result_json).toBe('{"a":1}');
    expect(store.completionsAfter([j.job_id], 0, 10).length).toBe(1);
    expect(store.history(j.job_id).map((h) => h.to_state)).toEqual(["starting", "running", "failed"]);
  });

  test("a second process-like connection sees committed writes; cursors are monotonic", () => {
    const other = JobStore.open(join(dir, "data"));
    const ids = [store.reserve(newJob(), false).job.job_id, store.reserve(newJob(), false).job.job_id];
    other.transition(ids[1]!, "succeeded", { terminal: terminal() });
    store.transition(ids[0]!, "succeeded", { terminal: terminal() });
    const rows = store.completionsAfter(ids, 0, 10);
    expect(rows.map((r) => r.job_id)).toEqual([ids[1]!, ids[0]!]);
    expect(rows[0]!.seq).toBeLessThan(rows[1]!.seq);
    other.close();
  });

  test("list is newest first and filters by state and name", () => {
    const named = store.reserve(newJob({ spec: { ...spec, name: "nightly" } }), false).job;
    expect(store.list({ limit: 1 })[0]!.job_id).toBe(named.job_id);
    expect(store.list({ name: "nightly", limit: 10 }).map((j) => j.job_id)).toEqual([named.job_id]);
    expect(store.list({ states: ["succeeded"], limit: 100 }).every((j) => j.state === "succeeded")).toBe(
      true,
    );
  });
});
