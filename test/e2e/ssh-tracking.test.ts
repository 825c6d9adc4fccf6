// `doctor --host` on the private sshd: the SSH test users (not root, no delegated cgroup) are tracked by
// environment, and doctor says so with why.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { type SshWorld, sshWorld } from "./ssh-fixture.ts";

if (gateOnAvailability("SSH tracking (private OpenSSH server)", sshdAvailable())) {
  describe("tracking on an SSH host", () => {
    let w: SshWorld;
    beforeAll(async () => {
      w = await sshWorld();
    });
    afterAll(async () => {
      await w?.close();
    });

    for (const kind of ["dash", "busybox"] as const) {
      test(`doctor says how the ${kind} user's jobs are tracked, and why`, () => {
        const host = w.alias[kind];
        const d = w.sb.run(["doctor", "--json", "--host", host]);
        const row = (d.json.checks as { check: string; ok: boolean; detail: string }[]).find(
          (c) => c.check === `${host}: tracking`,
        );
        expect(row?.ok).toBe(true);
        expect(row?.detail).toStartWith("processes are found by AWAITLESS_JOB_ID in their environment");
        expect(row?.detail).toContain("no cgroup this user may create");
        expect(row?.detail).toContain("peak memory not measured");
      }, 60_000);
    }
  });
}
