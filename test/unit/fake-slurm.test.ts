// The fake scheduler commands (test/fake-slurm/fake-slurm.sh) answer in the formats the Slurm backend asks for and
// parses (slurm-queries.ts): a change of SQUEUE_FORMAT or SACCT_FIELDS must change the fake too.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  parseSacct,
  parseSbatchReply,
  parseScontrolJob,
  parseSqueue,
  SACCT_FIELDS,
  SQUEUE_FORMAT,
  sacctArgs,
  scontrolShowJobArgs,
  squeueArgs,
} from "../../src/backends/slurm/slurm-queries.ts";
import { killQuietly } from "../helpers/cli.ts";
import { until } from "../helpers/until.ts";

const FAKE = join(import.meta.dir, "..", "fake-slurm", "fake-slurm.sh");
const state = mkdtempSync(join(tmpdir(), "awl-fake-slurm-"));
afterAll(() => rmSync(state, { recursive: true, force: true }));

function fake(argv: readonly string[], stdin = ""): { code: number; out: string } {
  const r = Bun.spawnSync(["sh", FAKE, ...argv], {
    stdin: Buffer.from(stdin),
    env: { ...process.env, AWL_FAKE_SLURM: state },
  });
  return { code: r.exitCode, out: r.stdout.toString() };
}

test("the fake's fields are the ones the backend asks for", () => {
  expect(SQUEUE_FORMAT).toBe("%i|%T|%r|%j|%k");
  expect(SACCT_FIELDS).toBe("JobID,State,ExitCode,Reason,Submit,Start,End,JobName,Comment");
});

test("sbatch runs the script; squeue, sacct and scontrol report it as Slurm would, parsed by our parsers", async () => {
  const go = join(state, "go");
  const script = `#!/bin/sh\n#SBATCH --job-name=n-job_01FAKE\n#SBATCH --comment=awaitless:job_01FAKE\n#SBATCH --chdir=${state}\nwhile [ ! -e ${go} ]; do sleep 0.05; done\nexit 3\n`;
  const sbatch = fake(["sbatch", "--parsable"], script);
  expect(sbatch.code).toBe(0);
  const id = parseSbatchReply(sbatch.out).slurmJobId;
  const dir = join(state, "jobs", id);
  const pid = Number(
    await until("the batch shell", () =>
      existsSync(join(dir, "pid")) ? readFileSync(join(dir, "pid"), "utf8") || undefined : undefined,
    ),
  );
  try {
    const running = parseSqueue(fake(squeueArgs([id])).out);
    expect(running).toMatchObject([
      { slurmJobId: id, slurmState: "RUNNING", name: "n-job_01FAKE", comment: "awaitless:job_01FAKE" },
    ]);
    Bun.write(go, "");
    await until("the job to end", () =>
      readFileSync(join(dir, "state"), "utf8").trim() === "FAILED" ? true : undefined,
    );
    expect(parseSqueue(fake(squeueArgs([id])).out)).toEqual([]);
    const [row] = parseSacct(fake(sacctArgs([id], new Date())).out);
    expect(row).toMatchObject({
      slurmJobId: id,
      slurmState: "FAILED",
      exitCode: "3:0",
      name: "n-job_01FAKE",
    });
    expect(row?.start).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(parseScontrolJob(fake(scontrolShowJobArgs(id)).out)).toMatchObject({
      slurmJobId: id,
      slurmState: "FAILED",
      exitCode: "3:0",
    });
  } finally {
    killQuietly(pid);
  }
});
