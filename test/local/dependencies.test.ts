// Job dependencies on this machine through the compiled binary (the shared cases), and a dependency across targets
// refused before anything is created.
import { afterAll, describe, expect, test } from "bun:test";
import { Sandbox } from "../helpers/cli.ts";
import { dependencyCases } from "../helpers/dependency-cases.ts";

const sb = new Sandbox();
afterAll(() => {
  const active = sb.run(["list", "--json", "--state", "active", "--limit", "10000"]).json?.jobs ?? [];
  for (const j of active) sb.run(["cancel", "--grace-period", "0", j.job_id]);
  sb.cleanup();
});

describe("dependencies on this machine", () => {
  dependencyCases(() => ({
    cli: (args) => sb.runAsync(args),
    launchFlags: [],
    dir: sb.work,
    spawn: (args) => {
      const p = sb.spawn(args);
      return { pid: p.pid, exited: p.exited };
    },
  }));

  test("a local parent and a child on an SSH host: refused, naming both targets; nothing created", async () => {
    sb.writeConfig('[hosts.far]\nhostname = "127.0.0.1"\nport = 1\n');
    const p = sb.submit(["true"]);
    const before = sb.jobCount();
    const r = await sb.runAsync(["submit", "--host", "far", "--after", p, "--", "true"]);
    sb.writeConfig("");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`job ${p} runs on this machine (local), this job on far (ssh)`);
    expect(r.stderr).toContain("same target");
    expect(sb.jobCount()).toBe(before);
  });
});
