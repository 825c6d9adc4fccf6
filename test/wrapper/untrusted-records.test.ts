// Files in a job directory are untrusted input: cancel.sh and the wrapper refuse a `started` naming pid or pgid 0 or
// 1 (checked inside a PID namespace, so a kill(-1) could only reach a canary there), signal a group only while its
// leader has the command's recorded start time (pid_start), stop the group of a job whose wrapper was killed, and
// write nothing through a symlink planted under a name they write (cancel.tmp, wrapper.log, heartbeat.tmp).
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseStarted, readStarted, writeCancelRequest } from "../../src/wrapper/protocol.ts";
import { CANCEL_TEXT } from "../../src/wrapper/scripts.ts";
import { startTime, untouched } from "../helpers/proc-state.ts";
import { termCounter, termsIn } from "../helpers/term-counter.ts";
import { describeEachShell, isGone, type Job, newJob, type ShellCase, shellEnv, waitFor } from "./harness.ts";

const counter = () => termCounter('"$AWAITLESS_JOB_DIR"', { ignoreTerm: true });

/** A pid that is certainly not running: a process that has exited and been reaped. */
function deadPid(): number {
  const p = Bun.spawnSync(["sh", "-c", "echo $$"], { stdout: "pipe" });
  return Number(p.stdout.toString().trim());
}

/** A process leading its own group, which a test must see survive; stopped on disposal. */
function canary(): { pid: number; [Symbol.dispose](): void } {
  const p = Bun.spawn(["sleep", "300"], { detached: true, stdin: "ignore", stdout: "ignore" });
  return {
    pid: p.pid,
    [Symbol.dispose]() {
      try {
        process.kill(-p.pid, "SIGKILL");
      } catch {}
    },
  };
}

function cancelScript(
  shell: ShellCase,
  job: Job,
  grace: number,
): { stdout: string; stderr: string; code: number } {
  const args = [job.dir, String(grace), "", job.jobId];
  const r = Bun.spawnSync([...shell.argv, "-c", CANCEL_TEXT, "awaitless-cancel", ...args], {
    env: shellEnv(shell),
    stdout: "pipe",
    stderr: "pipe",
  });
  return { stdout: r.stdout.toString(), stderr: r.stderr.toString(), code: r.exitCode ?? -1 };
}

async function lostJob(shell: ShellCase): Promise<Job> {
  const job = newJob().start(shell, { argv: counter(), graceSeconds: 30 });
  await waitFor("the command's ready", () =>
    existsSync(job.path("stdout")) && job.read("stdout").includes("ready") ? true : undefined,
  );
  const started = readStarted(job.dir)!;
  process.kill(started.wrapperPid, "SIGKILL");
  if (started.monitorPid) process.kill(started.monitorPid, "SIGKILL");
  await waitFor("the wrapper to be gone", () => (isGone(started.wrapperPid) ? true : undefined));
  return job;
}

test("a started record naming pid or pgid 0 or 1 does not parse", () => {
  const base = "protocol=1\nwrapper_pid=4242\nproc_start=9\nstarted_at=1\n";
  expect(parseStarted(`${base}pid=4243\npgid=4243\n`)?.pgid).toBe(4243);
  expect(parseStarted(`${base}pid=4243\npgid=1\n`)).toBeNull();
  expect(parseStarted(`${base}pid=4243\npgid=0\n`)).toBeNull();
  expect(parseStarted(`${base}pid=1\npgid=\n`)).toBeNull();
  expect(parseStarted(`protocol=1\nwrapper_pid=1\npid=4243\npgid=4243\nstarted_at=1\n`)).toBeNull();
});

test("writeCancelRequest does not write through a symlinked cancel.tmp", () => {
  const root = mkdtempSync(join(tmpdir(), "awl-untrusted-"));
  try {
    const precious = join(root, "precious.txt");
    writeFileSync(precious, "keep me\n");
    symlinkSync(precious, join(root, "cancel.tmp"));
    symlinkSync(join(root, "elsewhere"), join(root, "cancel"));
    writeCancelRequest(root, 7);
    expect(readFileSync(precious, "utf8")).toBe("keep me\n");
    expect(readFileSync(join(root, "cancel"), "utf8")).toBe("7\n");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

describeEachShell("untrusted records", (shell) => {
  test("pid=1 pgid=1 in started: cancel.sh refuses, a canary in the same PID namespace gets no signal", () => {
    const root = mkdtempSync(join(tmpdir(), "awl-untrusted-"));
    try {
      writeFileSync(join(root, "cancel.sh"), CANCEL_TEXT);
      // Inside its own PID namespace, kill(-1) from a mistaken script could only reach the canary sleep there.
      const inner = `sleep 300 & c=$!
printf 'protocol=1\\nwrapper_pid=%s\\nmonitor_pid=\\npid=1\\npgid=1\\nproc_start=1\\npid_start=1\\nstarted_at=1\\n' 99999 > "$1/started"
out=$("$0" -c "$(cat "$1/cancel.sh")" awaitless-cancel "$1" 1 "")
s=$(grep -E '^(State|SigPnd|ShdPnd):' /proc/$c/status | tr -s '\\t ' ' ' | tr '\\n' ';')
kill -KILL $c
printf '%s\\n%s\\n' "$out" "$s"`;
      const r = Bun.spawnSync(
        ["unshare", "--pid", "--fork", "--mount-proc", ...shell.argv, "-c", inner, shell.argv.at(-1)!, root],
        { env: shellEnv(shell), stdout: "pipe", stderr: "pipe" },
      );
      const [outcome, canaryState] = r.stdout.toString().split("\n");
      expect(outcome).toStartWith("refused ");
      expect(canaryState).toContain("SigPnd: 0000000000000000;");
      expect(canaryState).toContain("ShdPnd: 0000000000000000;");
      expect(canaryState).not.toContain("State: Z");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("a group whose leader's start time is not the recorded pid_start: refused, the canary survives", async () => {
    await using job = newJob();
    using c = canary();
    const wrong = String(Number(startTime(c.pid)) + 1);
    for (const pidStart of [wrong, ""]) {
      writeFileSync(
        job.path("started"),
        `protocol=1\nwrapper_pid=${deadPid()}\nmonitor_pid=\npid=${c.pid}\npgid=${c.pid}\nproc_start=1\npid_start=${pidStart}\nstarted_at=1\n`,
      );
      const r = cancelScript(shell, job, 1);
      expect(r.code).toBe(0);
      expect(r.stdout).toStartWith("refused ");
      expect(untouched(c.pid)).toBe(true);
    }
  });

  test("the started record holds the command's own start time (pid_start)", async () => {
    await using job = newJob().start(shell, { argv: ["sleep", "30"] });
    const started = await waitFor("started", () => readStarted(job.dir) ?? undefined);
    expect(started.pidStart).toBe(startTime(started.pid));
    expect(started.procStart).toBe(startTime(started.wrapperPid));
  });

  test("the wrapper killed, the command running: cancel.sh stops its group (pid_start matches)", async () => {
    await using job = await lostJob(shell);
    const started = readStarted(job.dir)!;
    const r = cancelScript(shell, job, 1);
    expect(r.stdout).toStartWith("signalled ");
    await waitFor("the group to be killed", () => (isGone(started.pid) ? true : undefined));
    expect(termsIn(job.dir)).toBe(1);
  });

  test("the wrapper killed, started's pid_start altered: its group is not signalled as one; the command, which carries the job's ID, gets its one TERM", async () => {
    await using job = await lostJob(shell);
    const started = readStarted(job.dir)!;
    const text = job.read("started").replace(/^pid_start=(\d+)$/m, (_m, n) => `pid_start=${Number(n) + 1}`);
    writeFileSync(job.path("started"), text);
    const r = cancelScript(shell, job, 1);
    expect(r.stdout).toStartWith("signalled ");
    expect(r.stdout).toContain("no process group");
    await waitFor("the command to be stopped", () => (isGone(started.pid) ? true : undefined));
    expect(termsIn(job.dir)).toBe(1);
  });

  test("a forged started naming an unrelated live group with its correct start time: refused, the canary survives", async () => {
    await using job = newJob();
    using c = canary();
    writeFileSync(
      job.path("started"),
      `protocol=1\nwrapper_pid=${deadPid()}\nmonitor_pid=\npid=${c.pid}\npgid=${c.pid}\nproc_start=1\npid_start=${startTime(c.pid)}\nstarted_at=1\n`,
    );
    const r = cancelScript(shell, job, 1);
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("refused ");
    expect(r.stdout).toContain(`does not carry AWAITLESS_JOB_ID=${job.jobId}`);
    expect(untouched(c.pid)).toBe(true);
  });

  test("symlinked cancel.tmp and wrapper.log: the files they point at are untouched, the cancel still works", async () => {
    await using job = await lostJob(shell);
    const started = readStarted(job.dir)!;
    const precious = join(job.root, "precious.txt");
    writeFileSync(precious, "keep me\n");
    symlinkSync(precious, job.path("cancel.tmp"));
    rmSync(job.path("wrapper.log"));
    symlinkSync(precious, job.path("wrapper.log"));
    const r = cancelScript(shell, job, 1);
    expect(r.stdout).toStartWith("signalled ");
    expect(job.read("cancel")).toBe("1\n");
    await waitFor("the group to be killed", () => (isGone(started.pid) ? true : undefined));
    expect(readFileSync(precious, "utf8")).toBe("keep me\n");
  });

  test("a symlink planted as heartbeat.tmp: the wrapper writes its heartbeat without touching the target", async () => {
    await using job = newJob().start(shell, { argv: ["sleep", "30"], heartbeatSeconds: 1 });
    await waitFor("a heartbeat", () => (existsSync(job.path("heartbeat")) ? true : undefined));
    const precious = join(job.root, "precious.txt");
    writeFileSync(precious, "keep me\n");
    const before = job.read("heartbeat");
    symlinkSync(precious, job.path("heartbeat.tmp"));
    await waitFor("a new heartbeat", () => (job.read("heartbeat") !== before ? true : undefined));
    expect(readFileSync(precious, "utf8")).toBe("keep me\n");
  });
});
