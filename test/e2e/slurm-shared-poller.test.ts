// One poller per cluster per machine, through the binary against the real Slurm: two CLI waiters over several jobs
// make one squeue + one sacct round per interval between them, each round asking for every job either waits on.
// The calls are counted by squeue/sacct wrappers first on PATH (test/e2e/slurm-call-log.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { killQuietly, Sandbox, until } from "../helpers/cli.ts";
import { CallLog } from "./slurm-call-log.ts";
import { run, slurmJobIdOf, slurmUp } from "./slurm-harness.ts";

const up = await slurmUp("Slurm shared poller e2e");
const INTERVAL_S = 2;

describe.skipIf(!up)("one poller per cluster per machine (real Slurm)", () => {
  const sb = up ? new Sandbox() : null;
  const log = sb ? new CallLog(join(sb.root, "calls")) : null;
  const slurmIds: string[] = [];
  const pids: number[] = [];
  afterAll(async () => {
    for (const pid of pids) killQuietly(pid);
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds]);
    sb?.cleanup();
  });

  test("two CLI waiters over four jobs share one round per interval", async () => {
    const s = sb!;
    const calls = log!;
    s.env.PATH = calls.path();
    s.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = ${INTERVAL_S}\nslurm_min_poll_interval_seconds = ${INTERVAL_S}\n[hosts.localhost]\nslurm_job_dir = "${join(s.root, "cluster")}"\nslurm_accounting_grace = 20\n`,
    );
    const marker = join(s.work, "go");
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(
        s.submit(
          ["sh", "-c", `while [ ! -e ${marker} ]; do sleep 0.3; done; echo done-${i}`],
          ["--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=16M"],
        ),
      );
    }
    for (const id of ids) slurmIds.push(await slurmJobIdOf(() => s.status(id)));
    const [a, b, c, d] = ids as [string, string, string, string];
    const w1 = s.spawn(["completions", "--drain", "--json", a, b, c]);
    const w2 = s.spawn(["completions", "--drain", "--json", b, c, d]);
    pids.push(w1.pid, w2.pid);
    const all = (args: string) => slurmIds.every((x) => args.includes(x));
    // from the first round that asks for the jobs of both waiters on, count the rounds
    const t0 = await until(
      "a squeue round covering both waiters' jobs",
      () => calls.calls().find((x) => x.program === "squeue" && all(x.args))?.atMs,
      60_000,
      100,
    );
    const ROUNDS = 6;
    await until(
      `${ROUNDS} rounds after the first shared one`,
      () => calls.count("squeue", t0) >= ROUNDS,
      ROUNDS * INTERVAL_S * 1000 + 60_000,
      100,
    );
    const squeues = calls.calls(t0).filter((x) => x.program === "squeue");
    const saccts = calls.calls(t0).filter((x) => x.program === "sacct");
    // each round asks for every job either process waits on, in one squeue and one sacct
    for (const q of squeues) expect(all(q.args)).toBe(true);
    expect(Math.abs(squeues.length - saccts.length)).toBeLessThanOrEqual(1);
    // one round per interval between the two processes: two pollers of their own would interleave their rounds
    for (let i = 1; i < squeues.length; i++) {
      expect(squeues[i]!.atMs - squeues[i - 1]!.atMs).toBeGreaterThanOrEqual(INTERVAL_S * 1000 * 0.75);
    }

    await Bun.write(marker, "");
    expect(await w1.exited).toBe(0);
    expect(await w2.exited).toBe(0);
    const out1 = await new Response(w1.stdout).text();
    const out2 = await new Response(w2.stdout).text();
    for (const id of [a, b, c]) expect(out1).toContain(id);
    for (const id of [b, c, d]) expect(out2).toContain(id);
    for (const id of ids) expect(s.status(id).state).toBe("succeeded");
  }, 240_000);
});
