// Claude Code's channel: its TUI (in tmux) started with the command line `awaitless mcp-config claude` prints; a
// job the session started ends while the session is idle, our server pushes one channel event for it, and
// Claude Code wakes its model with it: the next model request carries the event, and the model's wait_for_job
// reads the result.
//
// Claude Code 2.1.332 registers a server's channel (its own code, read in its bundle) when the server declares
// experimental["claude/channel"], on a 2025-era connection (MCP_PROTOCOL_NEGOTIATION=legacy in that command
// line), for its first-party provider (a custom ANTHROPIC_BASE_URL such as the scripted model's does not change
// the provider), and with its remote flag `tengu_harbor` on ("channels feature is not currently available"
// otherwise). The session reads that flag as the client keeps it from Anthropic's answer: `cachedGrowthBookFeatures`
// in ~/.claude.json; with telemetry off (as the harness runs it) the client reads that copy only under
// CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF=1. With the flag on, the development-channels flag asks once
// for confirmation.
import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import { until } from "../helpers/until.ts";
import { clientAvailable } from "./harness/available.ts";
import { claude, claudeEnv } from "./harness/clients/claude.ts";
import { CLIENT_BIN } from "./harness/run-client.ts";
import { call, type Step, say } from "./harness/script.ts";
import { startTui, type TuiRun } from "./harness/tmux.ts";
import type { Turn } from "./harness/types.ts";
import { readTap } from "./harness/wiring.ts";

const avail = clientAvailable("claude");
const tmux =
  Bun.which("tmux") === null ? { ok: false, why: "tmux is missing (`apt-get install tmux`)" } : avail;

if (gateOnAvailability("Claude Code channel (TUI in tmux)", avail.ok ? tmux : avail)) {
  let tui: TuiRun | undefined;
  afterAll(async () => {
    await tui?.stop();
  });

  /** The channel block Claude Code puts in front of its model for our server. */
  const CHANNEL = '<channel source="awaitless"';
  const carriesEvent = (turn: Turn | undefined) => turn?.texts.at(-1)?.startsWith(CHANNEL) === true;
  /** The model's turn after its first: it reads the event when one came (and fetches the result), else it waits. */
  const onEvent: Step = (ctx) =>
    carriesEvent(ctx.turn)
      ? call("wait_for_job", { job_id: ctx.jobId() })(ctx)
      : say("It is running; I will be told when it ends.")(ctx);

  /** What Claude Code's debug log says about our server's channel (registered, or skipped and why). */
  function channelLog(home: string): string[] {
    const dir = join(home, ".claude", "debug");
    if (!existsSync(dir)) return [];
    return readdirSync(dir).flatMap((f) =>
      readFileSync(join(dir, f), "utf8")
        .split("\n")
        .filter((l) => l.includes("Channel notifications")),
    );
  }

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

  test("a job that ends while the session is idle: our channel event, carried by the next model request", async () => {
    const command = channelCommand();
    expect(command.args).toEqual(["--dangerously-load-development-channels", "server:awaitless"]);
    tui = startTui(
      claude,
      {
        prompt: "",
        steps: [
          call("run", { command: "echo started; sleep 6; echo slow-check-$((6*7))" }),
          onEvent,
          say("The slow check succeeded."),
        ],
        defaults: { inline_timeout_seconds: 2 },
        timeoutMs: 0,
      },
      {
        argv: [join(CLIENT_BIN, "claude"), ...command.args, "--allowedTools", "mcp__awaitless", "--debug"],
        env: {
          ...claudeEnv(),
          TERM: "xterm-256color",
          // Feature flags from the client's saved copy (telemetry is off).
          CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF: "1",
          ...command.env,
        },
      },
    );
    const run = tui;
    // What a user has already answered once: onboarding, trusting the folder, the API key; and the channels
    // flag as the client saved it from Anthropic's answer.
    const file = join(run.dirs.home, ".claude.json");
    const config = JSON.parse(readFileSync(file, "utf8"));
    config.hasCompletedOnboarding = true;
    config.projects = { [run.dirs.work]: { hasTrustDialogAccepted: true } };
    config.customApiKeyResponses = { approved: ["sk-ant-scripted"], rejected: [] };
    config.cachedGrowthBookFeatures = { tengu_harbor: true };
    writeFileSync(file, JSON.stringify(config, null, 2));

    // With channels on, --dangerously-load-development-channels asks once: "I am using this for local development".
    const warning = "I am using this for local development";
    await until("the development-channels warning", () => run.screen().includes(warning), 60_000, 250);
    run.key("Enter");
    await until(
      "the prompt",
      () => !run.screen().includes(warning) && run.screen().includes("❯"),
      30_000,
      250,
    );
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
    // The turn: tool search, run (detached after the 2 s window), then the model ends its turn (no event yet).
    const ended = await run.model.waitFor(
      "the turn that started the job ends",
      (r) => r.reply?.kind === "text" && (r.turn?.results.length ?? 0) >= 2,
      90_000,
    );
    expect(carriesEvent(ended.turn)).toBe(false);
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

    // Claude Code registered the channel, and the idle session's next model request carries the event.
    expect(channelLog(run.dirs.home)).toContainEqual(
      expect.stringContaining("Channel notifications registered"),
    );
    const woken = await run.model.waitFor(
      "the model request that carries the channel event",
      (r) => carriesEvent(r.turn),
      60_000,
      ended.seq,
    );
    const last = (
      woken.body!.messages as Array<{ role: string; content: Array<{ type: string; text?: string }> }>
    ).at(-1)!;
    expect(last.role).toBe("user");
    const block = last.content.find((b) => b.type === "text" && b.text!.startsWith(CHANNEL))?.text ?? "";
    expect(block).toContain(`job_id="${jobId}"`);
    expect(block).toContain('state="succeeded"');
    expect(block).toContain(content.trim());
    // The model acts on it: its wait_for_job reads the job's result.
    const read = await run.model.waitFor(
      "the request that carries wait_for_job's result",
      (r) => (r.turn?.results.length ?? 0) >= 3,
      60_000,
      woken.seq,
    );
    const result = read.turn!.results.at(-1)!;
    expect(result.name).toBe("mcp__awaitless__wait_for_job");
    expect(result.text).toContain("succeeded");
    expect(result.text).toContain("slow-check-42");
  }, 180_000);
}
