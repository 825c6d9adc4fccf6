// The randomized fault schedule: seeded runs that kill the client, the wrapper or the SSH connection (and the
// cancel client) at random points of submit (also just after reserving or launching), wait and cancel, then check
// the invariants a durable job owes its user.
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { groupMembers } from "../e2e/ssh-fixture.ts";
import { type CliResult, killQuietly, until } from "../helpers/cli.ts";
import { prng } from "../helpers/prng.ts";
import { startedRecord, type Target } from "./contract.ts";

export interface Backends {
  [name: string]: Target;
}

export interface Summary {
  schedules: number;
  faults: number;
  violations: { seed: number; backend: string; what: string }[];
  byFault: Record<string, number>;
}

type Kind = "complete" | "cancel" | "wrapper";

interface Run {
  seed: number;
  backend: string;
  t: Target;
  rand: () => number;
  markers: string;
  summary: Summary;
  t0: number;
  fault(name: string): void;
  violate(what: string): void;
}

const pick = <T>(rand: () => number, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const between = (rand: () => number, lo: number, hi: number) => Math.round(lo + rand() * (hi - lo));

/** Waits a random moment before a fault: the delay chooses where the fault lands, it waits for nothing. */
const moment = (ms: number) => Bun.sleep(ms);

const trace = process.env.AWAITLESS_FAULT_TRACE === "1";
function step(r: Run, what: string): void {
  if (trace) console.error(`[fault ${r.seed} ${r.backend} +${Date.now() - r.t0} ms] ${what}`);
}

/** Submits with an idempotency key, maybe killing the first client mid-submit; the retry must find the same job. */
async function submitThroughFaults(r: Run, argv: string[]): Promise<string> {
  const key = `fault-key-${r.seed}`;
  const args = [
    "submit",
    "--json",
    ...r.t.flags,
    "--name",
    `fault-${r.seed}`,
    "--client-request-id",
    key,
    "--",
    ...argv,
  ];
  const how = pick(r.rand, ["none", "kill", "crash-after-reserve", "crash-after-launch"] as const);
  if (how === "kill") {
    const p = r.t.sb.spawn(args);
    await moment(between(r.rand, 0, 400));
    if (p.exitCode === null) {
      p.kill("SIGKILL");
      r.fault("submit client killed");
    }
    await p.exited;
  } else if (how === "crash-after-reserve") {
    const c = await r.t.sb.runAsync(args, { env: { AWAITLESS_TEST_CRASH_AFTER_RESERVE: "1" } });
    if (c.code === 99) r.fault("submit client died after reserve");
  } else if (how === "crash-after-launch") {
    // launched, but the backend's ID never stored: the retry and every reader must still find the job's directory
    const c = await r.t.sb.runAsync(args, { env: { AWAITLESS_TEST_CRASH_AFTER_LAUNCH: "1" } });
    if (c.code === 98) r.fault("submit client died after launch");
  }
  const again = await r.t.sb.runAsync(args);
  if (again.code !== 0) throw new Error(`the retried submit failed (${again.code}): ${again.stderr}`);
  return again.json.job_id as string;
}

/** Waits for the end of the job while killing wait clients and (SSH) connections at random moments. */
async function waitThroughFaults(r: Run, id: string, faults: number): Promise<void> {
  for (let i = 0; i < faults; i++) {
    const p = r.t.sb.spawn(["wait", "--json", id]);
    await moment(between(r.rand, 50, 900));
    const drop = r.t.dropConnections !== undefined && r.rand() < 0.4;
    if (p.exitCode !== null) {
      await p.exited;
      continue;
    }
    if (drop && r.t.dropConnections!() > 0) {
      r.fault("ssh connection dropped");
      // the waiter reconnects or fails; either way it must not change the job
      await Promise.race([p.exited, moment(2000)]);
      if (p.exitCode === null) p.kill("SIGKILL");
    } else {
      p.kill("SIGKILL");
      r.fault("wait client killed");
    }
    await p.exited;
  }
}

async function cancelThroughFaults(r: Run, id: string): Promise<void> {
  await until("the job running", () => r.t.sb.status(id).state === "running", r.t.jobMs);
  if (r.rand() < 0.6) {
    const p = r.t.sb.spawn(["cancel", "--json", "--grace-period", "2s", id]);
    await moment(between(r.rand, 0, 300));
    if (p.exitCode === null) {
      p.kill("SIGKILL");
      r.fault("cancel client killed");
    }
    await p.exited;
  }
  const c = await r.t.sb.runAsync(["cancel", "--json", "--grace-period", "2s", id]);
  if (c.json?.job_state !== "cancelled") r.violate(`cancel answered ${c.stdout.trim() || c.stderr.trim()}`);
}

async function killWrapper(r: Run, id: string): Promise<number> {
  // Three times the target's bound: on the shared test cluster a Slurm job can pend behind other test files' jobs
  // (a CI run's job waited more than 60 s while the preemption test held the nodes); pending is no fault of ours.
  const rec = await startedRecord(r.t, id, r.t.jobMs * 3);
  await moment(between(r.rand, 0, 500));
  killQuietly(Number(rec.wrapper_pid));
  r.fault("wrapper killed");
  return Number(rec.pgid);
}

function lines(path: string): string[] {
  try {
    return readFileSync(path, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

/** One seeded schedule on one backend: submit, then wait/cancel/wrapper faults, then the invariants. */
async function schedule(r: Run): Promise<void> {
  const kind = pick(r.rand, ["complete", "complete", "cancel", "wrapper"] as const satisfies Kind[]);
  const marker = join(r.markers, String(r.seed));
  const exit = pick(r.rand, [0, 3]);
  const work = kind === "complete" ? `sleep ${between(r.rand, 2, 15) / 10}` : "sleep 300";
  const script = `echo start >> ${marker}; ${work}; echo end >> ${marker}; echo out-${r.seed}; exit ${exit}`;
  step(r, `${kind}: submit`);
  const id = await submitThroughFaults(r, ["sh", "-c", script]);
  step(r, `submitted ${id}`);
  let pgid = 0;
  if (kind === "cancel") await cancelThroughFaults(r, id);
  if (kind === "wrapper") pgid = await killWrapper(r, id);
  await waitThroughFaults(r, id, between(r.rand, 0, 2));

  step(r, "final wait");
  // bounded: a job that never ends is a violation with its seed, not a hung suite
  const bound = ["--timeout", `${Math.ceil((2 * r.t.jobMs) / 1000)}s`];
  const first: CliResult = await r.t.sb.runAsync(["wait", "--json", ...bound, id]);
  step(r, `ended ${first.json?.state}`);
  if (pgid > 0) for (const p of groupMembers(pgid)) killQuietly(p);
  const state = first.json?.state as string | undefined;
  const starts = lines(marker).filter((l) => l === "start").length;
  const ends = lines(marker).filter((l) => l === "end").length;
  const named = r.t.sb
    .run(["list", "--json", "--limit", "10000"])
    .json.jobs.filter((j: { name: string | null }) => j.name === `fault-${r.seed}`);
  if (named.length !== 1) r.violate(`${named.length} jobs for one idempotency key`);
  if (starts > 1) r.violate(`the command launched ${starts} times`);
  if (ends === 1) {
    const want = exit === 0 ? "succeeded" : "failed";
    if (
      state !== want ||
      first.json.exit_code !== exit ||
      !String(first.json.stdout_tail).includes(`out-${r.seed}`)
    )
      r.violate(
        `a job that ran to completion (exit ${exit}) reads ${state} exit ${first.json?.exit_code}, stdout tail ${JSON.stringify(first.json?.stdout_tail)}`,
      );
  }
  if (kind === "cancel" && state !== "cancelled") r.violate(`a cancelled job reads ${state}`);
  if (kind === "complete" && ends !== 1) r.violate(`a job left to complete ended ${ends} times`);
  if (state === undefined || ["queued", "starting", "running", "stalled"].includes(state))
    r.violate(`the final wait answered ${first.stdout.trim() || first.stderr.trim()}`);

  // more faults after the end must change nothing: same state, the same bytes on every replay
  await waitThroughFaults(r, id, between(r.rand, 1, 2));
  const second = await r.t.sb.runAsync(["wait", "--json", ...bound, id]);
  step(r, "replayed");
  if (second.stdout !== first.stdout) r.violate("a replayed result differs from the first");
  const after = r.t.sb.status(id).state;
  if (after !== state) r.violate(`terminal state moved ${state} → ${after}`);
}

/** Runs `count` schedules from `baseSeed`, each on a backend chosen by its seed; never throws for a violation. */
export async function runFaultSchedules(
  backends: Backends,
  baseSeed: number,
  count: number,
): Promise<Summary> {
  const summary: Summary = { schedules: 0, faults: 0, violations: [], byFault: {} };
  const markers = mkdtempSync(join(tmpdir(), "awl-faults-"));
  // the SSH test user's jobs append to the markers too
  chmodSync(markers, 0o777);
  const names = Object.keys(backends);
  try {
    for (let i = 0; i < count; i++) {
      const seed = baseSeed + i;
      const rand = prng(seed);
      const backend = pick(rand, names);
      const r: Run = {
        seed,
        backend,
        t: backends[backend]!,
        rand,
        markers,
        summary,
        t0: Date.now(),
        fault(name) {
          step(r, name);
          summary.faults++;
          summary.byFault[name] = (summary.byFault[name] ?? 0) + 1;
        },
        violate(what) {
          summary.violations.push({ seed, backend, what });
        },
      };
      try {
        await schedule(r);
      } catch (e) {
        r.violate(`the schedule broke: ${e instanceof Error ? e.message : String(e)}`);
      }
      summary.schedules++;
    }
  } finally {
    rmSync(markers, { recursive: true, force: true });
  }
  return summary;
}

export function summaryLine(s: Summary, baseSeed: number): string {
  const kinds = Object.entries(s.byFault)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
  return `fault schedule (seed ${baseSeed}): ${s.schedules} schedules run, ${s.faults} faults injected (${kinds}), ${s.violations.length} violations`;
}
