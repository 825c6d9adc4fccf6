// The whole log of a Slurm job through the compiled binary on the real test cluster: on a local login node (the
// scan streams in-process) and over the private sshd (the scan runs on the login node): --grep finds a line near
// the start of a 1 MiB+ log with its number, --lines pages it. Async spawns only.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { run, slurmUp } from "./slurm-harness.ts";
import { type SshWorld, sshWorld } from "./ssh-fixture.ts";

const up = await slurmUp("Slurm log scan e2e");
const sshUp = up && gateOnAvailability("Slurm log scan over SSH e2e", sshdAvailable());

/** 16,000 lines of 70 bytes (1.1 MB), one ERROR in the middle. */
const PRINT =
  'awk \'BEGIN { for (i = 1; i <= 16000; i++) { printf "line %06d %s\\n", i, (i == 8000 ? "ERROR in the middle" : ' +
  '"build output build output build output build output ok") } }\'';
const FIRST = "1:line 000001 build output build output build output build output ok\n";

async function check(sb: Sandbox, host: string, submitted: string[]): Promise<void> {
  const cli = async (args: string[]) => {
    const r = await sb.runAsync(args);
    if (r.code !== 0 && args[0] !== "wait")
      throw new Error(`awaitless ${args.join(" ")} failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r;
  };
  const sub = await cli([
    "submit",
    "--json",
    "--backend",
    "slurm",
    "--host",
    host,
    "--slurm-option",
    "mem=32M",
    "--",
    "sh",
    "-c",
    PRINT,
  ]);
  const id = String(sub.json.job_id);
  submitted.push(String((await cli(["status", "--json", id])).json.backend_id.slurm_job_id));
  expect((await cli(["wait", "--json", id])).json.state).toBe("succeeded");
  const grep = await cli(["logs", id, "--stream", "stdout", "--grep", "line 000001 |ERROR", "--json"]);
  expect(grep.json.stdout_bytes).toBeGreaterThan(1 << 20);
  expect(grep.json.stdout).toBe(`${FIRST}8000:line 008000 ERROR in the middle\n`);
  expect(grep.json.stdout_page.matches_total).toBe(2);
  const range = await cli(["logs", id, "--stream", "stdout", "--lines", "8000:8000"]);
  expect(range.stdout).toBe("line 008000 ERROR in the middle\n");
}

describe.skipIf(!up)("Slurm job logs on a local login node", () => {
  const sb = up ? new Sandbox() : null;
  const submitted: string[] = [];
  afterAll(async () => {
    if (submitted.length > 0) await run(["scancel", ...submitted]);
    sb?.cleanup();
  });
  test("--grep reaches the start of a 1 MiB+ log; --lines pages it", async () => {
    const s = sb as Sandbox;
    s.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = 0.5\nslurm_min_poll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${join(s.root, "cluster")}"\nslurm_accounting_grace = 20\n`,
    );
    await check(s, "localhost", submitted);
  }, 120_000);
});

describe.skipIf(!sshUp)("Slurm job logs over SSH", () => {
  let w: SshWorld;
  const submitted: string[] = [];
  beforeAll(async () => {
    w = await sshWorld();
  });
  afterAll(async () => {
    if (submitted.length > 0) await run(["scancel", ...submitted]);
    await w?.close();
  });
  test("the scan runs on the login node: --grep reaches the start of a 1 MiB+ log; --lines pages it", async () => {
    w.sb.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = 0.5\nslurm_min_poll_interval_seconds = 0.5\n[hosts.${w.alias.dash}]\nslurm_accounting_grace = 20\n`,
    );
    await check(w.sb, w.alias.dash, submitted);
  }, 120_000);
});
