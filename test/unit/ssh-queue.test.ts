// SSH queue pieces without a host: the snapshot and cancel scripts run by real sh (dash, busybox) on temp dirs,
// snapshot parsing, `queued` in observations, and the shared spec text every backend writes.
import { afterAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { queueDirOfJob } from "../../src/backends/host/wrapper-backend.ts";
import { jobSpecText } from "../../src/backends/job-spec.ts";
import { parseObserveReport, toObservation } from "../../src/backends/ssh/ssh-observe.ts";
import type { LaunchInput } from "../../src/core/backend/backend.ts";
import type { Job } from "../../src/core/model/job.ts";
import { parseQueueSnapshot, QUEUE_SNAPSHOT, script } from "../../src/wrapper/host-scripts.ts";
import { renderSpec } from "../../src/wrapper/protocol.ts";
import { CANCEL_TEXT } from "../../src/wrapper/scripts.ts";

const tmp = mkdtempSync(join(tmpdir(), "awl-ssh-queue-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const shells = [
  ["sh", Bun.which("sh")],
  ["dash", Bun.which("dash")],
  ["busybox", Bun.which("busybox")],
].filter((s): s is [string, string] => s[1] !== null);

function runScript(shell: string, body: string, args: string[]): { code: number; out: string } {
  const argv = shell.endsWith("busybox") ? [shell, "sh", "-s"] : [shell, "-s"];
  const p = Bun.spawnSync(argv, { stdin: Buffer.from(script(body, args)), stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode ?? -1, out: p.stdout.toString() };
}

const startOf = (pid: number | "self") => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
};
const bootId = () => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();

/** Processes the fixtures start (stand-in wrappers, a command group), killed when the file is done. */
const spawned: number[] = [];
afterAll(() => {
  for (const p of spawned) {
    try {
      process.kill(-p, "SIGKILL");
    } catch {}
  }
});

/** A live stand-in for JOB's wrapper: a shell whose command line is ROOT/bin/wrapper-….sh ROOT/jobs/JOB, as launched. */
function standInWrapper(root: string, job: string): { wrapper_pid: number; proc_start: string } {
  mkdirSync(join(root, "bin"), { recursive: true });
  writeFileSync(join(root, "bin", "wrapper-test.sh"), "sleep 600\n");
  const p = Bun.spawn(["sh", join(root, "bin", "wrapper-test.sh"), join(root, "jobs", job)], {
    detached: true,
    stdio: ["ignore", "ignore", "ignore"],
  });
  spawned.push(p.pid);
  return { wrapper_pid: p.pid, proc_start: startOf(p.pid) };
}

describe.each(shells)("remote queue scripts under %s", (name, shell) => {
  const root = join(tmp, name);
  const q = join(root, "queues");
  mkdirSync(join(q, "running"), { recursive: true });
  mkdirSync(join(q, "waiting"), { recursive: true });
  const entry = (fields: Record<string, string | number>) =>
    `${Object.entries(fields)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n")}\n`;
  const live = (job: string) => ({ ...standInWrapper(root, job), boot_id: bootId() });
  writeFileSync(join(q, "running", "job_RUN"), entry({ ticket: 3, queue: "gpu", ...live("job_RUN") }));
  // a killed wrapper whose command group (its leader carrying the job's ID) still runs keeps its slot
  const cmd = Bun.spawn(["sleep", "600"], {
    detached: true,
    stdio: ["ignore", "ignore", "ignore"],
    env: { ...process.env, AWAITLESS_JOB_ID: "job_CMD" },
  });
  spawned.push(cmd.pid);
  writeFileSync(
    join(q, "running", "job_CMD"),
    entry({
      ticket: 2,
      queue: "gpu",
      wrapper_pid: 999_999_999,
      boot_id: bootId(),
      pid: cmd.pid,
      pgid: cmd.pid,
    }),
  );
  writeFileSync(join(q, "running", "job_DEAD"), entry({ ticket: 1, queue: "gpu", wrapper_pid: 999_999_999 }));
  writeFileSync(
    join(q, "waiting", "9.job_W9"),
    entry({ ticket: 9, queue: "", resources: "gpu=0", ...live("job_W9") }),
  );
  writeFileSync(join(q, "waiting", "5.job_W5"), entry({ ticket: 5, queue: "gpu", ...live("job_W5") }));
  writeFileSync(
    join(q, "waiting", "6.job_OLDBOOT"),
    entry({ ticket: 6, queue: "gpu", ...live("job_OLDBOOT"), boot_id: "other" }),
  );
  writeFileSync(
    join(q, "waiting", "7.job_STALE"),
    entry({ ticket: 7, queue: "gpu", ...live("job_STALE"), proc_start: "1" }),
  );
  // forged: naming live processes with their true start times that are not the job's wrapper (this test process; a
  // wrapper of another job), and a running slot naming a live group whose leader does not carry the job's ID
  const self = { wrapper_pid: process.pid, proc_start: startOf("self"), boot_id: bootId() };
  writeFileSync(join(q, "waiting", "4.job_FORGED"), entry({ ticket: 4, queue: "gpu", ...self }));
  writeFileSync(join(q, "waiting", "8.job_OTHER"), entry({ ticket: 8, queue: "gpu", ...live("job_W5") }));
  const ownGroup = Number(readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")[2]);
  writeFileSync(
    join(q, "running", "job_GROUP"),
    entry({
      ticket: 1,
      queue: "gpu",
      wrapper_pid: 999_999_999,
      boot_id: bootId(),
      pid: ownGroup,
      pgid: ownGroup,
    }),
  );

  test("the snapshot lists live entries only, waiting ones in ticket order; forged entries naming live processes that are not the job's are not live", () => {
    const r = runScript(shell, QUEUE_SNAPSHOT, ["-r", root]);
    expect(r.code).toBe(0);
    const snap = parseQueueSnapshot(r.out);
    expect(snap.running.sort((a, b) => a.job_id.localeCompare(b.job_id))).toEqual([
      { job_id: "job_CMD", queue: "gpu" },
      { job_id: "job_RUN", queue: "gpu" },
    ]);
    expect(snap.waiting).toEqual([
      { job_id: "job_W5", queue: "gpu", ticket: 5 },
      { job_id: "job_W9", queue: null, ticket: 9 },
    ]);
  });

  test("a root without queues is an empty snapshot", () => {
    const r = runScript(shell, QUEUE_SNAPSHOT, ["-r", join(tmp, `${name}-none`)]);
    expect(r.code).toBe(0);
    expect(parseQueueSnapshot(r.out)).toEqual({ running: [], waiting: [] });
  });

  test("cancel writes the cancel file, then takes only this job out of line", () => {
    const dir = join(root, "jobs", "job_W5");
    mkdirSync(dir, { recursive: true });
    expect(queueDirOfJob(dir)).toBe(q);
    const r = runScript(shell, CANCEL_TEXT, [dir, "3", q]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, "cancel"), "utf8")).toBe("3\n");
    expect(readdirSync(join(q, "waiting")).sort()).toEqual([
      "4.job_FORGED",
      "6.job_OLDBOOT",
      "7.job_STALE",
      "8.job_OTHER",
      "9.job_W9",
    ]);
    // without a queue dir nothing in line is touched
    const other = join(root, "jobs", "job_W9");
    mkdirSync(other, { recursive: true });
    expect(runScript(shell, CANCEL_TEXT, [other, "0", ""]).code).toBe(0);
    expect(existsSync(join(q, "waiting", "9.job_W9"))).toBe(true);
  });
});

describe("snapshot parsing and observations", () => {
  test("unknown lines and bad tickets are ignored", () => {
    expect(parseQueueSnapshot("junk\nW x.job_A q\nW 2.job_B q\nR job_C \n")).toEqual({
      running: [{ job_id: "job_C", queue: null }],
      waiting: [{ job_id: "job_B", queue: "q", ticket: 2 }],
    });
  });

  const queued =
    "queue=gpu\nconcurrency=1\nresources=gpu=0\nticket=4\nsince=100\nposition=2\nahead=1\nrunning=1\nheld=1\n";
  const report = (files: string) =>
    parseObserveReport(`boot=B\n\n@@job /r/jobs/job_Q\nalive=1 pid=5 start=\n${files}`);

  test("a waiting job's queued record becomes Observation.queued", () => {
    const r = report(`\n@@file queued\n${queued}`);
    const o = toObservation({ wrapperPid: 5 }, r.jobs.get("/r/jobs/job_Q"), "B");
    expect(o.queued).toEqual({
      queue: "gpu",
      position: 2,
      ahead: 1,
      running: 1,
      concurrency: 1,
      held: true,
      resources: ["gpu=0"],
      admitted: false,
    });
  });

  test("once started there is no queued; a never-started cancel has exit_code null", () => {
    const started = "protocol=1\nwrapper_pid=5\npid=6\npgid=6\nboot_id=B\nproc_start=\nstarted_at=101\n";
    const a = report(`\n@@file started\n${started}\n@@file queued\n${queued}admitted_at=101\n`);
    const known = { wrapperPid: 5 };
    expect(toObservation(known, a.jobs.get("/r/jobs/job_Q"), "B").queued).toBeUndefined();
    const exit = "exit_code=\nsignal=\nreason=cancelled\nfinished_at=102\ndescendants_alive=0\n";
    const b = report(`\n@@file exit\n${exit}`);
    expect(toObservation(known, b.jobs.get("/r/jobs/job_Q"), "B").exit?.exit_code).toBeNull();
  });
});

describe("jobSpecText", () => {
  const job = {
    job_id: "job_S",
    backend: "ssh",
    spec: { cwd: ".", argv: ["echo", "hi"], env: { A: "1" }, secret_env: ["TOKEN"], timeout_seconds: 2.5 },
  } as unknown as Job;
  const input: LaunchInput = { job, secretValues: { TOKEN: "s3" }, graceSeconds: 1.2, logCapBytes: 0 };

  test("the secret_env line, then exactly renderSpec of the job (Slurm's cwd override kept)", () => {
    const text = jobSpecText(job, input, { tickSeconds: 1, heartbeatSeconds: 1, cwd: "/abs/work" });
    const spec = renderSpec({
      jobId: "job_S",
      cwd: "/abs/work",
      argv: ["echo", "hi"],
      env: { A: "1", TOKEN: "s3" },
      timeoutSeconds: 3,
      graceSeconds: 2,
      tickSeconds: 1,
      heartbeatSeconds: 1,
      logCapBytes: 0,
    });
    expect(text).toBe(`# secret_env: TOKEN\n${spec}`);
  });

  test("admission gets the backend's queue directory and lock; without a directory it is refused", () => {
    const admission = { queue: "gpu", concurrency: 2, resources: ["gpu=0"] };
    const text = jobSpecText(
      job,
      { ...input, admission },
      { tickSeconds: 1, heartbeatSeconds: 1, admissionDir: "/h/.awaitless/queues", admissionLock: "mkdir" },
    );
    expect(text).toContain("AWL_QUEUE_DIR='/h/.awaitless/queues'\n");
    expect(text).toContain("AWL_QUEUE_LOCK=mkdir\n");
    expect(text).toContain("AWL_QUEUE_CONCURRENCY=2\n");
    expect(() => jobSpecText(job, { ...input, admission }, { tickSeconds: 1, heartbeatSeconds: 1 })).toThrow(
      /gave no queue directory/,
    );
  });
});
