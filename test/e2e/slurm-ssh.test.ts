// The Slurm backend as a non-root user (awl-dash, login shell dash) over the private sshd: the outcomes of
// slurm-backend.test.ts that depend on the transport, through an SshRunner inside the harness's counting runner.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { slurmCommentTag } from "../../src/backends/slurm/sbatch-script.ts";
import { findTaggedJobs, parseSacct, sacctMineArgs } from "../../src/backends/slurm/slurm-queries.ts";
import { gateOnAvailability, type SshdHandle, sshdAvailable, startSshd } from "../helpers/sshd.ts";
import { type Rig, run, sacctState, slurmUp, until } from "./slurm-harness.ts";
import { makeSshRig, SSH_CLUSTER } from "./slurm-ssh-rig.ts";

const up = (await slurmUp("Slurm over SSH e2e")) && gateOnAvailability("Slurm over SSH e2e", sshdAvailable());

describe.skipIf(!up)("Slurm over SSH as a non-root user", () => {
  let sshd: SshdHandle;
  let rig: Rig;
  const slurmIds: string[] = [];

  beforeAll(async () => {
    sshd = await startSshd({ users: ["awl-dash"] });
    rig = makeSshRig(sshd);
  });
  afterAll(async () => {
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds]);
    rig?.close();
    await sshd?.stop();
  });

  const slurmIdOf = (jobId: string) =>
    (rig.service.getJob(jobId).backend_id as { slurm_job_id?: string } | null)?.slurm_job_id ?? "";
  const submit = async (argv: string[], slurmOptions: Record<string, string | number> = {}) => {
    const r = await rig.service.submit({
      argv,
      backend: "slurm",
      host: SSH_CLUSTER,
      slurm_options: { mem: "32M", ...slurmOptions },
      allow_duplicate: true,
    });
    const id = slurmIdOf(r.job_id);
    if (id) slurmIds.push(id);
    return { jobId: r.job_id, slurmJobId: id };
  };
  const waitDone = (jobId: string, timeoutMs = 30_000) => rig.service.wait(jobId, { timeoutMs });
  const waitRunning = (jobId: string, timeoutMs: number) =>
    until(
      "the job running",
      async () => ((await rig.service.refresh(jobId)).state === "running" ? true : undefined),
      timeoutMs,
    );

  test("success and exit 7, run as the SSH user in its home directory", async () => {
    const ok = await submit(["sh", "-c", 'echo "I am $(id -un) in $(pwd)"']);
    const seven = await submit(["sh", "-c", "exit 7"]);
    const a = await waitDone(ok.jobId);
    expect(a.job_state).toBe("succeeded");
    expect(a.stdout_tail).toContain(`I am ${sshd.users.dash} in /home/${sshd.users.dash}`);
    const b = await waitDone(seven.jobId);
    expect(b.job_state).toBe("failed");
    expect(b.exit_code).toBe(7);
    expect(b.reason).toBe("nonzero_exit");
  }, 60_000);

  test("signal death → failed, signal KILL, exit 137", async () => {
    const j = await submit(["sh", "-c", "kill -KILL $$"]);
    const w = await waitDone(j.jobId);
    expect(w.job_state).toBe("failed");
    expect(w.signal).toBe("KILL");
    expect(w.exit_code).toBe(137);
  }, 60_000);

  test("held job shows its pending reason; cancel while pending never starts it; cancel while running", async () => {
    // a blocker on every CPU of the node makes the next job pend; then an admin hold names the reason
    const cpus = Number((await run(["sinfo", "--noheader", "--format=%c"])).stdout.trim().split("\n")[0]);
    expect(cpus).toBeGreaterThan(0);
    const blocker = await submit(["sleep", "300"], { cpus_per_task: cpus });
    await waitRunning(blocker.jobId, 45_000);
    const held = await submit(["sh", "-c", "echo should-never-run"]);
    expect((await run(["scontrol", "hold", held.slurmJobId])).code).toBe(0);
    const shown = await until(
      "the hold reason in status_message",
      async () => {
        const j = await rig.service.refresh(held.jobId);
        return j.status_message?.includes("JobHeld") ? j : undefined;
      },
      15_000,
    );
    expect(shown.state).toBe("queued");
    expect(shown.status_message).toContain(`Slurm job ${held.slurmJobId} pending`);

    const c1 = await rig.service.cancel(held.jobId, 1);
    expect(c1.job_state).toBe("cancelled");
    expect((await sacctState(held.slurmJobId)).startsWith("CANCELLED")).toBe(true);
    const dir = (rig.service.getJob(held.jobId).backend_id as { remote_dir: string }).remote_dir;
    expect(dir.startsWith(`/home/${sshd.users.dash}/`)).toBe(true);

    const c2 = await rig.service.cancel(blocker.jobId, 1);
    expect(c2.job_state).toBe("cancelled");
    expect(c2.result?.reason).toBe("cancelled");
    await until(
      "sacct CANCELLED for the blocker",
      async () => ((await sacctState(blocker.slurmJobId)).startsWith("CANCELLED") ? true : undefined),
      10_000,
    );
    // the held job never ran, even after the node freed up
    expect(existsSync(join(dir, "started"))).toBe(false);
  }, 90_000);

  test("a lost sbatch reply is adopted by tag: exactly one Slurm job carries the tag", async () => {
    rig.runner.cutAfter = "sbatch";
    const before = rig.runner.count("sbatch");
    const j = await submit(["sh", "-c", "echo adopted over ssh"]);
    expect(rig.runner.count("sbatch")).toBe(before + 1);
    const job = rig.service.getJob(j.jobId);
    expect((job.backend_id as { adopted?: boolean }).adopted).toBe(true);
    expect(j.slurmJobId).toMatch(/^\d+$/);
    const w = await waitDone(j.jobId);
    expect(w.job_state).toBe("succeeded");
    expect(w.stdout_tail).toContain("adopted over ssh");
    expect(rig.runner.count("sbatch")).toBe(before + 1);
    // what the SSH user's own sacct says (not counted: the inner runner)
    const tagged = await until(
      "the tagged job in sacct",
      async () => {
        const r = await rig.runner.inner.exec(sacctMineArgs(new Date(Date.parse(job.created_at))), {
          timeoutMs: 30_000,
        });
        const rows = parseSacct(r.stdout).filter(
          (row) => row.step === undefined && row.comment === slurmCommentTag(j.jobId),
        );
        return rows.length > 0 ? findTaggedJobs(rows, j.jobId) : undefined;
      },
      15_000,
    );
    expect(tagged).toEqual([j.slurmJobId]);
  }, 60_000);

  test("60 s interval and floor: the login node's watch channel ends the wait, one sacct confirms, no round", async () => {
    const slow = makeSshRig(sshd, { pollIntervalMs: 60_000 });
    // a directory the SSH user can look into: the job waits for a file the test creates there
    const gate = mkdtempSync(join(tmpdir(), "awl-slurm-gate-"));
    chmodSync(gate, 0o755);
    const marker = join(gate, "go");
    try {
      const { job_id: id } = await slow.service.submit({
        argv: ["sh", "-c", `while [ ! -e ${marker} ]; do sleep 0.2; done; exit 6`],
        backend: "slurm",
        host: SSH_CLUSTER,
        slurm_options: { mem: "32M" },
        allow_duplicate: true,
      });
      const bid = slow.service.getJob(id).backend_id as { slurm_job_id: string; remote_dir: string };
      slurmIds.push(bid.slurm_job_id);
      await until(
        "the wrapper's started record",
        () => existsSync(join(bid.remote_dir, "started")),
        90_000,
        100,
      );
      const waited = slow.service.wait(id, { timeoutMs: 25_000 });
      const exitAt = Date.now();
      writeFileSync(marker, "");
      const r = await waited;
      // the floor keeps the next round 60 s away: only the watch channel (and sacct for this job) ends it in 25 s
      expect(r.job_state).toBe("failed");
      expect(r.exit_code).toBe(6);
      expect(slow.runner.calls.filter((c) => c.atMs >= exitAt && c.program === "squeue")).toHaveLength(0);
      expect(
        slow.runner.calls.filter((c) => c.atMs >= exitAt && c.program === "sacct").length,
      ).toBeGreaterThan(0);
      expect(slow.service.getJob(id).backend_id).toMatchObject({ completion: "watch" });
    } finally {
      slow.close();
      rmSync(gate, { recursive: true, force: true });
    }
  }, 180_000);
});
