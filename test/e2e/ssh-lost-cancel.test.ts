// SSH, through the compiled binary against a private sshd (dash and busybox login shells): a job whose remote
// wrapper was killed (`lost`) has its command's group stopped by `cancel` when the leader's start time matches
// started's pid_start (one TERM, KILL after the grace), and left alone when it does not.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, pidAlive, until } from "../helpers/cli.ts";
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

    test("started's pid_start not the live leader's: refused, the group runs on", async () => {
      const { id, dir, pgid } = await lostJob();
      try {
        const text = remoteFile(dir, "started")!.replace(
          /^pid_start=(\d+)$/m,
          (_m, n) => `pid_start=${Number(n) + 1}`,
        );
        writeFileSync(join(dir, "started"), text);
        const c = w.sb.run(["cancel", "--json", id]);
        expect(c.code).toBe(0);
        expect(c.json.leftover.action).toBe("refused");
        expect(groupMembers(pgid)).toContain(pgid);
        expect(termsIn(dir)).toBe(0);
      } finally {
        for (const p of groupMembers(pgid)) killQuietly(p);
      }
    }, 60_000);
  },
);
