// `awaitless doctor` through the compiled binary: it reads the config named by --config, reports each problem
// once, fails an unknown host at resolution, and exits 2 (never 1, the internal-error code) when a check fails.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BINARY, Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
delete sb.env.AWAITLESS_CONFIG; // the file comes from --config, as a user passes it
afterAll(() => sb.cleanup());

type Row = { check: string; ok: boolean; detail: string; fix?: string };
const rows = (json: { checks: Row[] }) => json.checks;
const unshareWorks = Bun.spawnSync(["unshare", "-n", "true"], { stderr: "ignore" }).exitCode === 0;

describe("doctor", () => {
  test("--config FILE is the config it checks", () => {
    const file = join(sb.root, "mine.toml");
    Bun.write(file, "[defaults]\ngrace_period_seconds = 3\n");
    const r = sb.run(["doctor", "--json", "--config", file]);
    expect(r.code, r.stdout).toBe(0);
    expect(rows(r.json).find((c) => c.check === "config")?.detail).toBe(`${file} is valid`);
    const v08 = join(sb.root, "v08.toml");
    Bun.write(v08, "[defaults]\npoll_interval = 2\nadaptive_inline_timeout_seconds = 30\n");
    const old = sb.run(["doctor", "--json", "--config", v08]);
    expect(old.code).toBe(0);
    expect(rows(old.json).find((c) => c.check === "config")?.detail).toContain("Awaitless 0.8 settings");
    expect(old.stderr.split("\n").filter((l) => l.startsWith("note:"))).toHaveLength(1);
  });

  test("--host of a Slurm cluster shows the scheduler calls per minute its interval and floor allow", () => {
    const file = join(sb.root, "slurm.toml");
    Bun.write(
      file,
      '[defaults]\nslurm_poll_interval_seconds = 20\n[hosts.cl]\nbackend = "slurm"\ntransport = "local"\nslurm_min_poll_interval_seconds = 10\n[hosts.big]\nbackend = "slurm"\ntransport = "local"\nslurm_min_poll_interval_seconds = 60\n',
    );
    const cl = rows(sb.run(["doctor", "--json", "--config", file, "--host", "cl"]).json);
    expect(cl.find((c) => c.check === "cl: scheduler calls")?.detail).toContain(
      "every 20s (floor 10s) for all jobs, shared by every process on this machine: ~6 calls/min while jobs are active (at most 12 while new jobs arrive)",
    );
    // a host's floor above the inherited interval raises it
    const big = rows(sb.run(["doctor", "--json", "--config", file, "--host", "big"]).json);
    expect(big.find((c) => c.check === "big: scheduler calls")?.detail).toContain("every 60s (floor 60s)");
    expect(big.find((c) => c.check === "big: scheduler calls")?.detail).toContain("~2 calls/min");
    // completion: the event path on this login node by default; slurm_watch = false polls only, and says so
    expect(cl.find((c) => c.check === "cl: completion")?.detail).toContain(
      "events: this machine (the login node) watches slurm_job_dir",
    );
    Bun.write(file, '[hosts.cl]\nbackend = "slurm"\ntransport = "local"\nslurm_watch = false\n');
    const polled = rows(sb.run(["doctor", "--json", "--config", file, "--host", "cl"]).json);
    expect(polled.find((c) => c.check === "cl: completion")?.detail).toContain(
      "polling only (slurm_watch = false in [hosts.cl])",
    );
    // an interval set below its floor is refused with what to change
    Bun.write(file, '[hosts.cl]\nbackend = "slurm"\nslurm_poll_interval_seconds = 1\n');
    const bad = sb.run(["doctor", "--json", "--config", file, "--host", "cl"]);
    expect(bad.code).toBe(2);
    expect(rows(bad.json).find((c) => c.check === "config")?.detail).toContain(
      "[hosts.cl] slurm_poll_interval_seconds = 1 is below the floor slurm_min_poll_interval_seconds = 5 (the default)",
    );
  });

  test("says how this machine tracks a job's processes: a cgroup as root, else (or when asked) by environment", () => {
    const tracking = (env: Record<string, string> = {}) =>
      rows(sb.run(["doctor", "--json"], { env }).json).find((c) => c.check === "tracking");
    const own = tracking();
    expect(own?.ok).toBe(true);
    if (process.getuid?.() === 0) expect(own?.detail).toStartWith("each job gets its own cgroup");
    const env = tracking({ AWAITLESS_TRACKING: "environment" });
    expect(env?.ok).toBe(true);
    expect(env?.detail).toStartWith("processes are found by AWAITLESS_JOB_ID in their environment");
    expect(env?.detail).toContain("a process that clears its environment and leaves the session is not seen");
  });

  test("a broken config is one failed row (not repeated as the store's), and exits 2", () => {
    const file = join(sb.root, "broken.toml");
    Bun.write(file, "[defaults]\ngrace_period_secs = 3\n");
    const r = sb.run(["doctor", "--json", "--config", file, "--host", "gpu"]);
    expect(r.code).toBe(2);
    const failed = rows(r.json).filter((c) => !c.ok);
    expect(failed.map((c) => c.check)).toEqual(["config", "gpu: resolution"]);
    expect(failed[0]!.detail).toContain("has no key grace_period_secs");
    expect(failed[1]!.detail).toBe("not checked: fix the config first");
    expect(r.stdout.split("grace_period_secs").length - 1).toBe(2); // the message and its fix line, once each
    const human = sb.run(["doctor", "--config", file, "--host", "gpu"]);
    expect(human.code).toBe(2);
    expect(human.stdout.match(/^FAIL config/gm)).toHaveLength(1);
    expect(human.stdout).not.toContain("FAIL store");
  });

  // In an empty network namespace no name resolves and nothing leaves the machine.
  test.skipIf(!unshareWorks)("an unknown host fails resolution, with what to write; exit 2", () => {
    const r = Bun.spawnSync(["unshare", "-n", BINARY, "doctor", "--json", "--host", "awl-no-such-host"], {
      env: sb.env,
      cwd: sb.work,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(r.exitCode).toBe(2);
    const json = JSON.parse(r.stdout.toString());
    const host = rows(json).filter((c) => c.check.startsWith("awl-no-such-host:"));
    expect(host).toHaveLength(1); // no connection attempt after a failed resolution
    expect(host[0]).toMatchObject({ check: "awl-no-such-host: resolution", ok: false });
    expect(host[0]!.detail).toContain("does not resolve");
    expect(host[0]!.fix).toContain("[hosts.awl-no-such-host]");
  });

  test("a host that resolves but does not answer fails its connection check only: exit 7", () => {
    const file = join(sb.root, "closed.toml");
    // port 1 on loopback: nothing listens, the connection is refused at once
    Bun.write(file, '[hosts.closed]\nhostname = "127.0.0.1"\nport = 1\n');
    const r = sb.run(["doctor", "--json", "--config", file, "--host", "closed"]);
    expect(r.code).toBe(7);
    const failed = rows(r.json).filter((c) => !c.ok);
    expect(failed.map((c) => c.check)).toEqual(["closed: connection, host key, authentication"]);
  });
});
