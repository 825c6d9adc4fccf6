// Through the compiled binary, as root with the cgroup v1 memory controller (a job gets a memory cgroup of its own):
// a command the kernel's OOM killer ends inside the job's cgroup is `failed`, reason out_of_memory, and its
// resources count the OOM kill. The command limits its own cgroup (root may) and then allocates past the limit.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { Sandbox } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";

function available(): { ok: boolean; why: string } {
  if (process.getuid?.() !== 0) return { ok: false, why: "needs root (a job's own memory cgroup)" };
  if (!existsSync("/sys/fs/cgroup/memory/memory.limit_in_bytes"))
    return { ok: false, why: "needs the cgroup v1 memory controller mounted at /sys/fs/cgroup/memory" };
  return { ok: true, why: "" };
}

if (gateOnAvailability("out-of-memory in a job's cgroup", available())) {
  const sb = new Sandbox();
  afterAll(() => sb.cleanup());

  describe("out of memory", () => {
    test("an OOM kill inside the job's cgroup: failed, out_of_memory, the kill counted", () => {
      const script = [
        'p=$(grep ":memory:" /proc/self/cgroup | cut -d: -f3)',
        'case $p in */awaitless-job_*) ;; *) echo "not in a job cgroup: $p" >&2; exit 9 ;; esac',
        'echo 64M > "/sys/fs/cgroup/memory$p/memory.limit_in_bytes"',
        'x=$(head -c 209715200 /dev/zero | tr "\\000" a)',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion
        "echo ${#x}",
      ].join("\n");
      const r = sb.run(["run", "--json", "--", "sh", "-c", script]);
      expect(r.json.state).toBe("failed");
      expect(r.json).toMatchObject({ reason: "out_of_memory", signal: "KILL" });
      expect(r.json.error).toMatchObject({ reason: "out_of_memory" });
      expect(r.json.error.detail).toContain("OOM killer ended");
      expect(r.json.resources.source).toBe("cgroup");
      expect(r.json.resources.oom_kills).toBeGreaterThanOrEqual(1);
      expect(r.json.resources.max_rss_bytes).toBeGreaterThan(32 * 1024 * 1024);
      expect(r.json.resources.max_rss_bytes).toBeLessThanOrEqual(64 * 1024 * 1024);
      expect(sb.run(["wait", id(r)]).stdout).toContain("killed out of memory");
    }, 60_000);
  });

  const id = (r: { json: { job_id: string } }) => r.json.job_id;
}
