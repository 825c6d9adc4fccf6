// Job dependencies on this machine through the compiled binary (the shared cases), and a dependency across targets
// refused before anything is created.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, Sandbox, until } from "../helpers/cli.ts";
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

  test("a parent whose wrapper was killed (lost): ok → dependency_failed, any runs", async () => {
    const p = sb.submit(["sleep", "60"]);
    const ok = sb.submit(["sh", "-c", "touch ran-lost-ok"], ["--after", p]);
    const any = sb.submit(["sh", "-c", "touch ran-lost-any"], ["--after", `${p}:any`]);
    const started = await until("the parent started", () => {
      try {
        return readFileSync(join(sb.dataDir, "jobs", p, "started"), "utf8");
      } catch {
        return "";
      }
    });
    const field = (k: string) => Number(new RegExp(`^${k}=(\\d+)$`, "m").exec(started)?.[1]);
    killQuietly(field("wrapper_pid"));
    killQuietly(-field("pgid"));
    const r = await sb.runAsync(["wait", "--json", "--timeout", "60s", ok]);
    expect([r.json.job_state, r.json.reason]).toEqual(["cancelled", "dependency_failed"]);
    expect((await sb.runAsync(["wait", "--json", "--timeout", "60s", any])).json.job_state).toBe("succeeded");
    expect(existsSync(join(sb.work, "ran-lost-ok"))).toBe(false);
    expect(existsSync(join(sb.work, "ran-lost-any"))).toBe(true);
  });

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
