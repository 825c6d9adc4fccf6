// End to end through the compiled binary, what is local-only or run-specific: inline runs, waits, grace, timeout
// descendants, stall, reboot (what every backend shares is in test/contract/).
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ownCgroupProcs } from "../../src/backends/local/job-cgroups.ts";
import { gatedCommand, killQuietly, pidAlive, Sandbox, until } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

describe("outcomes", () => {
  test("run returns a success inline with exact tails and exit 0", () => {
    const r = sb.run(["run", "--json", "--", "sh", "-c", "echo out; echo err >&2"]);
    expect(r.code).toBe(0);
    expect(r.json.delivery).toBe("inline");
    expect(r.json.state).toBe("succeeded");
    expect(r.json.exit_code).toBe(0);
    expect(r.json.stdout_tail).toBe("out\n");
    expect(r.json.stderr_tail).toBe("err\n");
    expect(r.json.digest).toEqual([]);
    expect(r.json.snapshot.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(r.json.job_id).toMatch(/^job_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  test("run: a failing command is failed with its exit code, a digest and CLI exit 3", () => {
    const r = sb.run(["run", "--json", "--", "sh", "-c", "echo 'Error: broken thing' >&2; exit 7"]);
    expect(r.code).toBe(3);
    expect(r.json.state).toBe("failed");
    expect(r.json.exit_code).toBe(7);
    expect(r.json.error.stage).toBe("runtime_failed");
    expect(r.json.digest.join("\n")).toContain("Error: broken thing");
  });

  test("a missing command fails with 127 and says so", () => {
    const r = sb.run(["run", "--json", "--", "definitely-not-a-command-awl"]);
    expect(r.json.exit_code).toBe(127);
    expect(r.json.reason).toBe("command_not_found");
    const human = sb.run(["run", "--", "definitely-not-a-command-awl"]);
    expect(human.code).toBe(3);
    expect(human.stdout).toContain("awaitless: command not found: definitely-not-a-command-awl");
    expect(human.stdout).not.toContain("setsid");
  });

  test("a script without the execute permission, or a directory, fails with 126 and says so by name", () => {
    const script = `${sb.work}/not-executable.sh`;
    writeFileSync(script, "echo hi\n", { mode: 0o644 });
    mkdirSync(`${sb.work}/a-dir`, { recursive: true });
    const r = sb.run(["run", "--json", "--cwd", sb.work, "--", "./not-executable.sh"]);
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ state: "failed", exit_code: 126, reason: "nonzero_exit" });
    expect(r.json.stderr_tail).toBe(
      "awaitless: cannot execute ./not-executable.sh: permission denied (make it executable: chmod +x ./not-executable.sh; or run it through its interpreter: sh ./not-executable.sh)\n",
    );
    expect(r.json.error.suggestion).toContain("chmod +x");
    const dir = sb.run(["run", "--json", "--", `${sb.work}/a-dir`]);
    expect(dir.json).toMatchObject({
      exit_code: 126,
      stderr_tail: `awaitless: cannot execute ${sb.work}/a-dir: it is a directory\n`,
    });
    // the same script run through its interpreter, and made executable, runs
    expect(
      sb.run(["run", "--json", "--cwd", sb.work, "--", "sh", "./not-executable.sh"]).json.stdout_tail,
    ).toBe("hi\n");
    chmodSync(script, 0o755);
    const ok = sb.run(["run", "--", script]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).not.toContain("setsid");
  });

  test("a script whose interpreter cannot be started says why: Windows line endings, a missing interpreter", () => {
    const write = (name: string, text: string) => writeFileSync(`${sb.work}/${name}`, text, { mode: 0o755 });
    write("crlf.sh", "#!/bin/sh\r\necho hi\r\n");
    write("other.sh", "#!/no/such/interpreter -x\necho hi\n");
    write("inner.sh", "#!/bin/sh\nawl-no-such-tool\n");
    const crlf = sb.run(["run", "--json", "--cwd", sb.work, "--", "./crlf.sh"]);
    expect(crlf.json).toMatchObject({ state: "failed", exit_code: 127 });
    expect(crlf.json.stderr_tail).toEndWith(
      "awaitless: cannot run ./crlf.sh: its first line ends in a carriage return (Windows line endings); convert it with sed -i 's/\\r$//' ./crlf.sh\n",
    );
    expect(crlf.json.error.suggestion).toContain("the interpreter its first line (#!) names");
    const other = sb.run(["run", "--json", "--", `${sb.work}/other.sh`]);
    expect(other.json.stderr_tail).toEndWith(
      `awaitless: cannot run ${sb.work}/other.sh: the interpreter its first line names, /no/such/interpreter, does not exist on this host\n`,
    );
    // a script that ran and ended 127 by itself gets no note: its interpreter is there
    const inner = sb.run(["run", "--json", "--", `${sb.work}/inner.sh`]);
    expect(inner.json.exit_code).toBe(127);
    expect(inner.json.stderr_tail).toContain("awl-no-such-tool");
    expect(inner.json.stderr_tail).not.toContain("awaitless:");
  });

  test("the local launch hands the wrapper its clocks (EPOCH_CS:UPTIME_CS:BOOT_ID), so the job's start needs no `date`", () => {
    // the wrapper (the command's parent): its command line, the clocks in its environment, and the command's own
    const show = `tr '\\0' '\\n' </proc/$PPID/cmdline; tr '\\0' '\\n' </proc/$PPID/environ | grep '^AWL_LAUNCH_CLOCK='; echo "command: [\${AWL_LAUNCH_CLOCK-unset}] [\${AWL_LAUNCH_PRIMED-unset}]"`;
    const r = sb.run(["run", "--json", "--", "sh", "-c", show]);
    expect(r.code).toBe(0);
    const lines = (r.json.stdout_tail as string).trim().split("\n");
    // the command line ends in the job directory (a wrapper is known by it); the clocks are in its environment
    expect(lines[1]).toMatch(/\/bin\/wrapper-[0-9a-f]{16}\.sh$/);
    expect(lines[2]).toBe(join(sb.dataDir, "jobs", r.json.job_id));
    expect(lines[4]).toBe("command: [unset] [unset]");
    const [epochCs, uptimeCs, boot] = lines[3]!.replace("AWL_LAUNCH_CLOCK=", "").split(":");
    expect(Math.abs(Number(epochCs) / 100 - Date.now() / 1000)).toBeLessThan(120);
    expect(Number(uptimeCs)).toBeGreaterThan(0);
    expect(boot).toBe(readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
  });

  test("the local launch tells its wrapper when it started the cgroup prime itself (AWL_LAUNCH_PRIMED=1)", () => {
    const show = `tr '\\0' '\\n' </proc/$PPID/environ | grep -c '^AWL_LAUNCH_PRIMED=1$'; echo "[\${AWL_LAUNCH_PRIMED-unset}]"`;
    const r = sb.run(["run", "--json", "--", "sh", "-c", show]);
    expect(r.code).toBe(0);
    // the launcher primes where its own cgroup's cgroup.procs is writable (as the wrapper would) and jobs are tracked
    // by cgroup; the command never sees the variable
    const primes = ownCgroupProcs() !== null && sb.env.AWAITLESS_TRACKING !== "environment";
    expect((r.json.stdout_tail as string).split("\n").slice(0, 2)).toEqual([primes ? "1" : "0", "[unset]"]);
  });

  test("human output names the state and shows the tails", () => {
    const r = sb.run(["run", "--", "sh", "-c", "echo hello-human"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("succeeded");
    expect(r.stdout).toContain("hello-human");
    expect(r.stdout).not.toContain("\x1b[");
  });
});

describe("waiting", () => {
  test("run detaches after the inline window; the job keeps running and wait collects it", () => {
    const gate = join(sb.work, "gate-late");
    const r = sb.run([
      "run",
      "--json",
      "--inline-timeout",
      "0.3",
      "--",
      ...gatedCommand(gate, "", "echo late"),
    ]);
    writeFileSync(gate, "");
    expect(r.code).toBe(4);
    expect(r.json.delivery).toBe("detached");
    expect(r.json.detach_reason).toBe("inline_timeout");
    expect(r.json.wait_state).toBe("client_timeout");
    expect(r.json.delivery_state).toBe("pending");
    expect(r.json.next_command).toBe(`awaitless wait ${r.json.job_id}`);
    const w = sb.run(["wait", "--json", r.json.job_id]);
    expect(w.code).toBe(0);
    expect(w.json.stdout_tail).toBe("late\n");
  });

  test("wait --timeout exits 4 and never changes the job", () => {
    const gate = join(sb.work, "gate-wait-timeout");
    const id = sb.submit(gatedCommand(gate));
    const w = sb.run(["wait", "--json", "--timeout", "0.2", id]);
    expect(w.code).toBe(4);
    expect(w.json.job_state).toBe("running");
    expect(sb.status(id).state).toBe("running");
    writeFileSync(gate, "");
    expect(sb.run(["wait", id]).code).toBe(0);
  });

  test("wait --last waits for the newest job", () => {
    const id = sb.submit(["sh", "-c", "echo newest"]);
    const w = sb.run(["wait", "--json", "--last"]);
    expect(w.json.job_id).toBe(id);
    expect(w.json.stdout_tail).toBe("newest\n");
  });
});

describe("cancel, timeout, descendants", () => {
  const pidScript = (file: string) =>
    `sleep 60 & echo $! >> ${file}; (sleep 60 & echo $! >> ${file}; wait) & echo $! >> ${file}; echo $$ >> ${file}; wait`;

  test("a command ignoring SIGTERM is killed after the grace period", async () => {
    const id = sb.submit(["sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"]);
    await until("ready", () => sb.run(["logs", id]).stdout.includes("ready"));
    const c = sb.run(["cancel", "--json", "--grace-period", "1", id]);
    expect(c.json.job_state).toBe("cancelled");
    expect(c.json.result.signal).toBe("KILL");
  });

  test("cancel --json is flat like wait: the result's fields at the top level, `result` kept beside them", async () => {
    const id = sb.submit(["sh", "-c", "echo ready; sleep 60"]);
    await until("ready", () => sb.run(["logs", id]).stdout.includes("ready"));
    const c = sb.run(["cancel", "--json", "--grace-period", "5", id]);
    expect(c.json).toMatchObject({
      job_id: id,
      state: "cancelled",
      signal: "TERM",
      exit_code: 143,
      stdout_tail: "ready\n",
      job_state: "cancelled",
      cancel_requested: true,
      already_terminal: false,
    });
    const { result, job_state: _s, cancel_requested: _c, already_terminal: _a, ...flat } = c.json;
    expect(flat).toEqual(result);
    const again = sb.run(["cancel", "--json", id]).json;
    expect(again).toMatchObject({ state: "cancelled", already_terminal: true, cancel_requested: false });
    expect(again.snapshot.sha256).toBe(result.snapshot.sha256);
  });

  test("--timeout ends the job as timed_out and stops its descendants", async () => {
    const pids = join(sb.work, "timeout-pids");
    const r = sb.run(["run", "--json", "--timeout", "1", "--", "sh", "-c", pidScript(pids)]);
    expect(r.json.state).toBe("timed_out");
    expect(r.code).toBe(3);
    expect(r.json.error.stage).toBe("timed_out");
    const list = readFileSync(pids, "utf8").trim().split("\n").map(Number);
    await until("all pids gone", () => list.every((p) => !pidAlive(p)), 15_000);
  });

  test("descendants still alive after the main command exits are reported", async () => {
    const pidFile = join(sb.work, "bg-pid");
    const r = sb.run([
      "run",
      "--json",
      "--",
      "sh",
      "-c",
      `sleep 30 >/dev/null 2>&1 & echo $! > ${pidFile}; echo main done`,
    ]);
    try {
      expect(r.json.state).toBe("succeeded");
      expect(r.json.descendants_alive).toBe(true);
    } finally {
      killQuietly(Number(readFileSync(pidFile, "utf8")));
    }
  });
});

describe("stall and lost", () => {
  test("stalled while quiet, running again when output resumes", async () => {
    const resume = join(sb.work, "resume");
    const stop = join(sb.work, "stop");
    // Quiet until `resume` exists, then output every 0.2 s until `stop` exists: the job cannot end before we look.
    // The stall timeout is several of the wrapper's 1 s checks long: once output resumes, each check renews the
    // heartbeat's last change, so every look from then on says running, however late it comes on a busy machine
    // (at 1 s, the heartbeat's whole-second last change made only a look within the same second say running).
    const script = `echo start; while [ ! -e ${resume} ]; do sleep 0.2; done; while [ ! -e ${stop} ]; do echo tick; sleep 0.2; done`;
    const id = sb.submit(["sh", "-c", script], ["--stall-timeout", "5"]);
    try {
      await until("stalled", () => sb.status(id).state === "stalled", 60_000, 200);
      writeFileSync(resume, "");
      await until("running again", () => sb.status(id).state === "running", 60_000, 200);
    } finally {
      writeFileSync(stop, "");
    }
    expect(sb.run(["wait", "--json", id]).json.state).toBe("succeeded");
    const hist = sb.run(["inspect", "--json", id]).json.history.map((h: { to_state: string }) => h.to_state);
    expect(hist).toContain("stalled");
    expect(hist.lastIndexOf("running")).toBeGreaterThan(hist.indexOf("stalled"));
  });

  test("a quiet local job heartbeats every 120 s; its killed wrapper is found lost by its process at once, dated by its last heartbeat", async () => {
    const id = sb.submit(["sleep", "300"]);
    const dir = sb.run(["inspect", "--json", id]).json.job_dir as string;
    const read = (name: string) => {
      try {
        return readFileSync(join(dir, name), "utf8");
      } catch {
        return "";
      }
    };
    const beat = await until("the first heartbeat", () => read("heartbeat"));
    const started = read("started");
    const field = (text: string, k: string) => Number(new RegExp(`^${k}=(\\d+)`, "m").exec(text)?.[1]);
    try {
      expect(read("spec.sh")).toMatch(/^AWL_HEARTBEAT=120$/m);
      expect(field(beat, "interval")).toBe(120);
      killQuietly(field(started, "wrapper_pid"));
      // found at the next look, long before a heartbeat would be missed (3 intervals + 10 s)
      const w = await sb.runAsync(["wait", "--json", "--timeout", "30s", id]);
      expect([w.json.state, w.json.reason]).toEqual(["lost", "wrapper_killed"]);
      const last = read("heartbeat") || beat;
      expect(w.json.finished_at).toBe(new Date(field(last, "now") * 1000).toISOString());
    } finally {
      killQuietly(-field(started, "pgid"));
      killQuietly(field(started, "pid"));
    }
  });

  test("a changed boot ID makes the job lost with reason host_rebooted", async () => {
    const id = sb.submit(["sleep", "30"]);
    const info = sb.run(["inspect", "--json", id]).json;
    const startedPath = join(info.job_dir, "started");
    const started = readFileSync(startedPath, "utf8");
    if (!/boot_id=\S/.test(started)) {
      console.warn("skip: this machine exposes no boot ID");
      sb.run(["cancel", id]);
      return;
    }
    // Simulate a reboot: the job's recorded boot differs from the machine's current one.
    writeFileSync(
      startedPath,
      started.replace(/boot_id=\S+/, "boot_id=00000000-0000-0000-0000-000000000000"),
    );
    const w = sb.run(["wait", "--json", id]);
    expect(w.json.state).toBe("lost");
    expect(w.json.reason).toBe("host_rebooted");
    const cmdPid = Number(/^pid=(\d+)/m.exec(started)![1]);
    const wrapperPid = Number(/wrapper_pid=(\d+)/.exec(started)![1]);
    killQuietly(cmdPid);
    killQuietly(wrapperPid);
  });
});
