// The compiled `awaitless mcp` through the official MCP client SDK: a result says what the job's processes left
// (leftovers) and what it cost (resources); keep_leftovers keeps them, and cancel_job of the ended job stops them.
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { structured, textOf } from "./harness.ts";
import { BINARY, connectStdio, makeSandbox } from "./stdio-client.ts";

const cleanups: Array<() => Promise<void> | void> = [];
const pids: number[] = [];
afterEach(async () => {
  for (const p of pids.splice(0)) {
    try {
      process.kill(p, "SIGKILL");
    } catch {}
  }
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

interface Result {
  job_id: string;
  state: string;
  leftovers?: { count: number; action: string; processes: string[]; tracking: string };
  resources?: { source: string; cpu_user_seconds: number | null };
}

describe("the whole job through MCP", () => {
  test("run: what the command left is listed and stopped; submit_job with keep_leftovers keeps it until cancel_job", async () => {
    const box = makeSandbox();
    cleanups.push(box.remove);
    const conn = await connectStdio("legacy", box.env, box.root);
    cleanups.push(conn.close);
    const command = 'setsid sleep 300 & echo $! > "$AWAITLESS_JOB_DIR/left"; echo up';
    const ran = await conn.client.callTool({
      name: "run",
      arguments: { command, inline_timeout_seconds: 30 },
    });
    const stopped = structured<Result>(ran);
    // the models that read only the text (Gemini CLI, opencode, Qwen Code) get it in words
    expect(textOf(ran)).toContain(
      "Leftovers: 1 process(es) outlived the command and were stopped (tracking: ",
    );
    expect(stopped.state).toBe("succeeded");
    expect(stopped.leftovers).toMatchObject({ count: 1, action: "stopped" });
    expect(stopped.resources?.source).toMatch(/^(cgroup|rusage)$/);
    const dirOf = (id: string) =>
      JSON.parse(Bun.spawnSync([BINARY, "inspect", "--json", id], { env: box.env }).stdout.toString())
        .job_dir as string;
    const first = Number(readFileSync(join(dirOf(stopped.job_id), "left"), "utf8"));
    // its command line as the wrapper saw it: `sleep 300`, or what it ran before that exec (the forked shell, setsid)
    expect(stopped.leftovers?.processes).toHaveLength(1);
    expect(stopped.leftovers?.processes[0]).toStartWith(`${first} `);
    expect(alive(first)).toBe(false);

    const submitted = structured<{ job_id: string }>(
      await conn.client.callTool({ name: "submit_job", arguments: { command, keep_leftovers: true } }),
    );
    const kept = structured<Result>(
      await conn.client.callTool({ name: "wait_for_job", arguments: { job_id: submitted.job_id } }),
    );
    expect(kept.leftovers).toMatchObject({ count: 1, action: "kept" });
    const second = Number(readFileSync(join(dirOf(kept.job_id), "left"), "utf8"));
    pids.push(second);
    expect(alive(second)).toBe(true);
    const c = structured<{ already_terminal: boolean; leftover: { action: string } }>(
      await conn.client.callTool({
        name: "cancel_job",
        arguments: { job_id: kept.job_id, grace_period_seconds: 1 },
      }),
    );
    expect(c.already_terminal).toBe(true);
    expect(c.leftover.action).toBe("signalled");
    const deadline = Date.now() + 15_000;
    while (alive(second) && Date.now() < deadline) await Bun.sleep(50);
    expect(alive(second)).toBe(false);
  }, 90_000);
});
