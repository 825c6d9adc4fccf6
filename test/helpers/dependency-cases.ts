// Job dependencies through the compiled binary, the same cases on every target that waits in its wrapper (local,
// SSH): ok/any/failed, parents that already ended, a failed and a cancelled parent (children never run: marker
// files), a chain, cancel of a held child, a killed client while held, bad input. The target supplies the launch.
import { expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CliResult, killQuietly, until } from "./cli.ts";

export interface DependencyTarget {
  /** Runs the CLI (async, so an sshd's pipes keep draining). */
  cli(args: string[]): Promise<CliResult>;
  /** Flags that put a launch on this target (e.g. --backend ssh --host ALIAS). */
  launchFlags: string[];
  /** Where the commands' working directory is, as this test process sees it (gate and marker files). */
  dir: string;
  /** Spawns a CLI process (to be killed by PID). */
  spawn(args: string[]): { pid: number; exited: Promise<number> };
}

let seq = 0;

export function dependencyCases(target: () => DependencyTarget): void {
  const t = () => target();
  const tag = () => `d${process.pid}-${++seq}`;
  const submit = async (argv: string[], flags: string[] = []): Promise<string> => {
    const r = await t().cli(["submit", "--json", ...t().launchFlags, ...flags, "--", ...argv]);
    if (r.code !== 0) throw new Error(`submit failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.json.job_id as string;
  };
  const status = async (id: string) => {
    const r = await t().cli(["status", "--json", id]);
    if (r.code !== 0) throw new Error(`status failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.json;
  };
  const waitEnd = async (id: string) => {
    const r = await t().cli(["wait", "--json", "--timeout", "60s", id]);
    expect(r.json?.job?.state ?? r.json?.state).toBeDefined();
    return r.json.job ?? r.json;
  };
  /** A parent that ends with `code` once its gate file exists (bounded: 60 s). */
  const gatedParent = async (name: string, code: number) =>
    submit([
      "sh",
      "-c",
      `i=0; while [ ! -e gate-${name} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; exit ${code}`,
    ]);
  const open = (name: string) => writeFileSync(join(t().dir, `gate-${name}`), "");
  const marker = (name: string) => join(t().dir, `ran-${name}`);
  const child = (name: string, after: string[]) =>
    submit(
      ["sh", "-c", `touch ran-${name}`],
      after.flatMap((a) => ["--after", a]),
    );
  const held = async (id: string, says: string) =>
    until(`${id} held with "${says}"`, async () => {
      const s = await status(id);
      return s.state === "queued" && String(s.status_message).includes(says) && s;
    });

  test("ok: held queued, saying what it waits for, until the parent succeeds; then it runs", async () => {
    const n = tag();
    const p = await gatedParent(n, 0);
    const c = await child(n, [p]);
    const s = await held(c, `waiting for ${p} to succeed`);
    expect(s.started_at ?? null).toBeNull();
    expect(s.after).toEqual([`${p}:ok`]);
    expect((await t().cli(["inspect", "--json", p])).json.dependents).toEqual([`${c}:ok`]);
    expect(existsSync(marker(n))).toBe(false);
    const listed = (await t().cli(["list", "--json", "--state", "active"])).json.jobs;
    expect(listed.find((j: { job_id: string }) => j.job_id === c)?.state).toBe("queued");
    open(n);
    expect((await waitEnd(c)).state).toBe("succeeded");
    expect(existsSync(marker(n))).toBe(true);
  });

  test("a parent that fails: ok → cancelled/dependency_failed (never ran), any and failed run", async () => {
    const n = tag();
    const p = await gatedParent(n, 3);
    const ok = await child(`${n}-ok`, [`${p}:ok`]);
    const any = await child(`${n}-any`, [`${p}:any`]);
    const failed = await child(`${n}-failed`, [`${p}:failed`]);
    await held(failed, `waiting for ${p} to fail`);
    await held(any, `waiting for ${p} to end`);
    open(n);
    const r = await waitEnd(ok);
    expect(r.state).toBe("cancelled");
    expect(r.reason).toBe("dependency_failed");
    expect(r.exit_code).toBeNull();
    expect(r.error.detail).toBe(`after ${p}:ok`);
    expect((await waitEnd(any)).state).toBe("succeeded");
    expect((await waitEnd(failed)).state).toBe("succeeded");
    expect(existsSync(marker(`${n}-ok`))).toBe(false);
    expect(existsSync(marker(`${n}-any`))).toBe(true);
    expect(existsSync(marker(`${n}-failed`))).toBe(true);
  });

  test("a parent that succeeds: a :failed child is dependency_failed and never runs", async () => {
    const n = tag();
    const p = await gatedParent(n, 0);
    const c = await child(n, [`${p}:failed`]);
    await held(c, "to fail");
    open(n);
    const r = await waitEnd(c);
    expect([r.state, r.reason]).toEqual(["cancelled", "dependency_failed"]);
    expect(existsSync(marker(n))).toBe(false);
  });

  test("a failure propagates down a chain: every descendant is dependency_failed, none ran", async () => {
    const n = tag();
    const p = await gatedParent(n, 1);
    const c1 = await child(`${n}-1`, [p]);
    const c2 = await child(`${n}-2`, [c1]);
    await held(c2, `waiting for ${c1}`);
    open(n);
    expect((await waitEnd(c2)).reason).toBe("dependency_failed");
    expect((await waitEnd(c1)).reason).toBe("dependency_failed");
    expect(existsSync(marker(`${n}-1`))).toBe(false);
    expect(existsSync(marker(`${n}-2`))).toBe(false);
  });

  test("parents that already ended are resolved at submit", async () => {
    const n = tag();
    const good = await submit(["true"]);
    const bad = await submit(["false"]);
    await waitEnd(good);
    await waitEnd(bad);
    const now = await child(`${n}-now`, [good, `${bad}:failed`]);
    expect((await waitEnd(now)).state).toBe("succeeded");
    expect(existsSync(marker(`${n}-now`))).toBe(true);
    const never = await child(`${n}-never`, [bad]);
    const r = await waitEnd(never);
    expect([r.state, r.reason]).toEqual(["cancelled", "dependency_failed"]);
    expect(r.error.detail).toBe(`after ${bad}:ok`);
    expect(existsSync(marker(`${n}-never`))).toBe(false);
  });

  test("a cancelled parent: ok → dependency_failed, any runs", async () => {
    const n = tag();
    const p = await gatedParent(n, 0);
    const ok = await child(`${n}-ok`, [p]);
    const any = await child(`${n}-any`, [`${p}:any`]);
    await held(any, "to end");
    expect((await t().cli(["cancel", "--grace-period", "0", p])).code).toBe(0);
    expect((await waitEnd(ok)).reason).toBe("dependency_failed");
    expect((await waitEnd(any)).state).toBe("succeeded");
    expect(existsSync(marker(`${n}-ok`))).toBe(false);
    expect(existsSync(marker(`${n}-any`))).toBe(true);
    open(n);
  });

  test("cancel of a held child: cancelled at once; its command never starts, even when the parent succeeds", async () => {
    const n = tag();
    const p = await gatedParent(n, 0);
    const c = await child(n, [p]);
    await held(c, "to succeed");
    expect((await t().cli(["cancel", c])).code).toBe(0);
    const r = await waitEnd(c);
    expect([r.state, r.reason, r.exit_code]).toEqual(["cancelled", "cancelled", null]);
    open(n);
    expect((await waitEnd(p)).state).toBe("succeeded");
    expect(existsSync(marker(n))).toBe(false);
  });

  test("no client needed: the waiting client killed while the child is held, it still starts when the parent ends", async () => {
    const n = tag();
    const p = await gatedParent(n, 0);
    const c = await child(n, [p]);
    await held(c, "to succeed");
    const waiter = t().spawn(["wait", c]);
    killQuietly(waiter.pid);
    await waiter.exited;
    open(n);
    // Only the wrappers act now: the marker appears with no awaitless process running.
    await until("the child's command to run", () => existsSync(marker(n)), 30_000);
    expect((await waitEnd(c)).state).toBe("succeeded");
  });

  test("bad dependencies are refused before anything is created", async () => {
    const before = (await t().cli(["list", "--json", "--limit", "10000"])).json.jobs.length;
    const p = await submit(["true"]);
    for (const [after, says] of [
      ["nonsense", "bad dependency nonsense"],
      [`${p}:sometimes`, "bad dependency"],
      ["job_01ZZZZZZZZZZZZZZZZZZZZZZZZ", "no job job_01ZZZZZZZZZZZZZZZZZZZZZZZZ"],
    ] as const) {
      const r = await t().cli(["submit", ...t().launchFlags, "--after", after, "--", "true"]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(says);
    }
    const r = await t().cli([
      "submit",
      ...t().launchFlags,
      "--after",
      p,
      "--after",
      `${p}:any`,
      "--",
      "true",
    ]);
    expect(r.stderr).toContain("given twice");
    expect((await t().cli(["list", "--json", "--limit", "10000"])).json.jobs.length).toBe(before + 1);
  });
}
