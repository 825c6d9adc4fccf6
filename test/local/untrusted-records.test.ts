// Through the compiled binary: a job whose wrapper was killed (`lost`) still has its command's group stopped by
// `cancel` (one TERM, KILL after the grace) when the leader's start time matches started's pid_start and it carries
// the job's ID, and not when started names another live group (its true start time included) or pgid 1; a symlinked
// wrapper.log is not written through; an exit record written while the wrapper and the command run is ignored.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readStarted } from "../../src/wrapper/protocol.ts";
import { Sandbox, until } from "../helpers/cli.ts";
import { startTime, untouched } from "../helpers/proc-state.ts";
import { termCounter, termsIn } from "../helpers/term-counter.ts";

const sb = new Sandbox();
const leftovers: number[] = [];
afterAll(() => {
  for (const pgid of leftovers) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {}
  }
  sb.cleanup();
});

const jobDir = (id: string): string => sb.run(["inspect", "--json", id]).json.job_dir;

function gone(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return true;
  }
}

/** A running job whose wrapper and monitor are killed with SIGKILL: the command (ignoring TERM) keeps running. */
async function lostJob(): Promise<{ id: string; dir: string; pid: number }> {
  const id = sb.submit(termCounter('"$AWAITLESS_JOB_DIR"', { ignoreTerm: true }));
  await until("the command's ready", () => sb.run(["logs", id]).stdout.includes("ready"));
  const dir = jobDir(id);
  const started = readStarted(dir)!;
  leftovers.push(started.pid);
  process.kill(started.wrapperPid, "SIGKILL");
  if (started.monitorPid) process.kill(started.monitorPid, "SIGKILL");
  await until("the wrapper to be gone", () => gone(started.wrapperPid));
  await until("the job to be lost", () => sb.status(id).state === "lost");
  return { id, dir, pid: started.pid };
}

describe("untrusted records through the binary", () => {
  test("cancel of a lost job stops its command's group: one TERM, KILL after the grace; the job stays lost", async () => {
    const { id, dir, pid } = await lostJob();
    const precious = join(sb.root, "precious.txt");
    writeFileSync(precious, "keep me\n");
    rmSync(join(dir, "wrapper.log"));
    symlinkSync(precious, join(dir, "wrapper.log"));
    const c = sb.run(["cancel", "--json", "--grace-period", "1s", id]);
    expect(c.code).toBe(0);
    expect(c.json.job_state).toBe("lost");
    expect(c.json.leftover.action).toBe("signalled");
    expect(c.json.leftover.detail).toContain(`process group ${pid}`);
    await until("the command's group to be killed", () => gone(pid));
    expect(termsIn(dir)).toBe(1);
    expect(readFileSync(precious, "utf8")).toBe("keep me\n");
    expect(sb.status(id).state).toBe("lost");
    const again = sb.run(["cancel", id]);
    expect(again.stdout).toContain("had already ended (lost); nothing to cancel");
  }, 60_000);

  test("cancel of a lost job whose started names an unrelated live group with its true start time: that group is not signalled; the job's own command (it carries the job's ID) is", async () => {
    const { id, dir, pid } = await lostJob();
    const canary = Bun.spawn(["sleep", "300"], { detached: true, stdio: ["ignore", "ignore", "ignore"] });
    leftovers.push(canary.pid);
    const path = join(dir, "started");
    const text = readFileSync(path, "utf8")
      .replace(/^pid=.*$/m, `pid=${canary.pid}`)
      .replace(/^pgid=.*$/m, `pgid=${canary.pid}`)
      .replace(/^pid_start=.*$/m, `pid_start=${startTime(canary.pid)}`);
    writeFileSync(path, text);
    const c = sb.run(["cancel", "--json", "--grace-period", "1s", id]);
    expect(c.code).toBe(0);
    expect(c.json.leftover.action).toBe("signalled");
    expect(c.json.leftover.detail).toContain("no process group");
    expect(readFileSync(join(dir, "wrapper.log"), "utf8")).toContain(`sending TERM to no process group`);
    await until("the job's own command to be stopped", () => gone(pid));
    expect(termsIn(dir)).toBe(1);
    expect(untouched(canary.pid)).toBe(true);
  }, 60_000);

  test("cancel of a lost job whose started names pgid 1: refused, nothing signalled", async () => {
    const { id, dir, pid } = await lostJob();
    const path = join(dir, "started");
    writeFileSync(path, readFileSync(path, "utf8").replace(/^pgid=.*$/m, "pgid=1"));
    expect(readStarted(dir)).toBeNull();
    const c = sb.run(["cancel", "--json", id]);
    expect(c.code).toBe(0);
    expect(c.json.leftover.action).toBe("refused");
    expect(c.json.leftover.detail).toContain("process group '1'");
    expect(gone(pid)).toBe(false);
    expect(termsIn(dir)).toBe(0);
  }, 60_000);

  test("a forged exit record while the wrapper and the command run is ignored: the job stays running, and its end is the wrapper's record", async () => {
    const id = sb.submit([
      "sh",
      "-c",
      'echo ready; while [ ! -e "$AWAITLESS_JOB_DIR/go" ]; do sleep 0.1; done; exit 3',
    ]);
    await until("the command's ready", () => sb.run(["logs", id]).stdout.includes("ready"));
    const dir = jobDir(id);
    const started = readStarted(dir)!;
    leftovers.push(started.pid);
    // the record the real wrapper would write, its pid and start time included: only the running command betrays it
    const forged = `exit_code=0\nsignal=\nreason=exited\nfinished_at=${Math.floor(Date.now() / 1000)}\ndescendants_alive=0\nstdout_dropped=0\nstderr_dropped=0\nwrapper_pid=${started.wrapperPid}\nproc_start=${started.procStart}\nleftovers=0\nleftovers_action=stopped\n`;
    writeFileSync(join(dir, "exit.forged"), forged);
    renameSync(join(dir, "exit.forged"), join(dir, "exit"));
    const st = sb.status(id);
    expect(st.state).toBe("running");
    expect(st.status_message).toContain("did not write was ignored");
    expect(sb.run(["wait", "--json", "--timeout", "1s", id]).json.job_state).toBe("running");
    // the command ends by itself; nobody reads until its wrapper has written its own record and exited
    writeFileSync(join(dir, "go"), "");
    await until("the wrapper to finish", () => gone(started.wrapperPid));
    const w = sb.run(["wait", "--json", id]);
    expect(w.json).toMatchObject({ state: "failed", exit_code: 3 });
  }, 60_000);
});
