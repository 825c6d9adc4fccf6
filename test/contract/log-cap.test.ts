// The log cap through the binary, locally and over SSH (dash and busybox users): a command writing fast across the
// cap while the monitor rotates keeps its head intact, a kept tail with no lost or repeated line that ends with the
// command's last line, and an omitted-bytes count that adds up to every byte written.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Target } from "./contract.ts";
import { localTarget, sshAvailable, sshTarget } from "./targets.ts";

const CAP = 256 * 1024;
const HEAD = CAP / 8;
// about 7 MB in one-line writes: several monitor ticks long, so rotations run while the command writes
const LINES = Number(process.env.AWAITLESS_CAP_LINES ?? 600_000);
const withSsh = sshAvailable("SSH log cap");

const expected = Array.from({ length: LINES }, (_, i) => `line ${i}\n`).join("");

function capTest(name: string, setup: () => Promise<Target>, available = true): void {
  describe.skipIf(!available)(`log cap: ${name}`, () => {
    let t: Target;
    beforeAll(async () => {
      t = await setup();
      t.sb.writeConfig(`[defaults]\nlog_cap_bytes = ${CAP}\n`);
    });
    afterAll(async () => {
      await t?.close();
    });

    test(`${LINES} lines written across a ${CAP}-byte cap: head, omitted count and tail exact`, async () => {
      const script = `i=0; while [ $i -lt ${LINES} ]; do echo "line $i"; i=$((i+1)); done`;
      const id = t.sb.submit(["sh", "-c", script], t.flags);
      const r = await t.sb.runAsync(["wait", "--json", id]);
      expect(r.json.state).toBe("succeeded");
      expect(r.json.stdout_bytes).toBe(expected.length);
      const dropped = r.json.stdout_dropped_bytes as number;
      expect(dropped).toBeGreaterThan(expected.length - CAP);
      expect(r.json.stdout_tail).toEndWith(`line ${LINES - 1}\n`);
      const logs = (await t.sb.runAsync(["logs", "--json", id])).json;
      const marker = `\n[… ${dropped - HEAD} bytes dropped by the log cap …]\n`;
      const parts = String(logs.stdout).split(marker);
      expect(parts.length).toBe(2);
      expect(parts[0]).toBe(expected.slice(0, HEAD));
      // every byte the cap kept, in order: a lost or repeated line would shift this
      const kept = expected.length - dropped;
      expect(kept).toBeLessThanOrEqual(CAP);
      expect(parts[1]!.length).toBe(kept);
      expect(parts[1] === expected.slice(expected.length - kept)).toBe(true);
    }, 180_000);
  });
}

capTest("local", localTarget);
capTest("ssh (dash)", () => sshTarget("dash"), withSsh);
capTest("ssh (busybox)", () => sshTarget("busybox"), withSsh);
