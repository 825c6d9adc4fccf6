// The host programs (src/wrapper/host/*.sh) run by real sh, dash and busybox on temp dirs, their output read by the
// parsers the backends use: prepare → keyValues, launch → keyValues (a real wrapper started and observed),
// observe → parseObserveReport, read-log → its sizes line, job-dir-present, settle (a retried job's final record). The prelude's readers are the ones
// under test here too (start time, boot ID, zombie-aware liveness).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseObserveReport } from "../../src/backends/ssh/ssh-observe.ts";
import {
  JOB_DIR_PRESENT,
  keyValues,
  launchScript,
  OBSERVE,
  PREPARE,
  READ_LOG,
  SETTLE,
  script,
} from "../../src/wrapper/host-scripts.ts";
import { renderSpec } from "../../src/wrapper/protocol.ts";
import { WRAPPER_SHA256, WRAPPER_TEXT } from "../../src/wrapper/scripts.ts";
import { killQuietly, until } from "../helpers/cli.ts";

const tmp = mkdtempSync(join(tmpdir(), "awl-host-programs-"));
const started: number[] = [];
afterAll(() => {
  for (const pid of started) killQuietly(-pid);
  rmSync(tmp, { recursive: true, force: true });
});

const shells = [
  ["sh", Bun.which("sh")],
  ["dash", Bun.which("dash")],
  ["busybox", Bun.which("busybox")],
].filter((s): s is [string, string] => s[1] !== null);

function run(shell: string, body: string, args: string[]): { code: number; out: string; err: string } {
  const argv = shell.endsWith("busybox") ? [shell, "sh", "-s"] : [shell, "-s"];
  const p = Bun.spawnSync(argv, {
    stdin: Buffer.from(script(body, args)),
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, HOME: tmp, SHELL: shell.endsWith("busybox") ? "/bin/sh" : shell },
  });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();

describe.each(shells)("host programs under %s", (name, shell) => {
  const root = join(tmp, name);

  test("prepare makes the root and reports it as key=value lines", () => {
    const r = run(shell, PREPARE, [root, "wrapper-x.sh"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const kv = keyValues(r.out);
    expect(kv.root).toBe(root);
    expect(kv.boot_id).toBe(bootId);
    expect(kv.wrapper).toBeUndefined();
    writeFileSync(join(root, "bin", "wrapper-x.sh"), "x");
    expect(keyValues(run(shell, PREPARE, [root, "wrapper-x.sh"]).out).wrapper).toBe("present");
  });

  test("a root another user could write is refused with error= and fix=", () => {
    const open = join(tmp, `${name}-open`);
    mkdirSync(open, { recursive: true, mode: 0o777 });
    Bun.spawnSync(["chmod", "777", open]);
    const r = run(shell, PREPARE, [join(open, "root"), "wrapper-x.sh"]);
    expect(r.code).toBe(5);
    const kv = keyValues(r.out);
    expect(kv.untrusted).toBe("1");
    expect(kv.error).toContain("writable by other users");
    expect(kv.fix).toContain("chmod go-w");
  });

  test("launch starts the wrapper; observe and read-log report it as the parsers expect", async () => {
    const wrapper = join(root, "bin", "wrapper.sh");
    writeFileSync(wrapper, WRAPPER_TEXT, { mode: 0o600 });
    const dir = join(root, "jobs", "job_LAUNCH");
    expect(keyValues(run(shell, JOB_DIR_PRESENT, [dir]).out).present).toBe("0");
    // the command waits (bounded) for `go`, so the wrapper is still there when launch reads its start time
    const go = join(root, "go");
    const wait = `i=0; while [ ! -f ${go} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done; echo out; echo err >&2`;
    const spec = renderSpec({ jobId: "job_LAUNCH", cwd: tmp, argv: ["sh", "-c", wait], env: {} });
    const stale = run(shell, launchScript(spec), [dir, wrapper, "0".repeat(64)]);
    expect([stale.code, keyValues(stale.out).wrapper]).toEqual([6, "stale"]);
    const r = run(shell, launchScript(spec), [dir, wrapper, WRAPPER_SHA256]);
    expect(r.code).toBe(0);
    const kv = keyValues(r.out);
    const pid = Number(kv.wrapper_pid);
    started.push(pid);
    expect(pid).toBeGreaterThan(1);
    expect(kv.boot_id).toBe(bootId);
    expect(kv.proc_start).toMatch(/^[0-9]+$/);
    expect(keyValues(run(shell, JOB_DIR_PRESENT, [dir]).out).present).toBe("1");
    expect(readFileSync(join(dir, "spec.sh"), "utf8")).toBe(spec);
    writeFileSync(go, "");

    await until("the exit record", () => run(shell, OBSERVE, ["", dir]).out.includes("@@file exit"), 20_000);
    const report = parseObserveReport(run(shell, OBSERVE, [join(root, "jobs"), dir]).out);
    expect(report.bootId).toBe(bootId);
    const job = report.jobs.get(dir);
    expect(job?.missing).toBe(false);
    expect(job?.wrapperPid).toBe(pid);
    // a heartbeat is there only when the monitor looked before the command ended (it ends at once after `go`)
    expect(
      Object.keys(job?.files ?? {})
        .filter((f) => f !== "heartbeat")
        .sort(),
    ).toEqual(["exit", "started"]);
    expect(keyValues(job?.files.exit ?? "").exit_code).toBe("0");
    expect(
      parseObserveReport(run(shell, OBSERVE, ["", join(root, "jobs", "job_NONE")]).out).jobs.get(
        join(root, "jobs", "job_NONE"),
      )?.missing,
    ).toBe(true);

    const log = run(shell, READ_LOG, [dir, "stdout", "100"]).out;
    expect(log).toBe("0 0 4 0\nout\n");
  });

  test("observe reports a live wrapper with its start time (field 22 of /proc/PID/stat)", () => {
    const dir = join(root, "jobs", "job_LIVE");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "wrapper.pid"), `${process.pid}\n`);
    const job = parseObserveReport(run(shell, OBSERVE, ["", dir]).out).jobs.get(dir);
    const stat = readFileSync("/proc/self/stat", "utf8");
    expect(job?.alive).toBe(true);
    expect(job?.procStart).toBe(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
  });

  test("settle writes a retried job's final record once and wakes its held dependents with USR1", async () => {
    const dir = join(root, "jobs", "job_SETTLE");
    const woke = join(root, "woke");
    const forgedWoke = join(root, "forged-woke");
    mkdirSync(join(dir, "dependents"), { recursive: true });
    // a held wrapper of job_CHILD, as launched (bin/wrapper-HASH.sh JOB_DIR: a wrapper is known by its command line)
    const trapLoop =
      "trap 'touch \"$WOKE\"; exit 0' USR1; i=0; while [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n";
    mkdirSync(join(root, "bin"), { recursive: true });
    writeFileSync(join(root, "bin", "wrapper-test.sh"), trapLoop);
    const held = Bun.spawn(["sh", join(root, "bin", "wrapper-test.sh"), join(root, "jobs", "job_CHILD")], {
      stdout: "ignore",
      stderr: "ignore",
      env: { ...process.env, WOKE: woke },
    });
    // a forged dependents entry naming a process that is no wrapper (its USR1 trap set): never signalled
    const other = Bun.spawn(["sh", "-c", trapLoop], {
      stdout: "ignore",
      stderr: "ignore",
      env: { ...process.env, WOKE: forgedWoke },
    });
    // USR1 is signal 10: its bit in SigCgt says the trap is set (an untrapped USR1 would end the holder)
    const trapsUsr1 = (pid: number) => () => {
      const m = /SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return m !== null && (BigInt(`0x${m[1]}`) & 0x200n) !== 0n;
    };
    const startOf = (pid: number) => {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    };
    try {
      await until("the holder's USR1 trap", trapsUsr1(held.pid));
      await until("the other's USR1 trap", trapsUsr1(other.pid));
      writeFileSync(
        join(dir, "dependents", "job_CHILD"),
        `wrapper_pid=${held.pid}\nproc_start=${startOf(held.pid)}\n`,
      );
      writeFileSync(
        join(dir, "dependents", "job_FORGED"),
        `wrapper_pid=${other.pid}\nproc_start=${startOf(other.pid)}\n`,
      );
      expect(run(shell, SETTLE, [dir, "ok", "3"]).out).toBe("settled=1\n");
      expect(readFileSync(join(dir, "final"), "utf8")).toBe("outcome=ok\nattempt=3\n");
      await until("the dependent woken", () => existsSync(woke));
      expect(await held.exited).toBe(0);
      expect(existsSync(forgedWoke)).toBe(false);
      // kept when present: every writer states the same end
      expect(run(shell, SETTLE, [dir, "failed", "3"]).out).toBe("settled=1\n");
      expect(readFileSync(join(dir, "final"), "utf8")).toBe("outcome=ok\nattempt=3\n");
      expect(run(shell, SETTLE, [join(root, "jobs", "job_GONE"), "ok", "1"]).out).toBe("settled=0\n");
      expect(run(shell, SETTLE, [dir, "maybe", "1"]).code).toBe(2);
    } finally {
      killQuietly(held.pid);
      killQuietly(other.pid);
    }
  });
});
