// The backend contract's whole-job behaviours: every process a job started is found, listed and stopped when the
// command ends (success, failure), on cancel and on timeout; --keep-leftovers keeps them until a later cancel; and
// `resources` says what the job cost. Checked from outside: the processes on this machine (every target runs its
// jobs here: local, the private sshd on 127.0.0.1, the single-machine Slurm cluster) and the job's cgroup.
import { expect } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, until } from "../helpers/cli.ts";
import { cleanupIn, termCounter, termsIn } from "../helpers/term-counter.ts";
import { startedRecord, submitTo, type Target, waitFor } from "./contract.ts";

/** The kinds of process a command can leave behind, each started by TREE with its pid written to pids/NAME. */
export const KINDS = ["bg", "nohup", "setsid", "daemon", "envless", "escaped", "noterm"] as const;
export type Kind = (typeof KINDS)[number];

/**
 * A shell script starting the given kinds, then waiting (bounded) for their pid files and for `go` in the job
 * directory, then exiting with `code`:
 * bg: a plain `&` child; nohup: `nohup … &`; setsid: a child in a session of its own; daemon: a double fork into a
 * new session (its parent gone, reparented); envless: a child that cleared its environment but stayed in the
 * command's session; escaped: one that cleared its environment and left the session (what environment tracking
 * cannot see); noterm: a child that ignores TERM.
 */
export function tree(kinds: readonly Kind[], code: number): string[] {
  const start: Record<Kind, string> = {
    bg: 'sleep 300 & echo $! > "$d/bg"',
    nohup: 'nohup sleep 300 >/dev/null 2>&1 & echo $! > "$d/nohup"',
    setsid: 'setsid sleep 300 & echo $! > "$d/setsid"',
    daemon: `sh -c '(setsid sh -c "echo \\$\\$ > \\"\\$1\\"; exec sleep 300" x "$1" &)' x "$d/daemon"`,
    envless: `env -i sh -c 'echo $$ > "$1"; exec sleep 300' x "$d/envless" &`,
    escaped: `env -i setsid sh -c 'echo $$ > "$1"; exec sleep 300' x "$d/escaped" &`,
    noterm: `sh -c 'trap "" TERM; echo $$ > "$1"; exec sleep 300' x "$d/noterm" &`,
  };
  const files = kinds.map((k) => `"$d/${k}"`).join(" ");
  return [
    "sh",
    "-c",
    [
      'd="$AWAITLESS_JOB_DIR/pids"; mkdir -p "$d"',
      ...kinds.map((k) => start[k]),
      `i=0; for f in ${files}; do while [ ! -s "$f" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; done`,
      'echo started; i=0; while [ ! -e "$AWAITLESS_JOB_DIR/go" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done',
      `exit ${code}`,
    ].join("\n"),
  ];
}

/** A process seen on this machine: its pid and start time (a pid reused later is another process). */
export interface Seen {
  kind: Kind;
  pid: number;
  start: string;
}

function startOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return f[0] === "Z" ? null : (f[19] ?? null);
  } catch {
    return null;
  }
}

/** Still the same live process (not a zombie, not a reused pid)? */
export function stillAlive(p: Seen): boolean {
  return startOf(p.pid) === p.start;
}

/**
 * Waits for the job's tree to be up, and reads each process as it runs. With `mayHaveEnded` (a job whose timeout may
 * fire before a busy machine lets the test look) a process already gone is recorded as gone, never as alive.
 */
export async function seen(
  t: Target,
  id: string,
  kinds: readonly Kind[],
  mayHaveEnded = false,
): Promise<Seen[]> {
  const dir = join(t.jobDir(id), "pids");
  await until(
    "every process of the tree started",
    () => kinds.every((k) => existsSync(join(dir, k)) && readFileSync(join(dir, k), "utf8").trim() !== ""),
    t.jobMs,
  );
  return kinds.map((kind) => {
    const pid = Number(readFileSync(join(dir, kind), "utf8").trim());
    const start = startOf(pid);
    if (start === null && mayHaveEnded) return { kind, pid, start: "gone" };
    if (start === null) throw new Error(`the ${kind} process ${pid} is not running`);
    return { kind, pid, start };
  });
}

/** Lets the command end (it waits for `go`). */
export function release(t: Target, id: string): void {
  writeFileSync(join(t.jobDir(id), "go"), "");
}

/** Kills what is still alive of `procs` (by pid, only while it is the same process). */
export function reap(procs: readonly Seen[]): void {
  for (const p of procs) if (stillAlive(p)) killQuietly(p.pid);
}

/** The job's tracking cgroup (from `started`) has no process left, or is gone. */
export async function cgroupEmpty(t: Target, id: string): Promise<void> {
  const cg = (await startedRecord(t, id)).cgroup;
  if (!cg) return;
  await until(
    `the job's cgroup ${cg} to be empty`,
    () => !existsSync(cg) || readFileSync(join(cg, "cgroup.procs"), "utf8").trim() === "",
    10_000,
  );
}

/** What every terminal result says of the processes the command left: listed, stopped, none of them alive now. */
export function expectStopped(result: Record<string, unknown>, procs: readonly Seen[]): void {
  const l = result.leftovers as { count: number; action: string; processes: string[]; tracking: string };
  expect(l.action).toBe("stopped");
  expect(["cgroup", "environment"]).toContain(l.tracking);
  const listed = l.processes.map((p) => Number(p.split(" ")[0]));
  // a process that cleared its environment and left the session is seen only by a cgroup (the documented way out)
  const seenBy = (p: Seen) => p.kind !== "escaped" || l.tracking === "cgroup";
  for (const p of procs.filter(seenBy)) {
    expect(listed).toContain(p.pid);
    expect(stillAlive(p)).toBe(false);
  }
  expect(l.count).toBeGreaterThanOrEqual(procs.filter(seenBy).length);
  expect(result.descendants_alive).toBe(true);
}

/** ~1 s of CPU, measured by the command itself (user + system of its own process, /proc/self/stat in ticks). */
export const BUSY_SECOND = [
  "sh",
  "-c",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell expansions
  'while :; do read l < /proc/$$/stat; set -- ${l##*") "}; [ $((${12} + ${13})) -ge 100 ] && break; done; echo busy',
];

/** Holds about 200 MiB in one shell variable, then exits. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: shell expansions
export const BIG_ALLOCATION = ["sh", "-c", 'x=$(head -c 209715200 /dev/zero | tr "\\000" a); echo ${#x}'];

/** The whole-job contract's tests, registered by backendContract through `it`. */
export function wholeJobBehaviours(
  it: (key: WholeJobBehaviour, title: string, fn: () => Promise<void>, timeoutMs: number) => void,
  target: () => Target,
  opts: { keep: boolean },
): void {
  it(
    "leftovers",
    "a command that succeeds leaving processes of every kind: each is listed and stopped (TERM, grace, KILL)",
    async () => {
      const t = target();
      const id = submitTo(t, tree(KINDS, 0));
      const procs = await seen(t, id, KINDS);
      try {
        release(t, id);
        const r = await waitFor(t, id);
        expect(r.json).toMatchObject({ state: "succeeded", exit_code: 0, stdout_tail: "started\n" });
        expectStopped(r.json, procs);
        await cgroupEmpty(t, id);
      } finally {
        reap(procs);
      }
    },
    120_000,
  );

  it(
    "leftovers-failed",
    "a command that fails leaving processes: its failure decides the result, what it left is stopped",
    async () => {
      const t = target();
      const kinds = ["bg", "setsid", "daemon"] as const;
      const id = submitTo(t, tree(kinds, 3));
      const procs = await seen(t, id, kinds);
      try {
        release(t, id);
        const r = await waitFor(t, id);
        expect(r.json).toMatchObject({ state: "failed", exit_code: 3, reason: "nonzero_exit" });
        expectStopped(r.json, procs);
      } finally {
        reap(procs);
      }
    },
    90_000,
  );

  it(
    "leftovers-cancel",
    "cancel stops every process of the job, escaped ones included, with one TERM; a second cancel sends none",
    async () => {
      const t = target();
      const [sh, c, counter] = termCounter('"$AWAITLESS_JOB_DIR"');
      const kinds = ["setsid", "daemon", "noterm"] as const;
      const script = `${tree(kinds, 0)[2]!.split("\necho started")[0]}\n${counter}`;
      const id = submitTo(t, [sh!, c!, script]);
      const procs = await seen(t, id, kinds);
      try {
        await until("the command's ready", () => t.sb.run(["logs", id]).stdout.includes("ready"), t.jobMs);
        // each cancel waits the grace + 5 s for the end, which a scheduler may report later (exit 4: still ending)
        const first = await t.sb.runAsync(["cancel", "--json", "--grace-period", "5s", id]);
        expect([0, 4]).toContain(first.code);
        const second = await t.sb.runAsync(["cancel", "--json", "--grace-period", "5s", id]);
        expect([0, 4]).toContain(second.code);
        const r = await waitFor(t, id);
        expect(r.json.state).toBe("cancelled");
        expect(termsIn(t.jobDir(id))).toBe(1);
        expect(cleanupIn(t.jobDir(id))).toBe("cleaned up after 1 TERM\n");
        for (const p of procs) {
          if (p.kind === "escaped") continue;
          await until(`the ${p.kind} process to be stopped`, () => !stillAlive(p), 15_000);
        }
        await cgroupEmpty(t, id);
      } finally {
        reap(procs);
      }
    },
    120_000,
  );

  it(
    "leftovers-timeout",
    "the runtime timeout stops every process of the job, escaped ones included",
    async () => {
      const t = target();
      const kinds = ["setsid", "daemon", "nohup"] as const;
      const id = submitTo(t, tree(kinds, 0), ["--timeout", "4s"]);
      // the timeout may have fired by the time a busy machine lets the test look: a process gone is not alive
      const procs = await seen(t, id, kinds, true);
      try {
        const r = await waitFor(t, id);
        expect(r.json.state).toBe("timed_out");
        for (const p of procs) expect(stillAlive(p)).toBe(false);
        await cgroupEmpty(t, id);
      } finally {
        reap(procs);
      }
    },
    120_000,
  );

  it(
    "keep",
    opts.keep
      ? "--keep-leftovers: what the command left keeps running and is listed as kept; a later cancel of the ended job stops it"
      : "--keep-leftovers is refused: the scheduler ends every process of a job with it",
    async () => {
      const t = target();
      if (!opts.keep) {
        const refused = t.sb.run(["submit", "--json", ...t.flags, "--keep-leftovers", "--", "true"]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain("Slurm ends every process of a job when its batch script ends");
        return;
      }
      const kinds = ["setsid", "bg"] as const;
      const id = submitTo(t, tree(kinds, 0), ["--keep-leftovers"]);
      const procs = await seen(t, id, kinds);
      try {
        release(t, id);
        const r = await waitFor(t, id);
        expect(r.json.state).toBe("succeeded");
        expect(r.json.leftovers).toMatchObject({ action: "kept", count: 2 });
        for (const p of procs) expect(stillAlive(p)).toBe(true);
        const c = await t.sb.runAsync(["cancel", "--json", "--grace-period", "2s", id]);
        expect(c.code).toBe(0);
        expect(c.json.already_terminal).toBe(true);
        expect(c.json.leftover.action).toBe("signalled");
        for (const p of procs)
          await until(`the kept ${p.kind} process to be stopped`, () => !stillAlive(p), 15_000);
        const again = await t.sb.runAsync(["cancel", "--json", id]);
        expect(again.json.leftover?.action ?? "none").not.toBe("signalled");
      } finally {
        reap(procs);
      }
    },
    90_000,
  );

  it(
    "resources",
    "resources: about 1 CPU-second of a busy loop; about 200 MiB held, where the backend can measure memory",
    async () => {
      const t = target();
      const busy = submitTo(t, BUSY_SECOND);
      const big = submitTo(t, BIG_ALLOCATION, t.bigMemoryFlags ?? []);
      const b = await waitFor(t, busy);
      expect(b.json.state).toBe("succeeded");
      const cpu = b.json.resources as Record<string, number | string | null>;
      expect(["cgroup", "slurm", "rusage"]).toContain(String(cpu.source));
      const seconds = Number(cpu.cpu_user_seconds) + Number(cpu.cpu_system_seconds);
      expect(seconds).toBeGreaterThanOrEqual(0.9);
      expect(seconds).toBeLessThan(5);
      const m = await waitFor(t, big);
      expect(m.json).toMatchObject({ state: "succeeded", stdout_tail: "209715200\n" });
      const mem = m.json.resources as Record<string, number | string | null>;
      if (mem.source === "rusage") expect(mem.max_rss_bytes).toBeNull();
      else {
        expect(mem.max_rss_bytes as number).toBeGreaterThan(190 * 1024 * 1024);
        expect(mem.max_rss_bytes as number).toBeLessThan(4 * 1024 * 1024 * 1024);
      }
    },
    120_000,
  );
}

export type WholeJobBehaviour =
  | "leftovers"
  | "leftovers-failed"
  | "leftovers-cancel"
  | "leftovers-timeout"
  | "keep"
  | "resources";
