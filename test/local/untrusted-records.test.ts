// Through the compiled binary: a job whose wrapper was killed (`lost`) still has its command's group stopped by
// `cancel` (one TERM, KILL after the grace) when the leader's start time matches started's pid_start, and not when it
// does not, nor when started names pgid 1; a symlinked wrapper.log is not written through.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readStarted } from "../../src/wrapper/protocol.ts";
import { Sandbox, until } from "../helpers/cli.ts";
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

  test("cancel of a lost job whose started pid_start does not match the live process: refused, nothing signalled", async () => {
    const { id, dir, pid } = await lostJob();
    const path = join(dir, "started");
    const text = readFileSync(path, "utf8").replace(
      /^pid_start=(\d+)$/m,
      (_m, n) => `pid_start=${Number(n) + 1}`,
    );
    writeFileSync(path, text);
    const c = sb.run(["cancel", id]);
    expect(c.code).toBe(0);
    expect(c.stdout).toContain("its command was not signalled");
    expect(gone(pid)).toBe(false);
    expect(termsIn(dir)).toBe(0);
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
});
