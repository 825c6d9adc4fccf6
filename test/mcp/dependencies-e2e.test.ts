// `after` over MCP end to end (the official client against the compiled `awaitless mcp`): run with a parent still
// running detaches as queued and names what it waits for; the child runs once the parent succeeded; a failed
// parent ends it dependency_failed; malformed or cross-target entries are invalid params with nothing created.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { structured, textOf } from "./harness.ts";
import { connectStdio, makeSandbox } from "./stdio-client.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("after over MCP", () => {
  test("held, then run; a failed parent ends the child dependency_failed; bad entries refused", async () => {
    const box = makeSandbox();
    cleanups.push(box.remove);
    const conn = await connectStdio("modern", box.env, box.root);
    cleanups.push(conn.close);
    const { client } = conn;
    const call = async (name: string, args: Record<string, unknown>) =>
      client.callTool({ name, arguments: args });
    const gate = join(box.root, "gate");
    const ran = join(box.root, "ran");
    const parent = structured<{ job_id: string }>(
      await call("submit_job", {
        command: `i=0; while [ ! -e '${gate}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done`,
      }),
    ).job_id;
    const held = structured<{ delivery: string; detach_reason: string; job_id: string }>(
      await call("run", { command: `touch '${ran}'`, after: [`${parent}:ok`] }),
    );
    expect([held.delivery, held.detach_reason]).toEqual(["detached", "queued"]);
    let status = structured<{ state: string; status_message: string; after: string[] }>(
      await call("get_job_status", { job_id: held.job_id }),
    );
    for (let i = 0; i < 100 && !status.status_message; i++) {
      await Bun.sleep(50);
      status = structured(await call("get_job_status", { job_id: held.job_id }));
    }
    expect(status.state).toBe("queued");
    expect(status.status_message).toBe(`waiting for ${parent} to succeed`);
    expect(status.after).toEqual([`${parent}:ok`]);
    await Bun.write(gate, "");
    const done = structured<{ state: string }>(await call("wait_for_job", { job_id: held.job_id }));
    expect(done.state).toBe("succeeded");
    expect(existsSync(ran)).toBe(true);

    const bad = structured<{ job_id: string }>(await call("submit_job", { command: "exit 3" })).job_id;
    await call("wait_for_job", { job_id: bad });
    const never = structured<{ job_id: string }>(
      await call("submit_job", { command: "echo never", after: [bad] }),
    ).job_id;
    const r = structured<{ state: string; reason: string }>(await call("wait_for_job", { job_id: never }));
    expect([r.state, r.reason]).toEqual(["cancelled", "dependency_failed"]);

    const listed = () => call("list_jobs", { limit: 100 });
    const before = structured<{ jobs: unknown[] }>(await listed()).jobs.length;
    for (const [after, says] of [
      [["nonsense"], "bad dependency"],
      [[{ job_id: parent }], "after"],
      [[parent], "same target"],
    ] as const) {
      const res = await call("submit_job", {
        command: "true",
        after,
        ...(says === "same target" ? { host: "elsewhere" } : {}),
      });
      expect(res.isError).toBe(true);
      expect(textOf(res)).toContain(says);
      expect(textOf(res)).not.toContain("--after");
    }
    expect(structured<{ jobs: unknown[] }>(await listed()).jobs.length).toBe(before);
  }, 60_000);
});
