// `run` as a person at a terminal and a script meet it: the job ID first (stderr), a wait to the job's end (past the
// old 10 s window), Ctrl-C or a closed terminal detaching with the ID and the wait command (exit 4) while the job runs
// on, `--detach-after`, an agent's shell tool killing it, pipes. The terminal is real: tmux (an interactive bash in a
// pane) and script(1). Jobs hold on gate files the test creates, so nothing depends on timing.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, killQuietly, Sandbox, until } from "../helpers/cli.ts";

const TMUX = Bun.which("tmux");
const SCRIPT = Bun.which("script");
const sb = new Sandbox();
sb.writeConfig("[defaults]\nmax_return_bytes = 4194304\nlog_tail_lines = 1000000\n");
afterAll(() => sb.cleanup());

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
const ID_LINE =
  /(job_[0-9A-Z]{26}) submitted; waiting for it to end \(Ctrl-C detaches; the job keeps running\)/;
let gates = 0;

/** A command that waits for its gate file, then prints `finished`; `open()` lets it end. */
function gated() {
  const file = join(sb.work, `gate-${++gates}`);
  return {
    argv: ["sh", "-c", `while [ ! -e ${quote(file)} ]; do sleep 0.05; done; echo finished`],
    open: () => writeFileSync(file, ""),
  };
}

/** Gone for good: no such process, or a zombie no one has reaped yet (its parent shell died with the terminal). */
function gone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? true;
  } catch {
    return true;
  }
}

/** An interactive bash in a tmux pane of its own server (a real terminal, as a person has one). */
class Terminal {
  private readonly socket = `awl-run-${process.pid}-${++gates}`;

  constructor() {
    const env = Object.entries({ ...sb.env, TERM: "xterm", PS1: "$ " }).map(([k, v]) => `${k}=${quote(v)}`);
    this.tmux(
      "new-session",
      "-d",
      "-x",
      "250",
      "-y",
      "50",
      "-c",
      sb.work,
      `env -i ${env.join(" ")} bash --norc --noprofile -i`,
    );
  }

  tmux(...args: string[]): string {
    const r = Bun.spawnSync([TMUX!, "-L", this.socket, ...args], { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`tmux ${args[0]} failed: ${r.stderr.toString()}`);
    return r.stdout.toString();
  }

  type(line: string): void {
    this.tmux("send-keys", "-l", line);
    this.tmux("send-keys", "Enter");
  }

  screen(): string {
    return this.tmux("capture-pane", "-p", "-J", "-S", "-100");
  }

  /** The pid of the command the shell runs in the foreground now. */
  foreground(): number {
    const shell = Number(this.tmux("list-panes", "-F", "#{pane_pid}").trim());
    const children = readFileSync(`/proc/${shell}/task/${shell}/children`, "utf8").trim();
    return Number(children.split(" ")[0]);
  }

  async shows(what: string, re: RegExp): Promise<RegExpMatchArray> {
    return until(what, () => this.screen().match(re), 30_000);
  }

  close(): void {
    Bun.spawnSync([TMUX!, "-L", this.socket, "kill-server"], { stderr: "ignore" });
  }
}

describe.skipIf(!TMUX)("run in a real terminal (tmux)", () => {
  test("Ctrl-C detaches: the ID and the wait command, exit 4; the job runs on and the printed command collects it", async () => {
    const t = new Terminal();
    const job = gated();
    try {
      t.type(`${quote(BINARY)} run -- ${job.argv.map(quote).join(" ")}; echo "rc=$?"`);
      const id = (await t.shows("the job ID before the wait", ID_LINE))[1]!;
      t.tmux("send-keys", "C-c");
      await t.shows("the run to end", /rc=\d+/);
      const screen = t.screen();
      expect(screen).toContain("rc=4");
      const said = screen.match(
        /detached \(Ctrl-C\): (job_\S+) keeps running; wait for it: (.+ wait job_\S+)/,
      );
      expect(said?.[1]).toBe(id);
      expect(sb.status(id).state).toBe("running");
      job.open();
      t.type(`${said![2]}; echo "rc2=$?"`);
      await t.shows("the printed wait command to end", /rc2=\d+/);
      expect(t.screen()).toMatch(new RegExp(`${id} succeeded after [\\s\\S]*finished[\\s\\S]*rc2=0`));
    } finally {
      t.close();
      job.open();
    }
  }, 60_000);

  test("a closed terminal (SIGHUP from the shell) detaches; the job runs on and later succeeds", async () => {
    const t = new Terminal();
    const job = gated();
    let pid = 0;
    try {
      t.type(`${quote(BINARY)} run -- ${job.argv.map(quote).join(" ")}`);
      const id = (await t.shows("the job ID before the wait", ID_LINE))[1]!;
      pid = t.foreground();
      expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toContain("run");
      t.close();
      await until("run to end with its terminal", () => gone(pid));
      expect(sb.status(id).state).toBe("running");
      job.open();
      const w = sb.run(["wait", id]);
      expect(w.code).toBe(0);
      expect(w.stdout).toContain("finished");
    } finally {
      t.close();
      job.open();
      if (pid > 0) killQuietly(pid);
    }
  }, 60_000);

  test("SIGHUP on a terminal still open: the same message and exit 4", async () => {
    const t = new Terminal();
    const job = gated();
    try {
      t.type(`${quote(BINARY)} run -- ${job.argv.map(quote).join(" ")}; echo "rc=$?"`);
      const id = (await t.shows("the job ID before the wait", ID_LINE))[1]!;
      process.kill(t.foreground(), "SIGHUP");
      await t.shows("the run to end", /rc=\d+/);
      expect(t.screen()).toContain(
        `detached (SIGHUP: the terminal closed): ${id} keeps running; wait for it:`,
      );
      expect(t.screen()).toContain("rc=4");
      expect(sb.status(id).state).toBe("running");
      job.open();
      expect(sb.run(["wait", id]).code).toBe(0);
    } finally {
      t.close();
      job.open();
    }
  }, 60_000);

  test("`run -- false && echo no` prints nothing after, and exit 3 reaches the shell", async () => {
    const t = new Terminal();
    try {
      t.type(`${quote(BINARY)} run -- false && echo no-no; echo "rc=$?"`);
      await t.shows("the run to end", /rc=\d+/);
      const screen = t.screen();
      expect(screen).toContain("rc=3");
      expect(screen).toMatch(/job_\S+ failed after \S+ \(exit 1\)/);
      expect(screen).not.toMatch(/^no-no$/m);
    } finally {
      t.close();
    }
  }, 60_000);
});

describe.skipIf(!SCRIPT)("run on a pty (script)", () => {
  test("wait to the end, live line included; Ctrl-C typed into the pty detaches", async () => {
    const job = gated();
    const p = Bun.spawn(
      [SCRIPT!, "-qec", [BINARY, "run", "--", ...job.argv].map(quote).join(" "), "/dev/null"],
      // bash runs the command line: it waits to see how its child ends (sh would die of the Ctrl-C itself)
      {
        cwd: sb.work,
        env: { ...sb.env, TERM: "xterm", SHELL: "/bin/bash" },
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    try {
      let text = "";
      const decoder = new TextDecoder();
      const reader = p.stdout.getReader();
      while (!/no output yet/.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      // the live line says so before any output, after the ID
      expect(text).toMatch(new RegExp(`${ID_LINE.source}[\\s\\S]*running \\S+, no output yet`));
      p.stdin.write("\x03");
      await p.stdin.flush();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      expect(await p.exited).toBe(4);
      const id = text.match(ID_LINE)![1]!;
      expect(text).toContain(`detached (Ctrl-C): ${id} keeps running; wait for it:`);
      expect(sb.status(id).state).toBe("running");
    } finally {
      killQuietly(p.pid);
      job.open();
    }
  }, 60_000);
});

describe("run in scripts", () => {
  test("a job longer than the old 10 s inline window: run waits to its end and exits with its status", async () => {
    const r = await sb.runAsync(["run", "--", "sh", "-c", "sleep 12; echo built"]);
    expect(r.stderr).toMatch(ID_LINE);
    expect(r.stderr).not.toContain("detached");
    expect(r.stdout).toMatch(/^job_\S+ succeeded after 1\ds \(exit 0\)/);
    expect(r.stdout).toContain("built");
    expect(r.code).toBe(0);
    const sh = Bun.spawnSync(
      ["bash", "-c", `"$0" run -- sh -c 'sleep 12; exit 2' && echo deployed`, BINARY],
      { cwd: sb.work, env: sb.env, stdout: "pipe", stderr: "pipe" },
    );
    expect(sh.exitCode).toBe(3);
    expect(sh.stdout.toString()).not.toContain("deployed");
  }, 90_000);

  test("--detach-after 1s: inline for a second, then the ID and exit 4; the job keeps running", async () => {
    const job = gated();
    try {
      const r = await sb.runAsync(["run", "--detach-after", "1s", "--", ...job.argv]);
      expect(r.code).toBe(4);
      const id = r.stderr.match(/(job_\S+) submitted; waiting up to 1s, then detaching/)![1]!;
      expect(r.stderr).toContain("detached after 1s: the job keeps running");
      expect(r.stdout).toContain(`${id} is still running`);
      expect(r.stdout).toMatch(new RegExp(`next: .*wait ${id}`));
      expect(sb.status(id).state).toBe("running");
      const j = await sb.runAsync(["run", "--json", "--inline-timeout", "1", "--", ...job.argv]);
      expect(j.code).toBe(4);
      expect(j.json).toMatchObject({ delivery: "detached", detach_reason: "inline_timeout" });
      expect(j.json.next_command).toBe(`awaitless wait ${j.json.job_id}`);
      const both = sb.run(["run", "--detach-after", "1s", "--inline-timeout", "2s", "--", "true"]);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain("--inline-timeout is its Awaitless 0.8 name");
      job.open();
      expect(sb.run(["wait", id]).code).toBe(0);
    } finally {
      job.open();
    }
  }, 60_000);

  test("an agent's shell tool that kills run still has the ID, printed before the wait", async () => {
    const job = gated();
    const p = sb.spawn(["run", "--json", "--", ...job.argv]);
    try {
      const reader = p.stderr.getReader();
      let err = "";
      while (!ID_LINE.test(err)) {
        const { value, done } = await reader.read();
        if (done) break;
        err += new TextDecoder().decode(value);
      }
      const id = err.match(ID_LINE)![1]!;
      process.kill(p.pid, "SIGTERM");
      let rest = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        rest += new TextDecoder().decode(value);
      }
      const [code, stdout] = await Promise.all([p.exited, new Response(p.stdout).text()]);
      expect(code).toBe(4);
      expect(rest).toContain(`detached (SIGTERM): ${id} keeps running`);
      // --json: the pending answer, flat, on stdout
      expect(JSON.parse(stdout)).toMatchObject({
        job_id: id,
        job_state: "running",
        delivery: "detached",
        detach_reason: "interrupted",
        next_command: `awaitless wait ${id}`,
      });
      // SIGKILL leaves no time for anything: the ID was out before the wait began
      const k = sb.spawn(["run", "--", ...job.argv]);
      const kr = k.stderr.getReader();
      const first = new TextDecoder().decode((await kr.read()).value);
      expect(first).toMatch(ID_LINE);
      k.kill("SIGKILL");
      await k.exited;
      job.open();
      expect(sb.run(["wait", id]).code).toBe(0);
      expect(sb.run(["wait", first.match(ID_LINE)![1]!]).code).toBe(0);
    } finally {
      killQuietly(p.pid);
      job.open();
    }
  }, 60_000);

  test("stdout to a slow reader arrives whole; to `head` it ends with 141; stderr holds only the ID line", () => {
    const f = join(sb.root, "slow.json");
    const slow = Bun.spawnSync(
      [
        "bash",
        "-o",
        "pipefail",
        "-c",
        `"$0" run --json -- sh -c 'seq 1 300000' 2>"$1.err" | { sleep 0.3; cat > "$1"; }`,
        BINARY,
        f,
      ],
      { cwd: sb.work, env: sb.env },
    );
    expect(slow.exitCode).toBe(0);
    const got = JSON.parse(readFileSync(f, "utf8"));
    expect(got.stdout_tail.endsWith("299999\n300000\n")).toBe(true);
    expect(got.stdout_tail.length).toBe(got.stdout_bytes);
    expect(readFileSync(`${f}.err`, "utf8")).toMatch(new RegExp(`^${ID_LINE.source}\\n$`));
    const head = Bun.spawnSync(
      ["bash", "-o", "pipefail", "-c", `"$0" run -- seq 1 300000 | head -1`, BINARY],
      { cwd: sb.work, env: sb.env, stdout: "pipe", stderr: "pipe" },
    );
    expect(head.exitCode).toBe(141);
    expect(head.stdout.toString()).toMatch(/^job_\S+ succeeded after \S+ \(exit 0\)\n$/);
    expect(existsSync(f)).toBe(true);
  }, 60_000);
});

if (!TMUX || !SCRIPT) {
  const why = `${!TMUX ? "tmux" : "script(1)"} is missing (apt-get install -y tmux bsdutils)`;
  if (process.env.AWAITLESS_REQUIRE_ALL === "1")
    test("run in a real terminal", () => {
      throw new Error(why);
    });
  else console.warn(`skipping terminal tests of run: ${why}`);
}
