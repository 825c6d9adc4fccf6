// SSH, through the compiled binary against a private sshd (dash and busybox login shells): a job whose remote
// wrapper was killed (`lost`) has its command's group stopped by `cancel` when the leader's start time matches
// started's pid_start and it carries the job's ID (one TERM, KILL after the grace); a group that `started` names
// falsely is left alone while the job's own processes, found by their environment, are still stopped.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, pidAlive, until } from "../helpers/cli.ts";
import { startTime, untouched } from "../helpers/proc-state.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { termCounter, termsIn } from "../helpers/term-counter.ts";
import { groupMembers, remoteFile, type SshWorld, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability("SSH cancel of a lost job (private OpenSSH server)", sshdAvailable());

let w: SshWorld;
if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
  });
  afterAll(async () => {
    await w?.close();
  });
}

describe.each(runE2e ? (["dash", "busybox"] as const) : [])(
  "cancel of a lost SSH job as the %s user",
  (kind) => {
    /** A remote job whose wrapper (and monitor) got SIGKILL while its command, ignoring TERM, runs on. */
    async function lostJob(): Promise<{ id: string; dir: string; pgid: number }> {
      const id = w.sb.submit(termCounter('"$AWAITLESS_JOB_DIR"', { ignoreTerm: true }), [
        "--backend",
        "ssh",
        "--host",
        w.alias[kind],
      ]);
      const dir = w.sb.status(id).backend_id.remote_dir as string;
      const started = await until("started record", () => remoteFile(dir, "started"));
      const wrapperPid = Number(/^wrapper_pid=(\d+)$/m.exec(started)?.[1]);
      const monitorPid = Number(/^monitor_pid=(\d+)$/m.exec(started)?.[1]);
      const pgid = Number(/^pgid=(\d+)$/m.exec(started)?.[1]);
      await until("the command's ready", () => remoteFile(dir, "stdout")?.includes("ready"));
      killQuietly(wrapperPid);
      killQuietly(monitorPid);
      await until("the wrapper to die", () => !pidAlive(wrapperPid));
      await until("the job to be lost", () => w.sb.status(id).state === "lost");
      return { id, dir, pgid };
    }

    test("the group is stopped: one TERM, KILL after the grace; the job stays lost", async () => {
      const { id, dir, pgid } = await lostJob();
      try {
        const c = w.sb.run(["cancel", "--json", "--grace-period", "1s", id]);
        expect(c.code).toBe(0);
        expect(c.json.job_state).toBe("lost");
        expect(c.json.leftover.action).toBe("signalled");
        await until("the remote group to be gone", () => groupMembers(pgid).length === 0);
        expect(termsIn(dir)).toBe(1);
        expect(w.sb.status(id).state).toBe("lost");
      } finally {
        for (const p of groupMembers(pgid)) killQuietly(p);
      }
    }, 60_000);

    test("started naming an unrelated live group with its true start time: that group runs on; the job's own command (it carries the job's ID) is stopped", async () => {
      const { id, dir, pgid } = await lostJob();
      const canary = Bun.spawn(["sleep", "300"], { detached: true, stdio: ["ignore", "ignore", "ignore"] });
      try {
        const text = remoteFile(dir, "started")!
          .replace(/^pid=.*$/m, `pid=${canary.pid}`)
          .replace(/^pgid=.*$/m, `pgid=${canary.pid}`)
          .replace(/^pid_start=.*$/m, `pid_start=${startTime(canary.pid)}`);
        writeFileSync(join(dir, "started"), text);
        const c = w.sb.run(["cancel", "--json", "--grace-period", "1s", id]);
        expect(c.code).toBe(0);
        expect(c.json.leftover.action).toBe("signalled");
        expect(c.json.leftover.detail).toContain("no process group");
        await until("the job's own command to be stopped", () => groupMembers(pgid).length === 0);
        expect(termsIn(dir)).toBe(1);
        expect(untouched(canary.pid)).toBe(true);
      } finally {
        for (const p of groupMembers(pgid)) killQuietly(p);
        killQuietly(canary.pid);
      }
    }, 60_000);
  },
);
