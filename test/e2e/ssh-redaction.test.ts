// Redaction at the edges over SSH, through the compiled binary against a private OpenSSH sshd: a log whose cap
// head ends inside a secret and whose rolling tail starts inside one, read by the host's remote scan, and
// results' tails cut inside a secret, show no 4-character piece of it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { type SshWorld, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability("SSH redaction e2e tests (private OpenSSH server)", sshdAvailable());
const SECRET = "Zq7vKp2XwR9tLm4NbY6hJc3DfG";

let w: SshWorld;
if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
  });
  afterAll(async () => {
    await w?.close();
  });
}

/** The longest piece of the secret that appears in `text`. */
function exposed(text: string): number {
  for (let len = SECRET.length; len > 0; len--) {
    for (let i = 0; i + len <= SECRET.length; i++) if (text.includes(SECRET.slice(i, i + len))) return len;
  }
  return 0;
}

describe.each(runE2e ? (["dash"] as const) : [])("an SSH job as the %s user", (kind) => {
  test("the log cap's head and tail edges inside a secret, read on the host", async () => {
    // As in test/local/redaction-cuts.test.ts: the 1024-byte head ends 13 bytes into the first copy.
    w.sb.writeConfig("[defaults]\nlog_cap_bytes = 8192\nmax_return_bytes = 52\n");
    try {
      const script =
        'printf "%01011d%s\\n" 0 "$AWL_S"; i=0; while [ $i -lt 400 ]; do printf "%049d\\n" $i; i=$((i+1)); done; ' +
        'printf "%s%03570d\\n" "$AWL_S" 0; printf "%0200d%s%040d\\n" 0 "$AWL_S" 0';
      const flags = ["--backend", "ssh", "--host", w.alias[kind], "--secret-env", "AWL_S"];
      const r = await w.sb.runAsync(["run", "--json", ...flags, "--", "sh", "-c", script], {
        env: { AWL_S: SECRET },
      });
      expect(r.json.result.state).toBe("succeeded");
      const id = r.json.job_id;
      const outputs = [r.stdout];
      for (const args of [[], ["--lines", "1:3"], ["--grep", "0000"], ["--json"], ["--tail", "3"]]) {
        outputs.push((await w.sb.runAsync(["logs", id, "--stream", "stdout", ...args])).stdout);
      }
      expect(outputs[1]).toContain("[REDACTED]\n[… ");
      for (const o of outputs) expect(exposed(o)).toBeLessThan(4);
    } finally {
      w.sb.writeConfig("");
    }
  }, 60_000);
});
