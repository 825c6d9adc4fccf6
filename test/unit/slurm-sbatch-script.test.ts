// Pins the rendered Slurm batch script with golden files (test/fixtures/slurm/*.sbatch) and checks its safety rules.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  renderSbatchScript,
  type SbatchScriptInput,
  shellQuote,
  slurmCommentTag,
  slurmJobName,
} from "../../src/backends/slurm/sbatch-script.ts";
import { AwaitlessError } from "../../src/core/model/errors.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "slurm");
const UPDATE = process.env.AWAITLESS_UPDATE_GOLDEN === "1";
const JOB_ID = "job_01JF3Q8W5V2C7T0K5R9N4B6C1D";

const BASE: SbatchScriptInput = {
  jobId: JOB_ID,
  slurmJobDir: `/scratch/alice/.awaitless/jobs/${JOB_ID}`,
  wrapperPath: "/home/alice/.awaitless/bin/wrapper-0.1.0.sh",
  options: {},
};

function expectGolden(name: string, actual: string): void {
  const path = join(FIXTURES, name);
  if (UPDATE) writeFileSync(path, actual);
  if (!existsSync(path)) {
    throw new Error(
      `Golden file test/fixtures/slurm/${name} is missing; create it with AWAITLESS_UPDATE_GOLDEN=1.`,
    );
  }
  const expected = readFileSync(path, "utf8");
  if (actual !== expected) {
    throw new Error(
      `Rendered batch script differs from the golden file test/fixtures/slurm/${name}.\n--- expected\n${expected}\n--- actual\n${actual}\n` +
        "If the change is intended, accept it with: AWAITLESS_UPDATE_GOLDEN=1 bun test test/unit/slurm-sbatch-script.test.ts",
    );
  }
}

describe("renderSbatchScript golden files", () => {
  test("minimal: tags, batch-shell logs, exec of the wrapper", () => {
    expectGolden("minimal.sbatch", renderSbatchScript(BASE));
  });
  test("every allowlisted option but mem_per_cpu, with a user job name", () => {
    const script = renderSbatchScript({
      ...BASE,
      jobName: "train resnet/50 (v2)",
      options: {
        time: "1-00:00:00",
        partition: "gpu",
        mem: "32G",
        account: "proj-42",
        constraint: "a100&ib",
        cpus_per_task: "8",
        gres: "gpu:a100:2",
        nodes: "1",
        ntasks: "1",
        qos: "high",
        exclusive: "yes",
        gpus: "a100:2",
        gpus_per_node: "a100:2",
        gpus_per_task: "1",
        licenses: "matlab@flex:2,comsol",
        reservation: "maint",
      },
    });
    expectGolden("all-options.sbatch", script);
  });
  test("memory per CPU and exclusive=user (the options the first golden cannot combine)", () => {
    const script = renderSbatchScript({
      ...BASE,
      options: { mem_per_cpu: "4G", exclusive: "user", partition: "cpu" },
    });
    expectGolden("mem-per-cpu.sbatch", script);
  });
  test("an array chunk: --array=IDS%N, batch output through each task's link (%a), the task's directory by SLURM_ARRAY_TASK_ID", () => {
    const script = renderSbatchScript({
      ...BASE,
      slurmJobDir: `/scratch/alice/.awaitless/arrays/${JOB_ID}/1`,
      jobId: `${JOB_ID}.1`,
      jobName: "sweep",
      options: { mem: "1G" },
      array: { taskIds: "0-99,105", throttle: 8 },
      dependency: "afterany:1663",
    });
    expectGolden("array-chunk.sbatch", script);
  });
  test("an array without %N has no throttle; bad task IDs are refused", () => {
    const script = renderSbatchScript({ ...BASE, array: { taskIds: "0-3" } });
    expect(script).toContain("#SBATCH --array=0-3\n");
    for (const taskIds of ["0-3%2", "a", "1;2", ""]) {
      expect(() => renderSbatchScript({ ...BASE, array: { taskIds } })).toThrow(AwaitlessError);
    }
  });
  test("a held child (a :failed/:any parent with retries): --hold, with the other parents' --dependency", () => {
    const script = renderSbatchScript({ ...BASE, dependency: "afterok:12", hold: true });
    expect(script).toContain("#SBATCH --dependency=afterok:12\n#SBATCH --hold\n");
    expect(renderSbatchScript(BASE)).not.toContain("--hold");
  });
  test("exclusive=no renders no --exclusive line", () => {
    expect(renderSbatchScript({ ...BASE, options: { exclusive: "no" } })).toBe(renderSbatchScript(BASE));
  });
});

describe("renderSbatchScript rules", () => {
  test("starts with a shebang, every directive precedes the first command, ends with the exec", () => {
    const lines = renderSbatchScript({ ...BASE, options: { mem: "1G" } })
      .trimEnd()
      .split("\n");
    expect(lines[0]).toBe("#!/bin/sh");
    const firstCommand = lines.findIndex((l) => !l.startsWith("#"));
    expect(firstCommand).toBe(lines.length - 1);
    expect(lines.filter((l) => l.startsWith("#SBATCH --mem=1G"))).toHaveLength(1);
    expect(lines.at(-1)).toBe(`exec sh '${BASE.wrapperPath}' '${BASE.slurmJobDir}'`);
  });

  test("trailing slashes on the job dir are dropped", () => {
    const script = renderSbatchScript({ ...BASE, slurmJobDir: "/scratch/j1/" });
    expect(script).toContain("#SBATCH --output=/scratch/j1/slurm-batch.out\n");
  });

  test("unsafe paths are refused with a hint", () => {
    for (const dir of ["relative/dir", "/has space", "/pct%j", "/a/../b", "/q'uote", "/nl\n", "/$(id)"]) {
      let error: unknown;
      try {
        renderSbatchScript({ ...BASE, slurmJobDir: dir });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AwaitlessError);
      expect((error as AwaitlessError).code).toBe("invalid_argument");
      expect((error as AwaitlessError).hint).toContain("slurm_job_dir");
    }
    expect(() => renderSbatchScript({ ...BASE, wrapperPath: "/x y/wrapper.sh" })).toThrow(/wrapper path/);
  });

  test("options are validated again (no newline smuggling into #SBATCH lines)", () => {
    expect(() => renderSbatchScript({ ...BASE, options: { partition: "gpu\n#SBATCH --uid=0" } })).toThrow(
      /partition/,
    );
    const smuggled = { ...BASE, options: { "wrap=": "x" } as Record<string, string> };
    expect(() => renderSbatchScript(smuggled)).toThrow(/Unknown/);
  });

  test("job IDs are checked", () => {
    expect(() => renderSbatchScript({ ...BASE, jobId: "job_x;rm" })).toThrow(/job ID/);
  });
});

describe("tags and quoting", () => {
  test("job names end with the job ID; user names are sanitised", () => {
    expect(slurmJobName(JOB_ID)).toBe(`awaitless-${JOB_ID}`);
    expect(slurmJobName(JOB_ID, "train resnet/50 (v2)")).toBe(`train_resnet_50_v2-${JOB_ID}`);
    expect(slurmJobName(JOB_ID, "$$$")).toBe(`awaitless-${JOB_ID}`);
    expect(slurmJobName(JOB_ID, "x".repeat(200))).toBe(`${"x".repeat(64)}-${JOB_ID}`);
    expect(slurmCommentTag(JOB_ID)).toBe(`awaitless:${JOB_ID}`);
  });

  test("shellQuote survives a real sh round trip", async () => {
    const nasty = `it's $(id) \`x\` "q" \\ ; & | \n end`;
    const proc = Bun.spawn(["sh", "-c", `printf %s ${shellQuote(nasty)}`], { stdout: "pipe" });
    expect(await new Response(proc.stdout).text()).toBe(nasty);
    expect(await proc.exited).toBe(0);
  });
});
