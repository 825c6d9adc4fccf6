// The Slurm backend through the compiled binary over the private sshd (`--backend slurm --host <ssh alias>`, user
// awl-dash): a client killed mid-wait, then recovery of the exact outcome from a new process. Async spawns only.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "../helpers/cli.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { run, slurmUp } from "./slurm-harness.ts";
import { type SshWorld, sshWorld } from "./ssh-fixture.ts";

const up =
  (await slurmUp("Slurm over SSH CLI e2e")) && gateOnAvailability("Slurm over SSH CLI e2e", sshdAvailable());

describe.skipIf(!up)("Slurm over SSH through the binary", () => {
  let w: SshWorld;
  // a directory the SSH user can look into: the job waits for a file the test creates there
  let gate = "";
  const submitted: string[] = [];
  // every job by its Slurm name as soon as it is submitted: one whose Slurm ID was never read is cancelled too
  const names: string[] = [];
  beforeAll(async () => {
    w = await sshWorld();
    w.sb.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = 0.5\nslurm_min_poll_interval_seconds = 0.5\n[hosts.${w.alias.dash}]\nslurm_accounting_grace = 20\n`,
    );
    gate = mkdtempSync(join(tmpdir(), "awl-slurm-gate-"));
    chmodSync(gate, 0o755);
  });
  afterAll(async () => {
    if (submitted.length > 0) await run(["scancel", ...submitted]);
    for (const name of names) await run(["scancel", `--name=${name}`]);
    await w?.close();
    if (gate) rmSync(gate, { recursive: true, force: true });
  });

  const cli = async (args: string[]) => {
    const r = await w.sb.runAsync(args);
    if (r.code !== 0)
      throw new Error(`awaitless ${args.join(" ")} failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.json;
  };

  test("client killed mid-wait; a new process recovers the exact outcome over SSH", async () => {
    const marker = join(gate, "go");
    const sub = await cli([
      "submit",
      "--json",
      "--backend",
      "slurm",
      "--host",
      w.alias.dash,
      "--slurm-option",
      "mem=32M",
      "--",
      "sh",
      "-c",
      `while [ ! -e ${marker} ]; do sleep 0.2; done; echo "finished as $(id -un)"; exit 3`,
    ]);
    const id = String(sub.job_id);
    names.push(`awaitless-${id}`);
    const status = await cli(["status", "--json", id]);
    const slurmJobId = String(status.backend_id.slurm_job_id);
    submitted.push(slurmJobId);
    expect(slurmJobId).toMatch(/^\d+$/);
    // the job belongs to the SSH user, not to root
    const owner = await run(["squeue", "--noheader", `--jobs=${slurmJobId},${slurmJobId}`, "--format=%u"]);
    expect(owner.stdout.trim()).toBe(w.sshd.users.dash);

    const waiter = w.sb.spawn(["wait", "--json", id]);
    await until(
      "the job running",
      async () => (await cli(["status", "--json", id])).state === "running",
      45_000,
    );
    expect(waiter.exitCode).toBeNull(); // still waiting when killed
    waiter.kill("SIGKILL");
    expect(await waiter.exited).not.toBe(0);

    // the job is unaffected by its client's death
    const state = await run(["squeue", "--noheader", `--jobs=${slurmJobId},${slurmJobId}`, "--format=%T"]);
    expect(state.stdout.trim()).toBe("RUNNING");
    writeFileSync(marker, "");
    const r = await w.sb.runAsync(["wait", "--json", id]);
    expect(r.json.job_state).toBe("failed");
    expect(r.json.exit_code).toBe(3);
    expect(r.json.stdout_tail).toContain(`finished as ${w.sshd.users.dash}`);
    expect(r.json.backend).toBe("slurm");
    expect(r.json.host).toBe(w.alias.dash);
  }, 120_000);

  test("60 s interval: the login node's SSH watch channel sees the exit record; the result beats exit_settle", async () => {
    w.sb.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = 60\nslurm_min_poll_interval_seconds = 60\n[hosts.${w.alias.dash}]\nslurm_accounting_grace = 20\n`,
    );
    // the job says it runs by a file in a directory the SSH user may write
    const shared = mkdtempSync(join(tmpdir(), "awl-slurm-shared-"));
    chmodSync(shared, 0o777);
    const marker = join(gate, "go-events");
    const sub = await cli([
      "submit",
      "--json",
      "--backend",
      "slurm",
      "--host",
      w.alias.dash,
      "--slurm-option",
      "mem=32M",
      "--",
      "sh",
      "-c",
      `touch ${shared}/running; while [ ! -e ${marker} ]; do sleep 0.2; done; exit 5`,
    ]);
    const id = String(sub.job_id);
    names.push(`awaitless-${id}`);
    submitted.push(String((await cli(["status", "--json", id])).backend_id.slurm_job_id));
    await until("the command running", () => existsSync(join(shared, "running")), 60_000, 100);
    const waiter = w.sb.spawn(["wait", "--json", "--timeout", "25", id]);
    writeFileSync(marker, "");
    const r = JSON.parse(await new Response(waiter.stdout).text());
    await waiter.exited;
    rmSync(shared, { recursive: true, force: true });
    // a plain exit waits up to exit_settle (30 s) for Slurm's word, and the next round is 60 s away: only the watch
    // and sacct asked about this job end it within the 25 s wait
    expect(r.job_state).toBe("failed");
    expect(r.exit_code).toBe(5);
    expect((await cli(["inspect", "--json", id])).job.backend_id.completion).toBe("watch");
  }, 120_000);
});
