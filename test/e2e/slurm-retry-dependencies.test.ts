// `--after` on a Slurm parent that has retries, on the real test cluster through the binary: the child's native
// afterok names the parent's current attempt's Slurm job and moves to each new attempt (scontrol update), so an
// earlier attempt's failure (DependencyNeverSatisfied) never ends the child; :failed/:any are refused before
// anything is created.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";
import { run, slurmUp } from "./slurm-harness.ts";

const up = await slurmUp("Slurm retry-dependency e2e");

describe.skipIf(!up)("Slurm: a dependency on a retried parent", () => {
  const sb = up ? new Sandbox() : null;
  const submitted: string[] = [];
  afterAll(async () => {
    if (submitted.length > 0) await run(["scancel", ...submitted]);
    sb?.cleanup();
  });
  const flags = ["--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=32M"];
  const track = (id: string) => {
    for (const a of sb!.run(["inspect", "--json", id]).json.attempt_history ?? [])
      if (a.backend_id?.slurm_job_id !== undefined) submitted.push(String(a.backend_id.slurm_job_id));
    const sid = sb!.status(id).backend_id?.slurm_job_id;
    if (sid !== undefined) submitted.push(String(sid));
  };

  test("a parent failing twice, then succeeding: the :ok child runs once, after the success", async () => {
    const s = sb!;
    s.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${join(s.root, "cluster")}"\nslurm_accounting_grace = 20\n`,
    );
    const count = join(s.work, "count");
    const p = s.submit(
      [
        "sh",
        "-c",
        `n=$(cat '${count}' 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > '${count}'; sleep 3; [ "$n" -ge 3 ]`,
      ],
      [...flags, "--retries", "2", "--retry-on", "exit", "--retry-backoff", "0"],
    );
    const refused = s.run(["submit", ...flags, "--after", `${p}:failed`, "--", "true"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("only an :ok dependency can follow its attempts");
    const child = s.submit(["sh", "-c", `echo "saw $(cat '${count}')"`], [...flags, "--after", p]);
    const first = String(s.status(p).backend_id.slurm_job_id);
    const shown = (await run(["scontrol", "show", "job", String(s.status(child).backend_id.slurm_job_id)]))
      .stdout;
    expect(shown).toContain(`afterok:${first}`);
    const w = await s.runAsync(["wait", "--json", "--timeout", "240s", child]);
    track(p);
    track(child);
    expect([w.json.job_state, w.json.stdout_tail]).toEqual(["succeeded", "saw 3\n"]);
    const parent = (await s.runAsync(["wait", "--json", "--timeout", "60s", p])).json;
    expect([parent.state, parent.attempt, parent.attempts]).toEqual(["succeeded", 3, 3]);
    const ins = s.run(["inspect", "--json", p]).json;
    expect(ins.attempt_history.map((a: { state: string }) => a.state)).toEqual(["failed", "failed"]);
  }, 300_000);
});
