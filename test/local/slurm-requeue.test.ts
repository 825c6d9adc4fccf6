// A requeued Slurm job, through the binary with the fake scheduler commands (test/fake-slurm/): while the second run
// is RUNNING but its batch script has not started yet, the first run's old records must not end it (heartbeat_lost).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Target } from "../contract/contract.ts";
import { slurmFakeTarget } from "../contract/targets.ts";
import { until } from "../helpers/cli.ts";

let t: Target;
beforeAll(async () => {
  t = await slurmFakeTarget();
});
afterAll(async () => {
  await t?.close();
});

/** The record's `key=N` line set to N - agoS (as if written agoS seconds earlier). */
function age(path: string, keys: string[], agoS: number): void {
  let text = readFileSync(path, "utf8");
  for (const k of keys)
    text = text.replace(new RegExp(`^${k}=(\\d+)$`, "m"), (_m, n) => `${k}=${Number(n) - agoS}`);
  writeFileSync(path, text);
}

test("the second run of a requeued job is not lost to the first run's old heartbeat; its own records count", async () => {
  const fake = (argv: string[]) => Bun.spawnSync(argv, { env: t.sb.env });
  const id = t.sb.submit(["sh", "-c", "echo run; sleep 300"], t.flags);
  const dir = t.jobDir(id);
  await until(
    "the first run",
    () => existsSync(join(dir, "heartbeat")) && t.sb.status(id).state === "running",
    20_000,
  );
  const sid = String(t.sb.status(id).backend_id.slurm_job_id);
  const state = t.sb.env.AWL_FAKE_SLURM!;
  expect(fake(["scontrol", "requeuehold", sid]).exitCode).toBe(0);
  await until(
    "the requeue seen",
    () => /pending|requeued/i.test(String(t.sb.status(id).status_message)),
    20_000,
  );
  expect(t.sb.status(id).state).toBe("running");
  // the first run's records as a long hold leaves them: 300 s old, beyond the 100 s lost-after of a heartbeat
  age(join(dir, "started"), ["started_at"], 300);
  age(join(dir, "heartbeat"), ["now", "last_change"], 300);
  writeFileSync(join(state, "prolog_seconds"), "4\n");
  expect(fake(["scontrol", "release", sid]).exitCode).toBe(0);
  // Slurm says RUNNING while the batch script has not started (the fake's prolog): the old records decide nothing
  const starting = await until(
    "the second run allocated",
    () => {
      const st = t.sb.status(id);
      return /starting the command/.test(String(st.status_message)) || st.state === "lost" ? st : undefined;
    },
    20_000,
  );
  expect(starting.state).toBe("running");
  // this run's wrapper moves the first run's records aside and writes its own
  await until("the second run's started record", () => existsSync(join(dir, "started.earlier")), 20_000);
  expect(readFileSync(join(dir, "started.earlier"), "utf8")).toContain("started_at=");
  await until(
    "the second run running",
    () => !/starting the command/.test(String(t.sb.status(id).status_message)),
    20_000,
  );
  expect(t.sb.status(id).state).toBe("running");
  const c = await t.sb.runAsync(["cancel", "--json", "--grace-period", "2s", id]);
  expect(c.json.state).toBe("cancelled");
  expect(t.sb.run(["logs", id]).stdout).toContain("run\nrun\n");
}, 90_000);
