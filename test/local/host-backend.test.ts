// `[hosts.NAME] backend` decides how `--host NAME` runs when no --backend is given, for every command; an explicit
// --backend always wins, and `--backend local --host` is refused. Checked through the compiled binary without a
// cluster: a Slurm host's jobs are refused what only Slurm refuses (named queues, --log-dir), before anything starts.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
sb.writeConfig('[defaults]\nbackend = "local"\n[hosts.cl]\nbackend = "slurm"\ntransport = "local"\n');
afterAll(() => sb.cleanup());

function refused(args: string[], message: RegExp): void {
  const r = sb.run([...args.slice(0, 1), "--json", ...args.slice(1)]);
  expect(r.code).toBe(2);
  expect(r.json.error.code).toBe("invalid_argument");
  expect(r.json.error.message).toMatch(message);
  expect(sb.jobCount()).toBe(0);
}

describe("--host without --backend uses the host's backend", () => {
  test("submit and run --host of a Slurm host are Slurm jobs (what only Slurm refuses is refused)", () => {
    for (const cmd of ["submit", "run"]) {
      refused(
        [cmd, "--host", "cl", "--queue", "q", "--", "true"],
        /queue "q" was given with the slurm backend/,
      );
      refused([cmd, "--host", "cl", "--log-dir", "logs", "--", "true"], /not the slurm backend/);
      refused(
        [cmd, "--host", "cl", "--resource", "gpu=0", "--", "true"],
        /resource locks were given with the slurm backend/,
      );
    }
    expect(() => readdirSync(sb.dataDir + "/jobs")).toThrow();
  });

  test("an explicit --backend wins over the host's", () => {
    // as an SSH job, --log-dir is refused for SSH, not for Slurm
    refused(
      ["submit", "--backend", "ssh", "--host", "cl", "--log-dir", "logs", "--", "true"],
      /not the ssh backend/,
    );
  });

  test("--backend local with --host is refused with both ways out", () => {
    const r = sb.run(["submit", "--backend", "local", "--host", "cl", "--", "true"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("host cl was given with the local backend");
    expect(r.stderr).toContain("drop --backend local to run on cl");
    expect(sb.jobCount()).toBe(0);
  });

  test("no host: the default backend (local) still runs the job here", () => {
    const r = sb.run(["run", "--json", "--", "sh", "-c", "echo here"]);
    expect(r.code).toBe(0);
    expect(r.json.backend).toBe("local");
    expect(r.json.host).toBeNull();
    sb.run(["gc", "--keep", "0"]);
  });

  test("doctor --host of a Slurm host on this machine checks Slurm's clients here, not an SSH connection", () => {
    const emptyBin = join(sb.root, "empty-bin");
    mkdirSync(emptyBin, { recursive: true });
    const r = sb.run(["doctor", "--json", "--host", "cl"], { env: { PATH: emptyBin } });
    const mine = r.json.checks.filter((c: { check: string }) => c.check.startsWith("cl: "));
    expect(mine.map((c: { check: string }) => c.check)).toEqual([
      "cl: scheduler calls",
      "cl: completion",
      "cl: tracking",
      "cl: slurm clients",
    ]);
    expect(mine[2].detail).toContain("Slurm's cgroup for the job");
    expect(mine[3].ok).toBe(false);
    expect(mine[3].detail).toContain("sbatch");
    expect(mine[3].fix).toContain('transport = "local"');
    expect(r.code).not.toBe(0);
  });

  test("queue create --host of a Slurm host is refused: Slurm schedules its jobs", () => {
    const r = sb.run(["queue", "create", "q", "--concurrency", "1", "--host", "cl"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("cl is a Slurm cluster");
    expect(sb.run(["queue", "list", "--json"]).json.queues).toEqual([]);
  });
});
