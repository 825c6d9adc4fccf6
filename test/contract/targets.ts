// How the contract and the fault schedule reach each backend: local jobs, SSH jobs on a private sshd as the dash
// or busybox test user, Slurm jobs on the real test cluster (this machine is its login node).
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run, slurmUp } from "../e2e/slurm-harness.ts";
import { sessionPids, sshWorld } from "../e2e/ssh-fixture.ts";
import { killQuietly, pidAlive, Sandbox, until } from "../helpers/cli.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import type { Target } from "./contract.ts";

/** Local jobs; `env` for the sandbox (AWAITLESS_TRACKING=environment: no cgroup even as root). */
export async function localTarget(env: Record<string, string> = {}): Promise<Target> {
  const sb = new Sandbox(env);
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
    // a client killed right after the launch stored no remote_dir: the job is where the launch put it
    jobDir: (id) =>
      (w.sb.status(id).backend_id?.remote_dir as string | undefined) ??
      join(homedir(w.sshd.users[kind]), ".awaitless", "jobs", id),
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
    bigMemoryFlags: ["--slurm-option", "mem=700M"],
    queueFlags: [],
    jobMs: 60_000,
    jobDir: (id) => {
      const b = sb.status(id).backend_id as { slurm_job_id?: string; remote_dir?: string } | null;
      if (b?.slurm_job_id) submitted.add(b.slurm_job_id);
      return b?.remote_dir ?? join(sb.root, "cluster", "jobs", id);
    },
    async close() {
      if (submitted.size > 0) await run(["scancel", ...submitted]);
      sb.cleanup();
    },
  };
}

const FAKE_SLURM = join(import.meta.dir, "..", "fake-slurm", "fake-slurm.sh");
const FAKE_PROGRAMS = ["sbatch", "squeue", "sacct", "scontrol", "scancel"] as const;

/**
 * Slurm jobs through fake scheduler commands on PATH (test/fake-slurm/fake-slurm.sh): the batch script runs at once
 * on this machine, and squeue/sacct/scontrol answer in Slurm's formats. No root, no cluster.
 */
export async function slurmFakeTarget(): Promise<Target> {
  const sb = new Sandbox();
  const bin = join(sb.root, "fake-slurm-bin");
  const state = join(sb.root, "fake-slurm-state");
  mkdirSync(bin, { recursive: true });
  mkdirSync(state, { recursive: true });
  for (const p of FAKE_PROGRAMS) {
    writeFileSync(join(bin, p), `#!/bin/sh\nexec sh '${FAKE_SLURM}' ${p} "$@"\n`);
    chmodSync(join(bin, p), 0o755);
  }
  Object.assign(sb.env, { PATH: `${bin}:${sb.env.PATH}`, AWL_FAKE_SLURM: state });
  sb.writeConfig(
    `[defaults]\npoll_interval_seconds = 0.3\nslurm_poll_interval_seconds = 0.5\nslurm_min_poll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${join(sb.root, "cluster")}"\nslurm_accounting_grace = 5\n`,
  );
  /** The runner and batch-shell pids the fake recorded, for every job it ran. */
  const pids = () =>
    (existsSync(join(state, "jobs")) ? readdirSync(join(state, "jobs")) : []).flatMap((id) =>
      ["runner_pid", "pid"].flatMap((f) => {
        const p = join(state, "jobs", id, f);
        return existsSync(p) ? [Number(readFileSync(p, "utf8"))] : [];
      }),
    );
  return {
    sb,
    flags: ["--backend", "slurm", "--host", "localhost"],
    queueFlags: [],
    jobMs: 20_000,
    jobDir: (id) =>
      (sb.status(id).backend_id?.remote_dir as string | undefined) ?? join(sb.root, "cluster", "jobs", id),
    async close() {
      const all = pids().filter((p) => p > 1);
      for (const p of all) killQuietly(p);
      await until("the fake scheduler's processes gone", () => all.every((p) => !pidAlive(p)), 15_000);
      sb.cleanup();
    },
  };
}

/** A user's home directory, from /etc/passwd. */
function homedir(user: string): string {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${user}:`));
  const home = line?.split(":")[5];
  if (!home) throw new Error(`no home directory for ${user} in /etc/passwd`);
  return home;
}
