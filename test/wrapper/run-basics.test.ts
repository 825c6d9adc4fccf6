// wrapper.sh under each shell: exit codes, signals, started record, cwd, env, launch failures.

import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { readStarted } from "../../src/wrapper/protocol.ts";
import { describeEachShell, helperScript, newJob, waitFor } from "./harness.ts";

const envBin = Bun.which("env")!;

describeEachShell("wrapper runs a command", (shell) => {
  test("success: exit 0 and the exact stdout/stderr bytes", async () => {
    await using job = newJob().start(shell, {
      argv: ["sh", "-c", "printf 'out\\n\\001ü'; printf 'err line' >&2"],
    });
    const exit = await job.exit();
    expect(exit).toMatchObject({ exitCode: 0, reason: "exited", descendantsAlive: false });
    expect(exit.signal).toBeUndefined();
    expect(job.bytes("stdout")).toEqual(new TextEncoder().encode("out\n\u0001ü"));
    expect(job.read("stderr")).toBe("err line");
    expect(exit).toMatchObject({
      stdoutBytes: 7,
      stderrBytes: 8,
      stdoutDroppedBytes: 0,
      stderrDroppedBytes: 0,
    });
  });

  test("the exit record comes even when the monitor's USR1 trap never runs", async () => {
    // bash can drop a trap that fires while it parses a command substitution; the wrapper must not depend on the
    // signal. A signal ignored when a non-interactive shell starts cannot be trapped, which simulates the loss.
    const deaf = { ...shell, argv: ["/bin/sh", "-c", 'trap "" USR1; exec "$@"', "sh", ...shell.argv] };
    await using job = newJob().start(deaf, { argv: ["sh", "-c", "echo done"] });
    expect(await job.exit()).toMatchObject({ exitCode: 0, reason: "exited" });
    expect(job.read("stdout")).toBe("done\n");
    // removed right after the record (a client waits for the record only)
    await waitFor(
      "monitor.stop removed",
      () => (existsSync(job.path("monitor.stop")) ? undefined : true),
      5_000,
    );
  });

  test("a non-zero exit code is recorded as is", async () => {
    await using job = newJob().start(shell, { argv: ["sh", "-c", "exit 7"] });
    expect(await job.exit()).toMatchObject({ exitCode: 7, reason: "exited" });
  });

  test("death by signal is 128+n with the signal named", async () => {
    await using job = newJob().start(shell, { argv: ["sh", "-c", "kill -KILL $$"] });
    const exit = await job.exit();
    expect(exit).toMatchObject({ exitCode: 137, signal: "KILL", reason: "exited" });
  });

  test("a missing command exits 127 like a shell would", async () => {
    await using job = newJob().start(shell, { argv: ["awaitless-no-such-command-xyz"] });
    expect(await job.exit()).toMatchObject({ exitCode: 127, reason: "exited" });
    expect(job.read("stderr")).toContain("awaitless-no-such-command-xyz");
  });

  test("started names the command's own pid, which leads its own process group", async () => {
    const self = helperScript("print-self.sh", 'echo "$$"; cat /proc/self/status | grep -i sigign');
    await using job = newJob().start(shell, { argv: [self] });
    const exit = await job.exit();
    expect(exit.exitCode).toBe(0);
    const started = readStarted(job.dir)!;
    const [pid, sigIgn] = job.read("stdout").trim().split("\n");
    expect(started.pid).toBe(Number(pid));
    expect(started.pgid).toBe(started.pid);
    expect(started.wrapperPid).toBeGreaterThan(0);
    expect(started.bootId).toBe(readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
    expect(started.procStart).toMatch(/^[0-9]+$/);
    expect(Math.abs(started.startedAtEpochSeconds - Date.now() / 1000)).toBeLessThan(60);
    // Started in the foreground, the command keeps default SIGINT/SIGQUIT handling.
    expect(sigIgn).toMatch(/SigIgn:\s*0+$/);
  });

  test("a launcher's clock reading gives started_at without `date` when it is this boot's and under a minute old", async () => {
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const uptimeCs = () => {
      const [s, cs] = readFileSync("/proc/uptime", "utf8").split(" ")[0]!.split(".");
      return Number(s) * 100 + Number(cs);
    };
    // an epoch no clock of this machine shows (2001-09-09): taken only from the reading
    const then = 100_000_000_000;
    const startedAt = async (clock: string) => {
      // the command sees no AWL_LAUNCH_CLOCK: it is the wrapper's
      await using job = newJob().start(
        shell,
        { argv: ["sh", "-c", `echo "[\${AWL_LAUNCH_CLOCK-unset}]"`] },
        {
          AWL_LAUNCH_CLOCK: clock,
        },
      );
      expect(await job.exit()).toMatchObject({ exitCode: 0, reason: "exited" });
      expect(job.read("stdout")).toBe("[unset]\n");
      return readStarted(job.dir)!.startedAtEpochSeconds;
    };
    const fresh = await startedAt(`${then}:${uptimeCs()}:${boot}`);
    expect(fresh).toBeGreaterThanOrEqual(then / 100);
    expect(fresh).toBeLessThan(then / 100 + 60);
    const now = Date.now() / 1000;
    for (const clock of [
      `${then}:${uptimeCs()}:00000000-0000-0000-0000-000000000000`, // another boot
      `${then}:${uptimeCs() - 7000}:${boot}`, // 70 s old
      `${then}:${uptimeCs() + 100_000}:${boot}`, // from the future
      `x${then}:${uptimeCs()}:${boot}`,
      "",
    ]) {
      expect({ clock, near: Math.abs((await startedAt(clock)) - now) < 60 }).toEqual({ clock, near: true });
    }
  });

  test("the command runs in a cwd whose name holds spaces, quotes and $", async () => {
    await using job = newJob();
    const cwd = join(job.root, `we ird'dir "$HOME" \`x\``);
    mkdirSync(cwd);
    job.start(shell, { argv: ["pwd", "-P"], cwd });
    expect(await job.exit()).toMatchObject({ exitCode: 0 });
    expect(job.read("stdout")).toBe(`${cwd}\n`);
  });

  test("a missing cwd is launch_failed with exit code 126 and a message in wrapper.log", async () => {
    await using job = newJob();
    const cwd = join(job.root, "does-not-exist");
    job.start(shell, { argv: ["true"], cwd });
    expect(await job.exit()).toMatchObject({ exitCode: 126, reason: "launch_failed" });
    expect(job.read("wrapper.log")).toContain("does-not-exist");
  });

  test("a missing spec.sh is launch_failed", async () => {
    await using job = newJob().launch(shell);
    expect(await job.exit()).toMatchObject({ exitCode: 126, reason: "launch_failed" });
    expect(job.read("wrapper.log")).toContain("spec.sh");
  });

  test("hostile env values reach the command byte-for-byte, and PATH/IFS do not disturb the wrapper", async () => {
    const env: Record<string, string> = {
      PLAIN: "value",
      EMPTY: "",
      QUOTES: `it's "quoted" '' \\'`,
      DOLLAR: "$HOME $" + "{PATH} $(id) `id` \\$",
      NEWLINES: "line1\nline2\n\n",
      UNICODE: "grüße ✓ 🚀",
      DASH: "-n",
      IFS: "x",
      PATH: "/nonexistent-awaitless",
      CDPATH: "/",
    };
    await using job = newJob().start(shell, { argv: [envBin, "-0"], env });
    const exit = await job.exit();
    expect(exit).toMatchObject({ exitCode: 0, reason: "exited" });
    const seen = new Map<string, string>();
    for (const entry of job.read("stdout").split("\0")) {
      const eq = entry.indexOf("=");
      if (eq > 0) seen.set(entry.slice(0, eq), entry.slice(eq + 1));
    }
    for (const [name, value] of Object.entries(env)) expect(seen.get(name)).toBe(value);
    expect(seen.get("AWAITLESS_JOB_ID")).toBe(job.jobId);
    expect(seen.get("AWAITLESS_JOB_DIR")).toBe(job.dir);
    expect(seen.get("AWAITLESS_PROGRESS_FILE")).toBe(join(job.dir, "progress"));
  });

  test("job files are private (0600) while the command keeps the umask the wrapper was started with", async () => {
    await using job = newJob().start(shell, { argv: ["sh", "-c", "umask"] });
    expect(await job.exit()).toMatchObject({ exitCode: 0 });
    const inherited = process.umask();
    expect(Number.parseInt(job.read("stdout").trim(), 8)).toBe(inherited);
    for (const name of ["started", "exit", "stdout", "stderr"]) {
      expect(statSync(job.path(name)).mode & 0o777).toBe(0o600);
    }
    // another umask than the test's own, set by the shell that starts the wrapper
    const strict = { ...shell, argv: ["/bin/sh", "-c", 'umask 0027; exec "$@"', "sh", ...shell.argv] };
    await using other = newJob().start(strict, { argv: ["sh", "-c", "umask"] });
    expect(await other.exit()).toMatchObject({ exitCode: 0 });
    expect(other.read("stdout").trim()).toBe("0027");
  });

  test("a readonly shell name in env does not stop the launch", async () => {
    await using job = newJob().start(shell, {
      argv: ["sh", "-c", "echo ran"],
      env: { PPID: "1", OK: "yes" },
    });
    expect(await job.exit()).toMatchObject({ exitCode: 0 });
    expect(job.read("stdout")).toBe("ran\n");
  });

  test("the monitor naps in the C locale; the command keeps the caller's locale", async () => {
    await using job = newJob().start(
      shell,
      { argv: ["sh", "-c", `echo "\${LC_ALL-unset} $LANG"; sleep 4`] },
      { LANG: "C.UTF-8" },
    );
    // the monitor's `sleep`: in the wrapper's session (the command has its own), its environment read from /proc
    const session = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[3];
    const napEnv = await waitFor(
      "a nap of the monitor",
      () => {
        for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
          try {
            if (readFileSync(`/proc/${name}/comm`, "utf8").trim() !== "sleep") continue;
            if (session(Number(name)) !== String(job.wrapperPid)) continue;
            return readFileSync(`/proc/${name}/environ`, "utf8").split("\0");
          } catch {
            // gone meanwhile
          }
        }
        return undefined;
      },
      10_000,
    );
    expect(napEnv).toContain("LC_ALL=C");
    expect(napEnv).toContain("LANG=C.UTF-8");
    expect(await job.exit()).toMatchObject({ exitCode: 0 });
    expect(job.read("stdout")).toBe("unset C.UTF-8\n");
  });

  test("a cancel file present before the start means the command never runs", async () => {
    await using job = newJob();
    await Bun.write(job.path("cancel"), "0\n");
    job.start(shell, { argv: ["sh", "-c", "echo ran > ran.txt"] });
    const exit = await job.exit();
    expect(exit).toMatchObject({ reason: "cancelled" });
    expect(exit.exitCode).toBeUndefined();
    expect(existsSync(join(job.work, "ran.txt"))).toBe(false);
  });
});
