// Fault rig for the real test cluster (test/infra/slurm-up.sh): the second node and its preemption partitions, the
// controller's recorded PID, and a Sandbox configured for Slurm on this machine. Every fault is undone by the caller.

import { test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, Sandbox, until } from "../helpers/cli.ts";
import { run, slurmUp } from "./slurm-harness.ts";

/** Where slurm-up.sh records its daemons' PIDs (the same default as the script). */
export const SLURM_DIR =
  process.env.AWAITLESS_SLURM_DIR ?? join(process.env.TMPDIR ?? "/tmp", "awaitless-slurm");
export const NODE2 = process.env.AWAITLESS_SLURM_NODE2 ?? "awl-node2";
export const LOW = "awl-low";
export const HIGH = "awl-high";
const UP_SCRIPT = join(ROOT, "test", "infra", "slurm-up.sh");

/** Why the fault tests cannot run on this cluster (an older slurm-up.sh), or undefined when they can. */
export async function faultRigMissing(): Promise<string | undefined> {
  const r = await run(["sinfo", "-h", "-o", "%R %N"]);
  const parts = new Map(
    r.stdout
      .trim()
      .split("\n")
      .map((l) => l.split(" ") as [string, string]),
  );
  if (parts.get(LOW) !== NODE2 || parts.get(HIGH) !== NODE2)
    return `partitions ${LOW} and ${HIGH} on node ${NODE2} are missing (sinfo: ${r.stdout.trim().replaceAll("\n", "; ")}); rerun test/infra/slurm-up.sh as root to add them`;
  const c = await run(["scontrol", "show", "config"]);
  if (!/^PreemptType\s*=\s*preempt\/partition_prio/m.test(c.stdout))
    return "PreemptType is not preempt/partition_prio; rerun test/infra/slurm-up.sh as root";
  return undefined;
}

/** Slurm is up with the second node's partitions; otherwise skips with why, or fails under AWAITLESS_REQUIRE_ALL=1. */
export async function faultRigUp(what: string): Promise<boolean> {
  if (!(await slurmUp(what))) return false;
  const missing = await faultRigMissing();
  if (missing === undefined) return true;
  if (process.env.AWAITLESS_REQUIRE_ALL === "1") {
    test(`${what} can run (AWAITLESS_REQUIRE_ALL=1)`, () => {
      throw new Error(`${what} cannot run: ${missing}`);
    });
  } else console.warn(`[skip] ${what}: ${missing}`);
  return false;
}

/** A Sandbox whose config submits to Slurm on this machine with a short poll interval. */
export function slurmSandbox(extra = ""): Sandbox {
  const s = new Sandbox();
  s.writeConfig(
    `[defaults]\npoll_interval_seconds = 0.5\n[hosts.localhost]\nbackend = "slurm"\nslurm_job_dir = "${join(s.root, "cluster")}"\nslurm_accounting_grace = 20\n${extra}`,
  );
  return s;
}

export async function squeueState(id: string): Promise<string> {
  return (await run(["squeue", "-h", "-j", `${id},${id}`, "-o", "%T"])).stdout.trim();
}

/** Every sacct record of a Slurm job, one per run (`-D`: requeued runs too), as "State ExitCode". */
export async function sacctRuns(id: string): Promise<string[]> {
  const r = await run(["sacct", "-X", "-n", "-P", "-D", "-o", "State,ExitCode", "-j", id]);
  return r.stdout.trim().split("\n").filter(Boolean);
}

/** The user's Slurm job IDs whose name or comment carries our job ID (what find-by-tag sees), since `since`. */
export async function taggedSlurmJobs(jobId: string, since: Date): Promise<string[]> {
  const start = new Date(since.getTime() - 86_400_000).toISOString().slice(0, 10);
  const r = await run(["sacct", "-X", "-n", "-P", "-a", "-S", start, "-o", "JobID,JobName,Comment"]);
  const ids = r.stdout
    .trim()
    .split("\n")
    .filter((l) => l.includes(jobId))
    .map((l) => l.split("|")[0] ?? "");
  return [...new Set(ids)];
}

/** One field of `scontrol show job` (e.g. OverSubscribe, Licenses, MinMemoryCPU). */
export async function scontrolField(id: string, field: string): Promise<string | undefined> {
  const r = await run(["scontrol", "--oneliner", "show", "job", id]);
  return new RegExp(`(?:^| )${field}=(\\S*)`).exec(r.stdout)?.[1];
}

export async function nodeState(node: string): Promise<string> {
  // one line per partition the node is in: the first says it
  return (await run(["sinfo", "-h", "-N", "-n", node, "-o", "%T"])).stdout.trim().split("\n")[0] ?? "";
}

/** Puts the node back into service (a no-op when it is up) and waits until it takes jobs. */
export async function resumeNode(node: string): Promise<void> {
  if (/down|drain|fail/.test(await nodeState(node)))
    await run(["scontrol", "update", `nodename=${node}`, "state=resume"]);
  await until(
    `node ${node} up`,
    async () => /^(idle|mixed|allocated)/.test(await nodeState(node)),
    30_000,
    200,
  );
}

/** The recorded slurmctld PID when it is alive and still slurmctld ("PID COMM" in slurmctld.pid), else undefined. */
export function recordedController(): number | undefined {
  try {
    const [pid, comm] = readFileSync(join(SLURM_DIR, "slurmctld.pid"), "utf8").trim().split(" ");
    const alive = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    return alive === comm ? Number(pid) : undefined;
  } catch {
    return undefined;
  }
}

/** Stops the recorded slurmctld (SIGTERM: it saves its state) and waits until it is gone. */
export async function stopController(pid: number): Promise<void> {
  process.kill(pid, "SIGTERM");
  await until(
    "slurmctld stopped",
    () => {
      try {
        return readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "slurmctld";
      } catch {
        return true;
      }
    },
    30_000,
    100,
  );
}

/** Starts slurmctld again the way the cluster was brought up (slurm-up.sh is idempotent: it starts what is down). */
export async function startController(): Promise<void> {
  const p = Bun.spawn(["bash", UP_SCRIPT], {
    env: { ...process.env, AWAITLESS_SLURM_NO_INSTALL: "1", AWAITLESS_SLURM_DIR: SLURM_DIR },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  if (code !== 0) throw new Error(`slurm-up.sh failed (${code}): ${out.slice(-2000)}${err.slice(-2000)}`);
  await until(
    "slurmctld answering",
    async () => /UP/.test((await run(["scontrol", "ping"])).stdout),
    30_000,
    200,
  );
}
