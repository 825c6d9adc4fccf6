// Real faults on the test cluster, through the compiled binary: preemption with requeue, a node lost mid-job, the
// controller restarted mid-job, and an sbatch whose reply never comes (adopted by tag, never submitted twice).
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, pidAlive, type Sandbox, until } from "../helpers/cli.ts";
import {
  faultRigUp,
  HIGH,
  LOW,
  NODE2,
  recordedController,
  resumeNode,
  sacctRuns,
  scontrolField,
  slurmSandbox,
  squeueState,
  startController,
  stopController,
  taggedSlurmJobs,
} from "./slurm-faults-rig.ts";
import { run, slurmJobIdOf } from "./slurm-harness.ts";

const up = await faultRigUp("Slurm fault e2e");

describe.skipIf(!up)("real faults on the test cluster", () => {
  const slurmIds: string[] = [];
  const sandboxes: Sandbox[] = [];
  const sandbox = (extra = "") => {
    const s = slurmSandbox(extra);
    sandboxes.push(s);
    return s;
  };
  /** A job's Slurm ID once recorded (an unconfirmed sbatch reply leaves it unset until a status adopts the job). */
  const slurmIdOf = async (s: Sandbox, id: string) => {
    const sid = await slurmJobIdOf(() => s.status(id));
    slurmIds.push(sid);
    return sid;
  };
  afterEach(async () => {
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds.splice(0)]);
    await resumeNode(NODE2);
  });
  afterAll(async () => {
    if (recordedController() === undefined && !/UP/.test((await run(["scontrol", "ping"])).stdout))
      await startController();
    for (const s of sandboxes) s.cleanup();
  });

  test("preempted by a higher-priority partition: requeued (state kept, status says so), then the second run's result", async () => {
    const s = sandbox();
    const go = join(s.work, "high-done");
    const id = s.submit(
      [
        "sh",
        "-c",
        'if [ -e first-ran ]; then echo "second run"; exit 0; fi; : > first-ran; echo "first run"; sleep 150',
      ],
      [
        "--host",
        "localhost",
        "--slurm-option",
        `partition=${LOW}`,
        "--slurm-option",
        "time=5",
        // the whole node, so the high job can only run by preempting this one
        "--slurm-option",
        "exclusive=yes",
      ],
    );
    const sid = await slurmIdOf(s, id);
    expect(await scontrolField(sid, "OverSubscribe")).toBe("NO");
    await until("the low-priority job running", () => s.status(id).state === "running", 45_000, 200);

    const high = await run([
      "sbatch",
      "--parsable",
      `--partition=${HIGH}`,
      "--output=/dev/null",
      `--wrap=while [ ! -e ${go} ]; do sleep 0.2; done`,
    ]);
    expect(high.code).toBe(0);
    const highId = high.stdout.trim().split(";")[0]!;
    slurmIds.push(highId);

    // Slurm preempts and requeues it: the job stays running (it ran before), the status message says why
    const seen = await until(
      "the requeue reported",
      async () => {
        const st = s.status(id);
        // "…; Slurm requeued it and will run it again" while sacct's last record is PREEMPTED (a few seconds);
        // after that sacct has the next run's PENDING record and the message says why it is pending
        const said = /requeued|pending/i.test(String(st.status_message ?? ""));
        return said && (await sacctRuns(sid))[0] === "PREEMPTED|0:0" ? st : undefined;
      },
      45_000,
      200,
    );
    expect(seen.state).toBe("running");
    console.log(`[preemption] status while requeued: ${seen.status_message}`);
    // the preempted run is torn down (KillWait), then the high job gets the node
    await until(
      "the high-priority job running",
      async () => (await squeueState(highId)) === "RUNNING",
      30_000,
      200,
    );
    expect((await sacctRuns(sid))[0]).toBe("PREEMPTED|0:0");

    // the high job ends; Slurm holds a requeued job back for about two minutes (BeginTime), so start it now
    writeFileSync(go, "");
    await until("the high-priority job gone", async () => (await squeueState(highId)) === "", 30_000, 200);
    await until(
      "the requeued job eligible",
      async () => (await run(["scontrol", "update", `jobid=${sid}`, "starttime=now"])).code === 0,
      10_000,
      200,
    );
    const w = await s.runAsync(["wait", "--json", "--timeout", "90s", id]);
    expect(w.json.state).toBe("succeeded");
    expect(w.json.exit_code).toBe(0);
    expect(w.json.stdout_tail).toContain("first run\nsecond run");
    expect(s.status(id).backend_id.slurm_job_id).toBe(sid);
    expect(await sacctRuns(sid)).toEqual(["PREEMPTED|0:0", "COMPLETED|0:0"]);
    // the second run's wrapper moved the first run's records aside before writing its own
    const dir = String(s.status(id).backend_id.remote_dir);
    const epoch = (text: string, key: string) => Number(new RegExp(`^${key}=(\\d+)$`, "m").exec(text)?.[1]);
    const first = readFileSync(join(dir, "started.earlier"), "utf8");
    const second = readFileSync(join(dir, "started"), "utf8");
    expect(epoch(first, "started_at")).toBeLessThan(epoch(second, "started_at"));
    expect(epoch(first, "wrapper_pid")).not.toBe(epoch(second, "wrapper_pid"));
  }, 150_000);

  test("the node is lost mid-job (set DOWN): failed, reason node_fail", async () => {
    const s = sandbox();
    const id = s.submit(
      ["sh", "-c", "echo on-node2; sleep 150"],
      ["--host", "localhost", "--slurm-option", `partition=${LOW}`, "--slurm-option", "time=5"],
    );
    const sid = await slurmIdOf(s, id);
    await until("the job running", () => s.status(id).state === "running", 45_000, 200);
    // a job that may not be requeued (JobRequeue=0 sites, --no-requeue); a requeueable one goes the preemption way
    expect((await run(["scontrol", "update", `jobid=${sid}`, "requeue=0"])).code).toBe(0);
    const down = await run([
      "scontrol",
      "update",
      `nodename=${NODE2}`,
      "state=down",
      "reason=awaitless-fault-test",
    ]);
    expect(down.code).toBe(0);

    const w = await s.runAsync(["wait", "--json", "--timeout", "60s", id]);
    expect(w.json.state).toBe("failed");
    expect(w.json.reason).toBe("node_fail");
    expect(JSON.stringify(w.json.error)).toMatch(/node/i);
    expect(w.json.stdout_tail).toContain("on-node2");
    expect(await sacctRuns(sid)).toEqual(["NODE_FAIL|0:0"]);
  }, 120_000);

  test("slurmctld restarted mid-job: nothing lost, results arrive after (one finished while it was down)", async () => {
    const pid = recordedController();
    if (pid === undefined) {
      console.warn(
        "[skip] controller restart: slurmctld was not started by test/infra/slurm-up.sh (no live pid file)",
      );
      return;
    }
    const s = sandbox();
    const goA = join(s.work, "go-a");
    const goB = join(s.work, "go-b");
    // on the second node: the default partition may be busy with other tests' jobs
    const flags = ["--host", "localhost", "--slurm-option", `partition=${LOW}`, "--slurm-option", "mem=32M"];
    const a = s.submit(["sh", "-c", `while [ ! -e ${goA} ]; do sleep 0.2; done; echo A-done; exit 3`], flags);
    const b = s.submit(["sh", "-c", `while [ ! -e ${goB} ]; do sleep 0.2; done; echo B-done`], flags);
    const [sa, sb] = [await slurmIdOf(s, a), await slurmIdOf(s, b)];
    await until(
      "both jobs running",
      () => s.status(a).state === "running" && s.status(b).state === "running",
      60_000,
      200,
    );

    const aDir = String(s.status(a).backend_id.remote_dir);
    await stopController(pid);
    let restarted = false;
    try {
      // A ends while the controller is away: its exit record is there, Slurm cannot be asked
      writeFileSync(goA, "");
      await until("A's exit record", () => existsSync(join(aDir, "exit")), 30_000, 100);
      const during = s.run(["status", "--json", b]);
      console.log(
        `[restart] status of B while slurmctld is down: exit ${during.code} ${during.stdout.trim().slice(0, 600)} ${during.stderr.trim().slice(0, 300)}`,
      );
      // B is not given up on: still running, or the client says the scheduler did not answer (exit 7)
      if (during.code === 0) expect(during.json.state).toBe("running");
      else expect(during.code).toBe(7);
      await startController();
      restarted = true;
    } finally {
      if (!restarted) await startController();
    }
    // B ends after the restart
    writeFileSync(goB, "");
    const [wa, wb] = await Promise.all([
      s.runAsync(["wait", "--json", "--timeout", "60s", a]),
      s.runAsync(["wait", "--json", "--timeout", "60s", b]),
    ]);
    expect([wa.json.state, wa.json.exit_code]).toEqual(["failed", 3]);
    expect(wa.json.stdout_tail).toContain("A-done");
    expect([wb.json.state, wb.json.exit_code]).toEqual(["succeeded", 0]);
    expect(wb.json.stdout_tail).toContain("B-done");
    // Slurm itself lost nothing either: each job ran once and ended (the batch shell, our wrapper, exits 0 when the
    // command succeeded and 1 otherwise, so that afterok means succeeded; the command's own code is in its exit record)
    await until(
      "sacct final for both",
      async () => {
        const [ra, rb] = [await sacctRuns(sa), await sacctRuns(sb)];
        return ra.join() === "FAILED|1:0" && rb.join() === "COMPLETED|0:0";
      },
      30_000,
      250,
    );
  }, 150_000);

  test("an sbatch that times out after submitting: the job is adopted by its tag, never submitted twice", async () => {
    const s = sandbox("operation_timeout = 3\n");
    const bin = join(s.root, "fake-bin");
    mkdirSync(bin);
    const calls = join(s.root, "sbatch-calls");
    const pids = join(s.root, "sbatch-pids");
    const real = (await run(["sh", "-c", "command -v sbatch"])).stdout.trim();
    // submits for real, then hangs without exiting (as an overloaded controller's reply that never comes)
    writeFileSync(
      join(bin, "sbatch"),
      `#!/bin/sh\necho "$$" >> '${pids}'\necho call >> '${calls}'\n'${real}' "$@" > /dev/null\nexec sleep 120\n`,
    );
    chmodSync(join(bin, "sbatch"), 0o755);
    try {
      const since = new Date();
      const r = await s.runAsync(
        [
          "submit",
          "--json",
          "--host",
          "localhost",
          "--slurm-option",
          `partition=${LOW}`,
          "--slurm-option",
          "mem=32M",
          "--",
          "sh",
          "-c",
          "echo adopted-ok",
        ],
        { env: { PATH: `${bin}:${process.env.PATH}` } },
      );
      expect(r.code).toBe(0);
      const id = r.json.job_id as string;
      const sid = await slurmIdOf(s, id);
      const st = s.status(id);
      expect(sid).toMatch(/^\d+$/);
      expect(st.backend_id.adopted).toBe(true);
      const w = await s.runAsync(["wait", "--json", "--timeout", "60s", id]);
      expect(w.json.state).toBe("succeeded");
      expect(w.json.stdout_tail).toContain("adopted-ok");
      expect(readFileSync(calls, "utf8")).toBe("call\n");
      // sacct fills in the name and comment of a finished job a little later
      const tagged = await until(
        "the tagged job in sacct",
        async () => {
          const ids = await taggedSlurmJobs(id, since);
          return ids.length > 0 ? ids : undefined;
        },
        20_000,
        250,
      );
      expect(tagged).toEqual([sid]);
    } finally {
      for (const p of existsSync(pids) ? readFileSync(pids, "utf8").trim().split("\n") : []) {
        if (pidAlive(Number(p))) killQuietly(Number(p));
      }
    }
  }, 90_000);
});
