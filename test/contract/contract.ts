// The backend contract: one list of behaviours every backend must show through the compiled binary (`--json`),
// run per backend by local/ssh/slurm(-fake).contract.test.ts against a Target that says how to reach it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { groupMembers } from "../e2e/ssh-fixture.ts";
import { type CliResult, killQuietly, pidAlive, type Sandbox, until } from "../helpers/cli.ts";
import { cleanupIn, termCounter, termsIn } from "../helpers/term-counter.ts";
import { type WholeJobBehaviour, wholeJobBehaviours } from "./whole-job.ts";

/** How the contract reaches one backend: a sandbox whose config names it, and the flags that select it. */
export interface Target {
  sb: Sandbox;
  /** `submit` flags selecting the backend (e.g. `--backend ssh --host box`). */
  flags: string[];
  /** `queue create` flags for a queue on this backend. */
  queueFlags: string[];
  /** Ceiling for one job to go from submit to its end on this backend (scheduling included), in ms. */
  jobMs: number;
  /** The job's directory as this machine sees it (every backend under test writes it on this machine). */
  jobDir(id: string): string;
  /** SSH only: kills the sshd processes serving this backend's connections now; returns how many. */
  dropConnections?: () => number;
  /** `submit` flags a job holding about 200 MiB needs (Slurm: a memory request above it). */
  bigMemoryFlags?: string[];
  close(): Promise<void>;
}

export const SECRET = "Zq7vKp2XwR9tLm4NbY6hJc3DfG";

/** A shell word waiting for `$AWAITLESS_JOB_DIR/NAME` to exist (the test creates it; the job dir is ours). */
export const awaitFile = (name: string) => `while [ ! -e "$AWAITLESS_JOB_DIR/${name}" ]; do sleep 0.1; done`;

/** The wrapper's `started` record of a job, parsed (key=value lines), once it exists (within `ms`, default t.jobMs). */
export async function startedRecord(t: Target, id: string, ms = t.jobMs): Promise<Record<string, string>> {
  const text = await until(
    "the started record",
    () => {
      const p = join(t.jobDir(id), "started");
      return existsSync(p) ? readFileSync(p, "utf8") : null;
    },
    ms,
  );
  return Object.fromEntries(
    text
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}

export function submitTo(t: Target, argv: string[], flags: string[] = []): string {
  return t.sb.submit(argv, [...t.flags, ...flags]);
}

export function waitFor(t: Target, id: string, env: Record<string, string> = {}): Promise<CliResult> {
  return t.sb.runAsync(["wait", "--json", id], { env });
}

export interface ContractOptions {
  /** False when the backend's infrastructure is missing (its gate has reported the skip or the failure). */
  available: boolean;
  /**
   * Behaviours this backend does not meet yet, by test key, with the reason: registered as `test.todo` (run them
   * with `bun test --todo`), so the contract keeps the strict assertion and the gap stays visible.
   */
  divergences?: Partial<Record<Behaviour, string>>;
  /** Whether the backend has named queues (local and SSH do; Slurm has its own scheduler). */
  queues: boolean;
  /** Whether a job can keep what its command leaves running (local and SSH; Slurm ends a job's every process). */
  keep?: boolean;
  /** Only these behaviours (a second run of some with other settings, e.g. tracking by environment). */
  only?: Behaviour[];
}

export type Behaviour =
  | "exit-codes"
  | "signal"
  | "cancel"
  | "timeout"
  | "lost"
  | "waiter"
  | "artifacts"
  | "logs"
  | "redaction"
  | "replay"
  | "queues"
  | WholeJobBehaviour;

/** Defines the contract's tests for one backend. */
export function backendContract(name: string, setup: () => Promise<Target>, opts: ContractOptions): void {
  const it = (key: Behaviour, title: string, fn: () => Promise<void>, timeoutMs: number) => {
    const gap = opts.divergences?.[key];
    if (opts.only && !opts.only.includes(key)) return;
    if (key === "queues" && !opts.queues) test.skip(`${title} (no named queues on ${name})`, fn);
    else if (gap === undefined) test(title, fn, timeoutMs);
    else test.todo(`${title} (known divergence: ${gap})`, fn);
  };
  describe.skipIf(!opts.available)(`backend contract: ${name}`, () => {
    let t: Target;
    beforeAll(async () => {
      t = await setup();
    });
    afterAll(async () => {
      await t?.close();
    });
    wholeJobBehaviours(it, () => t, { keep: opts.keep !== false });

    it(
      "exit-codes",
      "exit codes 0, 3 and 255, 127 for a missing command or a script with Windows line endings, 126 for a directory: state, exit_code, tails and the CLI's exit",
      async () => {
        const ok = submitTo(t, ["sh", "-c", "echo out; echo err >&2"]);
        const three = submitTo(t, ["sh", "-c", "echo 'Error: broken thing' >&2; exit 3"]);
        const max = submitTo(t, ["sh", "-c", "exit 255"]);
        const missing = submitTo(t, ["awl-no-such-command", "x"]);
        const directory = submitTo(t, ["/"]);
        // a script whose first line ends in a carriage return (its interpreter "/bin/sh\r" is not there), made by a
        // job in the target's default working directory
        const crlf = `crlf-${process.pid}-${Date.now()}.sh`;
        const made = submitTo(t, [
          "sh",
          "-c",
          `printf '#!/bin/sh\\r\\necho hi\\r\\n' > ${crlf} && chmod 755 ${crlf}`,
        ]);
        const a = await waitFor(t, ok);
        expect(a.code).toBe(0);
        expect(a.json).toMatchObject({
          state: "succeeded",
          exit_code: 0,
          stdout_tail: "out\n",
          stderr_tail: "err\n",
        });
        expect(a.json.snapshot.sha256).toMatch(/^[0-9a-f]{64}$/);
        const b = await waitFor(t, three);
        expect(b.code).toBe(3);
        expect(b.json).toMatchObject({ state: "failed", exit_code: 3, reason: "nonzero_exit", signal: null });
        expect(b.json.error.stage).toBe("runtime_failed");
        expect(b.json.error.suggestion.length).toBeGreaterThan(0);
        expect(b.json.digest.join("\n")).toContain("Error: broken thing");
        const c = await waitFor(t, max);
        expect(c.code).toBe(3);
        expect(c.json).toMatchObject({ state: "failed", exit_code: 255 });
        // named as missing by the wrapper, not by setsid (whose message would name setsid)
        const d = await waitFor(t, missing);
        expect(d.code).toBe(3);
        expect(d.json).toMatchObject({ state: "failed", exit_code: 127, reason: "command_not_found" });
        expect(d.json.stderr_tail).toBe("awaitless: command not found: awl-no-such-command\n");
        const e = await waitFor(t, directory);
        expect(e.code).toBe(3);
        expect(e.json).toMatchObject({ state: "failed", exit_code: 126, reason: "nonzero_exit" });
        expect(e.json.stderr_tail).toBe("awaitless: cannot execute /: it is a directory\n");
        expect((await waitFor(t, made)).code).toBe(0);
        const f = await waitFor(t, submitTo(t, [`./${crlf}`]));
        await waitFor(t, submitTo(t, ["rm", "-f", crlf]));
        expect(f.json).toMatchObject({ state: "failed", exit_code: 127 });
        expect(f.json.stderr_tail).toContain(
          `awaitless: cannot run ./${crlf}: its first line ends in a carriage return (Windows line endings); convert it with sed -i 's/\\r$//' ./${crlf}\n`,
        );
      },
      60_000,
    );

    it(
      "signal",
      "signal death is failed with exit 128+n and the signal named",
      async () => {
        const id = submitTo(t, ["sh", "-c", "kill -KILL $$"]);
        const r = await waitFor(t, id);
        expect(r.code).toBe(3);
        expect(r.json).toMatchObject({ state: "failed", exit_code: 137, signal: "KILL" });
      },
      60_000,
    );

    it(
      "cancel",
      "cancel: exactly one TERM, its cleanup completes, the whole process group ends (exit 5)",
      async () => {
        const [sh, c, counter] = termCounter('"$AWAITLESS_JOB_DIR"');
        const bg = 'sleep 300 & echo $! > "$AWAITLESS_JOB_DIR/bg-pid"; ';
        const id = submitTo(t, [sh!, c!, bg + counter!]);
        const dir = t.jobDir(id);
        const rec = await startedRecord(t, id);
        const pgid = Number(rec.pgid);
        expect(pgid).toBeGreaterThan(1);
        await until("the command's ready", () => t.sb.run(["logs", id]).stdout.includes("ready"), t.jobMs);
        const bgPid = Number(readFileSync(join(dir, "bg-pid"), "utf8"));
        expect(pidAlive(bgPid)).toBe(true);
        const first = t.sb.spawn(["cancel", "--json", "--grace-period", "30s", id]);
        await until("the TERM", () => termsIn(dir) === 1, t.jobMs);
        // a second cancel meanwhile sends no second TERM
        const second = await t.sb.runAsync(["cancel", "--json", "--grace-period", "30s", id]);
        expect(await first.exited).toBe(0);
        expect(second.json.job_state).toBe("cancelled");
        expect(termsIn(dir)).toBe(1);
        expect(cleanupIn(dir)).toBe("cleaned up after 1 TERM\n");
        await until(
          "the group to be gone",
          () => groupMembers(pgid).length === 0 && !pidAlive(bgPid),
          15_000,
        );
        const w = await waitFor(t, id);
        expect(w.code).toBe(5);
        expect(w.json.state).toBe("cancelled");
        expect((await t.sb.runAsync(["cancel", "--json", id])).json.already_terminal).toBe(true);
      },
      90_000,
    );

    it(
      "timeout",
      "the runtime --timeout ends the job timed_out with one TERM to the command",
      async () => {
        const id = submitTo(t, termCounter('"$AWAITLESS_JOB_DIR"'), ["--timeout", "2s"]);
        const r = await waitFor(t, id);
        expect(r.code).toBe(3);
        expect(r.json.state).toBe("timed_out");
        expect(r.json.error.stage).toBe("timed_out");
        expect(termsIn(t.jobDir(id))).toBe(1);
        expect(cleanupIn(t.jobDir(id))).toBe("cleaned up after 1 TERM\n");
      },
      90_000,
    );

    it(
      "lost",
      "a killed wrapper makes the job lost (wrapper_killed, exit 6)",
      async () => {
        const id = submitTo(t, ["sh", "-c", "sleep 300"]);
        const rec = await startedRecord(t, id);
        const wrapperPid = Number(rec.wrapper_pid);
        const pgid = Number(rec.pgid);
        expect(wrapperPid).toBeGreaterThan(1);
        killQuietly(wrapperPid);
        await until("the wrapper to die", () => !pidAlive(wrapperPid));
        const r = await waitFor(t, id);
        for (const p of groupMembers(pgid)) killQuietly(p);
        expect(r.code).toBe(6);
        expect(r.json.state).toBe("lost");
        expect(r.json.reason).toBe("wrapper_killed");
      },
      90_000,
    );

    it(
      "waiter",
      "a client killed mid-wait loses nothing: a new client collects the result",
      async () => {
        const id = submitTo(t, ["sh", "-c", `${awaitFile("go")}; echo survived`]);
        const waiter = t.sb.spawn(["wait", "--json", id]);
        await until("the job running", () => t.sb.status(id).state === "running", t.jobMs);
        waiter.kill("SIGKILL");
        expect(await waiter.exited).not.toBe(0);
        writeFileSync(join(t.jobDir(id), "go"), "");
        const r = await waitFor(t, id);
        expect(r.code).toBe(0);
        expect(r.json).toMatchObject({ state: "succeeded", stdout_tail: "survived\n" });
      },
      90_000,
    );

    it(
      "artifacts",
      "artifacts: JSON parsed and hashed; a missing one is exists:false",
      async () => {
        const body = '{"ok": true, "n": 3}';
        const out = `out-${process.pid}-${Date.now()}`;
        const id = submitTo(
          t,
          [
            "sh",
            "-c",
            `pwd > "$AWAITLESS_JOB_DIR/cwd" && mkdir -p ${out} && printf '%s' '${body}' > ${out}/r.json`,
          ],
          ["--artifact", `${out}/r.json`, "--artifact", `${out}/missing.json`],
        );
        const r = await waitFor(t, id);
        expect(r.code).toBe(0);
        const byPath = (p: string) => r.json.artifacts.find((a: { path: string }) => a.path === p);
        const [found, missing] = [byPath(`${out}/r.json`), byPath(`${out}/missing.json`)];
        expect(found).toMatchObject({ path: `${out}/r.json`, exists: true, size_bytes: body.length });
        expect(found.sha256).toBe(new Bun.CryptoHasher("sha256").update(body).digest("hex"));
        expect(found.content).toEqual({ ok: true, n: 3 });
        expect(missing).toMatchObject({ path: `${out}/missing.json`, exists: false });
        expect(r.json.parsed_results).toEqual({ ok: true, n: 3 });
        const cwd = readFileSync(join(t.jobDir(id), "cwd"), "utf8").trim();
        rmSync(join(cwd, out), { recursive: true, force: true });
      },
      60_000,
    );

    it(
      "logs",
      "logs: --grep pages by next_from_line, --lines A:B, --head N",
      async () => {
        const script =
          'i=1; while [ $i -le 30 ]; do echo "line $i"; [ $((i % 7)) = 0 ] && echo "match $i"; i=$((i+1)); done; echo e >&2';
        const id = submitTo(t, ["sh", "-c", script]);
        expect((await waitFor(t, id)).code).toBe(0);
        const logs = (args: string[]) => t.sb.run(["logs", "--json", ...args, id]).json;
        const p1 = logs(["--grep", "^match", "--head", "2", "--stream", "stdout"]);
        expect(p1.stdout).toBe("8:match 7\n16:match 14\n");
        expect(p1.stdout_page).toMatchObject({ matches_total: 4, next_from_line: 24 });
        const p2 = logs([
          "--grep",
          "^match",
          "--head",
          "2",
          "--lines",
          `${p1.stdout_page.next_from_line}:`,
          "--stream",
          "stdout",
        ]);
        expect(p2.stdout).toBe("24:match 21\n32:match 28\n");
        expect(logs(["--lines", "3:4", "--stream", "stdout"]).stdout).toBe("line 3\nline 4\n");
        expect(logs(["--head", "2", "--stream", "stdout"]).stdout).toBe("line 1\nline 2\n");
        expect(logs(["--stream", "stderr"]).stderr).toBe("e\n");
      },
      60_000,
    );

    it(
      "redaction",
      "secrets passed with --secret-env never appear in tails, digests or logs",
      async () => {
        const env = { AWL_S: SECRET };
        const r = await t.sb.runAsync(
          [
            "submit",
            "--json",
            ...t.flags,
            "--secret-env",
            "AWL_S",
            "--",
            "sh",
            "-c",
            'echo "key=$AWL_S"; echo "Error: $AWL_S" >&2; exit 1',
          ],
          { env },
        );
        const id = r.json.job_id as string;
        const w = await waitFor(t, id);
        expect(w.json.stdout_tail).toBe("key=[REDACTED]\n");
        expect(w.json.stderr_tail).toBe("Error: [REDACTED]\n");
        const seen = [
          w.stdout,
          t.sb.run(["logs", "--json", id]).stdout,
          t.sb.run(["inspect", "--json", id]).stdout,
        ];
        for (const text of seen) expect(text).not.toContain(SECRET);
      },
      60_000,
    );

    it(
      "replay",
      "a replayed result is byte-identical, snapshot.sha256 included",
      async () => {
        const id = submitTo(t, ["sh", "-c", "echo same"]);
        const a = await waitFor(t, id);
        const b = await waitFor(t, id);
        expect(a.code).toBe(0);
        expect(b.stdout).toBe(a.stdout);
        const inspect = t.sb.run(["inspect", "--json", id]).json;
        expect(inspect.result.snapshot.sha256).toBe(a.json.snapshot.sha256);
        expect(a.stdout.startsWith(JSON.stringify(inspect.result).slice(0, -1))).toBe(true);
        expect(a.json).toMatchObject({
          ...inspect.result,
          job_state: "succeeded",
          delivery_state: "delivered",
        });
      },
      60_000,
    );

    it(
      "queues",
      "named queues: a job waits for its slot and runs after the one ahead of it",
      async () => {
        const q = `contract-${process.pid}-${Date.now() % 100_000}`;
        const made = t.sb.run(["queue", "create", q, "--concurrency", "1", "--json", ...t.queueFlags]);
        expect(made.code).toBe(0);
        const stamp = (n: string) => `date +%s%N > "$AWAITLESS_JOB_DIR/${n}"`;
        const a = submitTo(t, ["sh", "-c", `${awaitFile("go")}; ${stamp("end")}`], ["--queue", q]);
        const b = submitTo(t, ["sh", "-c", stamp("start")], ["--queue", q]);
        await until("A running", () => t.sb.status(a).state === "running", t.jobMs);
        expect(t.sb.status(b).state).toBe("queued");
        expect(existsSync(join(t.jobDir(b), "start"))).toBe(false);
        writeFileSync(join(t.jobDir(a), "go"), "");
        expect((await waitFor(t, a)).code).toBe(0);
        expect((await waitFor(t, b)).code).toBe(0);
        const end = BigInt(readFileSync(join(t.jobDir(a), "end"), "utf8").trim());
        const start = BigInt(readFileSync(join(t.jobDir(b), "start"), "utf8").trim());
        expect(start > end).toBe(true);
      },
      90_000,
    );
  });
}
