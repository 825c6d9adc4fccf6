// The launch's start of the kernel's wait before a job's first cgroup move (primeCgroupMoves): it writes to the same
// cgroup.procs the wrapper's own awl_track_prime would (src/wrapper/tracking.sh), read from this machine.
import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { ownCgroupProcs } from "../../src/backends/local/job-cgroups.ts";
import { assemble } from "../../src/wrapper/shell-text.ts";

test("the launcher primes the cgroup.procs the wrapper would: its own cgroup's, v2 first, else v1 memory, writable", () => {
  const r = spawnSync(
    "sh",
    [
      "-c",
      `${assemble("# awaitless:include tracking.sh\n")}
awl_cg_mounts && awl_cg_self
for f in "\${awl_cg2:+$awl_cg2$awl_cgp2}" "\${awl_cg1_memory:+$awl_cg1_memory$awl_cgp_memory}"; do
  [ -n "$f" ] && echo "\${f%/}/cgroup.procs"
done`,
    ],
    { encoding: "utf8" },
  );
  expect(r.stderr).toBe("");
  const writable = r.stdout
    .split("\n")
    .filter(Boolean)
    .filter((f) => {
      try {
        accessSync(f, constants.W_OK);
        return true;
      } catch {
        return false;
      }
    });
  expect(ownCgroupProcs()).toBe(writable[0] ?? null);
});
