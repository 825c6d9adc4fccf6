// How the contract and the fault schedule reach each backend: local jobs, SSH jobs on a private sshd as the dash
// or busybox test user, Slurm jobs on the real test cluster (this machine is its login node).
import { join } from "node:path";
import { run, slurmUp } from "../e2e/slurm-harness.ts";
import { sessionPids, sshWorld } from "../e2e/ssh-fixture.ts";
import { killQuietly, Sandbox } from "../helpers/cli.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import type { Target } from "./contract.ts";

export async function localTarget(): Promise<Target> {
  const sb = new Sandbox();
  return {
    sb,
    flags: [],
    queueFlags: [],
    jobMs: 15_000,
    jobDir: (id) => sb.run(["inspect", "--json", id]).json.job_dir as string,
    async close() {
      sb.cleanup();
    },
  };
}

/** Whether the private sshd can run here; otherwise the gate has reported the skip (or the failure). */
export const sshAvailable = (what: string) =>
  gateOnAvailability(`${what} (private OpenSSH server)`, sshdAvailable());

/** SSH jobs as the test user whose login shell is dash or busybox sh. */
export async function sshTarget(kind: "dash" | "busybox" = "dash"): Promise<Target> {
  const w = await sshWorld();
  const host = w.alias[kind];
  return {
    sb: w.sb,
    flags: ["--backend", "ssh", "--host", host],
    queueFlags: ["--host", host],
    jobMs: 20_000,
    jobDir: (id) => w.sb.status(id).backend_id.remote_dir as string,
    dropConnections() {
      const serving = sessionPids(w.sshd, w.sshd.users[kind]);
      for (const p of serving) killQuietly(p);
      return serving.length;
    },
    close: () => w.close(),
  };
}

export const slurmAvailable = (what: string) => slurmUp(what);

export async function slurmTarget(): Promise<Target> {
  const sb = new Sandbox();
  sb.writeConfig(
    `[defaults]\npoll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${join(sb.root, "cluster")}"\nslurm_accounting_grace = 20\n`,
  );
  const submitted = new Set<string>();
  return {
    sb,
    flags: ["--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=32M"],
    queueFlags: [],
    jobMs: 60_000,
    jobDir: (id) => {
      const b = sb.status(id).backend_id as { slurm_job_id?: string; remote_dir: string };
      if (b.slurm_job_id) submitted.add(b.slurm_job_id);
      return b.remote_dir;
    },
    async close() {
      if (submitted.size > 0) await run(["scancel", ...submitted]);
      sb.cleanup();
    },
  };
}
