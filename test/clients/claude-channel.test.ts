// Claude Code's channel: its TUI (in tmux) started with the command line `awaitless mcp-config claude` prints; a
// job the session started ends while the session is idle, and our server pushes one channel event for it.
//
// Claude Code 2.1.332 registers a server's channel only (its own code, read in its bundle): when the server
// declares experimental["claude/channel"], on a 2025-era connection (a 2026-07-28 one "has no unsolicited
// notification path", and 2.1.332 opens one by default: MCP_PROTOCOL_NEGOTIATION=legacy in that command line
// gives the 2025 handshake), for its first-party API (a custom ANTHROPIC_BASE_URL is a "gateway": "channels are
// not available on third-party providers"), and with its remote feature flag on. So with a scripted model the
// event reaches the TUI but never the model: that step is a todo, and this test asserts what our server sends
// on the connection Claude Code opened.
import { afterAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import { until } from "../helpers/until.ts";
import { clientAvailable } from "./harness/available.ts";
import { claude, claudeEnv } from "./harness/clients/claude.ts";
import { CLIENT_BIN } from "./harness/run-client.ts";
import { call, say } from "./harness/script.ts";
import { startTui, type TuiRun } from "./harness/tmux.ts";
import { readTap } from "./harness/wiring.ts";

const avail = clientAvailable("claude");
const tmux =
  Bun.which("tmux") === null ? { ok: false, why: "tmux is missing (`apt-get install tmux`)" } : avail;

if (gateOnAvailability("Claude Code channel (TUI in tmux)", avail.ok ? tmux : avail)) {
  let tui: TuiRun | undefined;
  afterAll(async () => {
    await tui?.stop();
  });

  test.todo(
    "the next model request carries the event (Claude Code 2.1.332 registers channels only for its first-party API with its remote flag on: not reachable with a scripted model)",
  );

  /** The command line `awaitless mcp-config claude` tells a user to start Claude Code with: its variables and arguments. */
  function channelCommand(): { env: Record<string, string>; args: string[] } {
    const r = Bun.spawnSync([BINARY, "mcp-config", "claude"], { stdout: "pipe", stderr: "pipe" });
    const line = r.stderr
      .toString()
      .split("\n")
      .find((l) => l.includes("--dangerously-load-development-channels"));
    const words = (line?.split("start it with ")[1] ?? "").trim().split(/\s+/);
    const env: Record<string, string> = {};
    while (/^[A-Z_]+=/.test(words[0] ?? "")) {
      const [k, v] = words.shift()!.split("=") as [string, string];
      env[k] = v;
    }
    if (words.shift() !== "claude")
      throw new Error(`mcp-config claude printed no claude command line: ${line}`);
    return { env, args: words };
  }

  test("a job that ends while the session is idle: a channel event naming the job, its state and the call", async () => {
    const command = channelCommand();
    expect(command.args).toEqual(["--dangerously-load-development-channels", "server:awaitless"]);
    tui = startTui(
      claude,
      {
        prompt: "",
        steps: [
          call("run", { command: "echo started; sleep 6; echo slow-check-$((6*7))" }),
          say("It is running; I will be told when it ends."),
        ],
        defaults: { inline_timeout_seconds: 2 },
        timeoutMs: 0,
      },
      {
        argv: [join(CLIENT_BIN, "claude"), ...command.args, "--allowedTools", "mcp__awaitless"],
        env: { ...claudeEnv(), TERM: "xterm-256color", ...command.env },
      },
    );
    const run = tui;
    // What a user has already answered once: onboarding, trusting the folder, the API key.
    const file = join(run.dirs.home, ".claude.json");
    const config = JSON.parse(readFileSync(file, "utf8"));
    config.hasCompletedOnboarding = true;
    config.projects = { [run.dirs.work]: { hasTrustDialogAccepted: true } };
    config.customApiKeyResponses = { approved: ["sk-ant-scripted"], rejected: [] };
    writeFileSync(file, JSON.stringify(config, null, 2));

    await until("the prompt", () => run.screen().includes("❯"), 60_000, 250);
    const prompt = "Start the slow check and let me know when it ends.";
    run.type(prompt);
    await until("the typed prompt on screen", () => run.screen().includes(prompt), 10_000, 100);
    // Enter until the turn starts (a key sent while the UI is still busy is taken as part of the paste).
    await until(
      "the first model request",
      () => {
        if (run.model.main().length > 0) return true;
        run.key("Enter");
        return false;
      },
      30_000,
      1_500,
    );
    // The turn: tool search, run (detached after the 2 s window), then the model ends its turn.
    const ended = await run.model.waitFor(
      "the turn that started the job ends",
      (r) => r.reply?.kind === "text" && (r.turn?.results.length ?? 0) >= 2,
      90_000,
    );
    const jobId = /job_[0-9A-Z]{26}/.exec(ended.turn!.results.at(-1)!.text)?.[0];
    expect(jobId, ended.turn!.results.at(-1)!.text).toBeDefined();
    // Idle now; the job ends about 4 s later and the server pushes the event to the idle session.
    const events = () =>
      readTap(run.dirs).filter((t) => t.dir === "out" && t.msg?.method === "notifications/claude/channel");
    const [event] = await until(
      "a notifications/claude/channel from our server",
      () => {
        const e = events();
        return e.length > 0 ? e : undefined;
      },
      45_000,
      250,
    );
    // The connection Claude Code opened with that command line: the 2025 handshake, our capability declared in it.
    const opened = readTap(run.dirs).filter((t) => t.dir === "in" && t.msg?.method !== undefined);
    expect(opened[0]?.msg.method).toBe("initialize");
    expect(opened.some((t) => t.msg.method === "server/discover")).toBe(false);
    const answer = readTap(run.dirs).find((t) => t.dir === "out" && t.msg?.result?.serverInfo !== undefined);
    expect(answer?.msg.result.capabilities.experimental).toEqual({ "claude/channel": {} });
    const { content } = event!.msg.params as { content: string };
    expect(content).toContain(jobId!);
    expect(content).toContain("succeeded");
    expect(content).toMatch(/wait_for_job|get_job_status/);
  }, 180_000);
}
