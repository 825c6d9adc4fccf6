// Named queues on SSH hosts end to end through the compiled binary against the private sshd, for the dash user
// (flock lock; built-in client and transport = openssh) and the busybox user (mkdir lock): concurrent clients
// never over-admit and keep FIFO, queue list reads the host, a cancelled queued job never runs, a killed job
// frees its slot.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BINARY, killQuietly, pidAlive, until } from "../helpers/cli.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { sampleQueue } from "../local/queue-sampler.ts";
import { groupMembers, hostBlock, remoteFile, type SshWorld, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability("SSH queue e2e tests (private OpenSSH server)", sshdAvailable());
const haveSsh = Bun.which("ssh") !== null;
if (runE2e && !haveSsh)
  console.warn("[skip] SSH queues over transport = openssh: the `ssh` client is missing");

/** One way of reaching a test user: its alias, its lock, and a remote_job_dir of this run only (fresh queues). */
interface Case {
  title: string;
  user: "dash" | "busybox";
  alias: string;
  /** busybox hosts may have no flock(1): the busybox user's queue directory uses the mkdir lock. */
  lock: "flock" | "mkdir";
  transport: "ssh2" | "openssh";
  remoteJobDir: string;
}

const run = `${process.pid}-${Date.now()}`;
const BASE: Omit<Case, "remoteJobDir">[] = [
  { title: "dash user", user: "dash", alias: "box-dash", lock: "flock", transport: "ssh2" },
  { title: "busybox user", user: "busybox", alias: "box-busybox", lock: "mkdir", transport: "ssh2" },
];
if (haveSsh) {
  BASE.push({
    title: "dash user over transport = openssh",
    user: "dash",
    alias: "box-dash-ossh",
    lock: "flock",
    transport: "openssh",
  });
}
const CASES: Case[] = BASE.map((c, i) => ({ ...c, remoteJobDir: `.awl-queues-${run}-${i}` }));

let w: SshWorld;
let sshConfig = "";

function homeOf(user: string): string {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${user}:`));
  const home = line?.split(":")[5];
  if (!home) throw new Error(`no home directory for ${user} in /etc/passwd`);
  return home;
}

/** The job root on the host (the host is this machine): <home>/<remote_job_dir>, holding jobs/ and queues/. */
const rootOf = (c: Case) => join(homeOf(w.sshd.users[c.user]), c.remoteJobDir);
const controlPath = () => join(w.sb.root, "cm-queues-%C");

const masterCtl = (alias: string, op: "check" | "exit") =>
  Bun.spawnSync(["ssh", "-F", sshConfig, "-o", `ControlPath=${controlPath()}`, "-O", op, alias], {
    stdin: "ignore",
  });

/** The pid of the ControlMaster serving `alias` (the openssh case: awaitless opened it), or 0. */
function masterPid(alias: string): number {
  const check = masterCtl(alias, "check");
  return Number(/pid=(\d+)/.exec(check.stdout.toString() + check.stderr.toString())?.[1] ?? 0);
}

/** The ControlMaster of the openssh case, asked to exit, then stopped by PID. */
async function stopMaster(alias: string): Promise<void> {
  const pid = masterPid(alias);
  if (!(pid > 0)) return;
  masterCtl(alias, "exit");
  await until("the master to exit", () => !pidAlive(pid)).catch(() => killQuietly(pid));
}

if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
    sshConfig = join(w.sshDir, "config");
    // ssh reads ~ from the passwd entry, not $HOME: name the sandbox's known_hosts and socket explicitly.
    appendFileSync(
      sshConfig,
      hostBlock("box-dash-ossh", w.sshd, w.sshd.users.dash, [
        `UserKnownHostsFile ${join(w.sshDir, "known_hosts")}`,
        `ControlPath ${controlPath()}`,
      ]),
    );
    w.sb.writeConfig(
      CASES.map(
        (c) => `[hosts.${c.alias}]\nremote_job_dir = "~/${c.remoteJobDir}"\ntransport = "${c.transport}"\n`,
      ).join("\n"),
    );
  });
  afterAll(async () => {
    if (!w) return;
    const active =
      (await w.sb.runAsync(["list", "--json", "--state", "active", "--limit", "10000"])).json?.jobs ?? [];
    for (const j of active) await w.sb.runAsync(["cancel", "--grace-period", "0", j.job_id]);
    for (const c of CASES) {
      if (c.transport === "openssh") await stopMaster(c.alias);
      rmSync(rootOf(c), { recursive: true, force: true });
    }
    await w.close();
  });
}

describe.each(runE2e ? CASES : [])("ssh queues: $title", (c) => {
  const host = () => c.alias;
  const lock = c.lock;
  const env = () => ({ ...w.sb.env, ...(lock === "mkdir" ? { AWAITLESS_QUEUE_LOCK: "mkdir" } : {}) });
  // Always async: a blocking run would stop this process from draining sshd's log pipe, and sshd would stall.
  const cli = (args: string[]) => w.sb.runAsync(args, { env: env() });
  const submit = async (argv: string[], flags: string[]) => {
    const r = await cli(["submit", "--json", "--backend", "ssh", "--host", host(), ...flags, "--", ...argv]);
    if (r.code !== 0) throw new Error(`submit failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.json.job_id as string;
  };
  const status = async (id: string) => {
    const r = await cli(["status", "--json", id]);
    if (r.code !== 0) throw new Error(`status failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.json;
  };
  const state = async (id: string) => (await status(id)).state as string;
  const remoteDir = async (id: string) => (await status(id)).backend_id.remote_dir as string;
  const jobDirs = () => {
    try {
      return readdirSync(join(rootOf(c), "jobs"));
    } catch {
      return [];
    }
  };
  const allExited = (ids: string[]) => ids.every((id) => existsSync(join(rootOf(c), "jobs", id, "exit")));

  for (const concurrency of [1, 2]) {
    test(`two clients submitting concurrently into concurrency ${concurrency}: never over-admitted, FIFO`, async () => {
      const q = `pair${concurrency}`;
      const created = await cli([
        "queue",
        "create",
        q,
        "--concurrency",
        String(concurrency),
        "--host",
        host(),
      ]);
      expect(created.code).toBe(0);
      const script = `for i in 1 2 3 4 5; do "${BINARY}" submit --backend ssh --host ${host()} --queue ${q} -- sleep 0.3 || exit 1; done`;
      const clients = [0, 1].map(() =>
        Bun.spawn(["sh", "-c", script], { cwd: w.sb.work, env: env(), stdout: "pipe", stderr: "pipe" }),
      );
      let ids: string[] = [];
      let clientsDone = false;
      // Sample the host's queue directory from the first submission until every job has its exit record.
      const sampling = sampleQueue(rootOf(c), jobDirs, () => clientsDone && allExited(ids));
      const outputs = await Promise.all(clients.map((c) => new Response(c.stdout).text()));
      const codes = await Promise.all(clients.map((c) => c.exited));
      if (codes.some((c) => c !== 0))
        throw new Error(await Promise.all(clients.map((c) => new Response(c.stderr).text())).then(String));
      ids = outputs
        .join("")
        .split("\n")
        .filter((l) => l.startsWith("job_"));
      expect(ids.length).toBe(10);
      clientsDone = true;
      const report = await sampling;
      expect(report.samples).toBeGreaterThan(10);
      expect(report.maxRunningEntries).toBeGreaterThanOrEqual(1);
      expect(report.maxRunningEntries).toBeLessThanOrEqual(concurrency);
      expect(report.maxRunningCommands).toBeLessThanOrEqual(concurrency);
      expect(report.fifoViolations).toEqual([]);
      expect(readFileSync(join(rootOf(c), "queues", "lock.mode"), "utf8").trim()).toBe(lock);
      if (c.transport === "openssh") expect(masterPid(c.alias)).toBeGreaterThan(0);
      // Admission follows the tickets the wrappers took on the host.
      const admitted = ids
        .map((id) => {
          const rec = remoteFile(join(rootOf(c), "jobs", id), "queued") ?? "";
          const field = (k: string) => Number(new RegExp(`^${k}=(\\d+)$`, "m").exec(rec)?.[1]);
          return { ticket: field("ticket"), at: field("admitted_at") };
        })
        .sort((a, b) => a.ticket - b.ticket);
      for (let i = 1; i < admitted.length; i++)
        expect(admitted[i]!.at).toBeGreaterThanOrEqual(admitted[i - 1]!.at);
      for (const id of ids) {
        const r = await cli(["wait", "--json", "--timeout", "30s", id]);
        expect(r.json.state).toBe("succeeded");
      }
    }, 120_000);
  }

  test("queue list reads the host; cancelling a queued job: it never runs, the next one is admitted", async () => {
    expect((await cli(["queue", "create", "one", "--concurrency", "1", "--host", host()])).code).toBe(0);
    const root = rootOf(c);
    const gate = join(root, "gate-cancel");
    const first = await submit(
      ["sh", "-c", `while [ ! -e ${gate} ]; do sleep 0.05; done`],
      ["--queue", "one"],
    );
    await until("the first job to run", async () => (await state(first)) === "running");
    const t0 = Date.now();
    const r = await cli(
      [
        "run",
        "--json",
        "--detach-after",
        "1m",
        "--backend",
        "ssh",
        "--host",
        host(),
        "--queue",
        "one",
        "--",
      ].concat(["sh", "-c", `touch ${root}/ran-cancelled`]),
    );
    expect(Date.now() - t0).toBeLessThan(8000);
    expect(r.json).toMatchObject({ delivery: "detached", detach_reason: "queued", job_state: "queued" });
    const cancelled = r.json.job_id as string;
    const third = await submit(["sh", "-c", "echo third"], ["--queue", "one"]);
    const thirdDir = await remoteDir(third);
    await until("the third job to take its place in line", () => remoteFile(thirdDir, "queued"));
    const st = await status(third);
    expect(st.state).toBe("queued");
    expect(st.status_message).toMatch(/queued behind 1 job in queue one \(1 of 1 running\)/);
    const listed = (await cli(["queue", "list", "--json", "--host", host()])).json.queues.find(
      (x: { name: string }) => x.name === "one",
    );
    expect(listed).toMatchObject({
      target: host(),
      running: 1,
      queued: 2,
      running_job_ids: [first],
      waiting: [
        { job_id: cancelled, position: 1 },
        { job_id: third, position: 2 },
      ],
    });
    const cancel = await cli(["cancel", "--json", cancelled]);
    expect(cancel.json.job_state).toBe("cancelled");
    // out of line at once: no waiting entry names the job any more
    const waiting = readdirSync(join(root, "queues", "waiting"));
    expect(waiting.filter((n) => n.endsWith(`.${cancelled}`))).toEqual([]);
    const result = (await cli(["wait", "--json", cancelled])).json;
    expect(result).toMatchObject({ state: "cancelled", exit_code: null, started_at: null });
    await Bun.write(gate, "");
    const thirdResult = (await cli(["wait", "--json", "--timeout", "30s", third])).json;
    expect(thirdResult.stdout_tail).toBe("third\n");
    expect((await cli(["wait", "--json", "--timeout", "30s", first])).json.state).toBe("succeeded");
    expect(existsSync(join(root, "ran-cancelled"))).toBe(false);
  }, 60_000);

  test("kill -9 of a running job's wrapper and command on the host: the next job is admitted", async () => {
    const victim = await submit(["sleep", "300"], ["--queue", "one"]);
    await until("the victim to run", async () => (await state(victim)) === "running");
    const next = await submit(["sh", "-c", "echo next"], ["--queue", "one"]);
    expect(await state(next)).toBe("queued");
    const started = remoteFile(await remoteDir(victim), "started") ?? "";
    const wrapperPid = Number(/^wrapper_pid=(\d+)$/m.exec(started)?.[1]);
    const pgid = Number(/^pgid=(\d+)$/m.exec(started)?.[1]);
    expect(wrapperPid).toBeGreaterThan(1);
    expect(pgid).toBeGreaterThan(1);
    // the wrapper, its monitor (same group: the wrapper leads its session) and the command's group
    for (const p of [wrapperPid, ...groupMembers(wrapperPid), ...groupMembers(pgid)]) killQuietly(p);
    await until(
      "the wrapper and command to be gone",
      () => !pidAlive(wrapperPid) && groupMembers(pgid).length === 0,
    );
    const nextResult = (await cli(["wait", "--json", "--timeout", "30s", next])).json;
    expect(nextResult.stdout_tail).toBe("next\n");
    expect(await state(victim)).toBe("lost");
    const listed = (await cli(["queue", "list", "--json", "--host", host()])).json.queues.find(
      (x: { name: string }) => x.name === "one",
    );
    expect(listed).toMatchObject({ running: 0, queued: 0 });
  }, 60_000);
});
