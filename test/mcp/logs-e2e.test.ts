// get_job_logs through the official client against the compiled `awaitless mcp` with real jobs: the whole log is
// reachable (grep finds a line near the start of a 1 MiB+ log, with its number), pages stay within the budget and
// carry cursors that lead on, and an absent pattern is said to be absent from the whole log.
import { afterEach, describe, expect, test } from "bun:test";
import { structured, textOf } from "./harness.ts";
import { connectStdio, makeSandbox } from "./stdio-client.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Page {
  lines: number;
  first_line: number | null;
  last_line: number | null;
  matches_total?: number;
  next_from_line?: number;
  next_to_line?: number;
  left_out: string;
}
interface Logs {
  stdout?: string;
  stdout_bytes: number;
  stdout_page?: Page;
  truncated: boolean;
}

/** 16,000 lines of 70 bytes (1.1 MB): "line 000001 …", then one ERROR in the middle. */
const PRINT =
  'awk \'BEGIN { for (i = 1; i <= 16000; i++) { printf "line %06d %s\\n", i, (i == 8000 ? "ERROR in the middle" : ' +
  '"build output build output build output build output ok") } }\'';

async function finishedJob(era: "legacy" | "modern") {
  const box = makeSandbox({ AWAITLESS_MCP_MAX_RETURN_BYTES: "4096" });
  cleanups.push(box.remove);
  const conn = await connectStdio(era, box.env, box.root);
  cleanups.push(conn.close);
  const run = structured<{ job_id: string; delivery: string; result?: { state: string } }>(
    await conn.client.callTool({ name: "run", arguments: { command: ["sh", "-c", PRINT] } }),
  );
  if (run.delivery !== "inline")
    await conn.client.callTool({ name: "wait_for_job", arguments: { job_id: run.job_id } });
  const logs = async (args: Record<string, unknown>) => {
    const r = await conn.client.callTool({
      name: "get_job_logs",
      arguments: { job_id: run.job_id, stream: "stdout", ...args },
    });
    return { text: textOf(r), body: structured<Logs>(r), isError: r.isError === true };
  };
  return { logs };
}

for (const era of ["legacy", "modern"] as const) {
  describe(`get_job_logs over the whole log (${era})`, () => {
    test("grep finds a line near the start of a 1 MiB+ log, and one in the middle, with line numbers", async () => {
      const { logs } = await finishedJob(era);
      const first = await logs({ grep: "line 000001" });
      expect(first.body.stdout_bytes).toBeGreaterThan(1 << 20);
      expect(first.body.stdout).toBe(
        "1:line 000001 build output build output build output build output ok\n",
      );
      expect(first.body.stdout_page).toMatchObject({ matches_total: 1, lines: 1 });
      expect(first.text).toContain("1 of 1 matching lines in the whole log");
      const middle = await logs({ grep: "ERROR" });
      expect(middle.body.stdout).toBe("8000:line 008000 ERROR in the middle\n");
    }, 30_000);

    test("an absent pattern is absent from the whole log, said plainly", async () => {
      const { logs } = await finishedJob(era);
      const none = await logs({ grep: "no such line" });
      expect(none.body.stdout).toBe("");
      expect(none.body.stdout_page?.matches_total).toBe(0);
      expect(none.text).toContain('no line matches "no such line" in the whole log');
      expect(none.text).not.toContain("yet");
    }, 30_000);

    test("pages stay within the budget, say what was left out, and their cursors lead on", async () => {
      const { logs } = await finishedJob(era);
      const many = await logs({ grep: "build output" });
      expect(Buffer.byteLength(many.body.stdout ?? "")).toBeLessThanOrEqual(4096);
      const page = many.body.stdout_page as Page;
      expect(page.matches_total).toBe(15_999);
      expect(page.last_line).toBe(16_000);
      expect(many.body.truncated).toBe(true);
      expect(many.text).toContain(`to_line ${page.next_to_line}`);
      const earlier = await logs({ grep: "build output", to_line: page.next_to_line });
      expect((earlier.body.stdout_page as Page).last_line).toBe(page.next_to_line as number);

      const head = await logs({ head: 3 });
      expect(
        head.body.stdout
          ?.split("\n")
          .slice(0, 3)
          .map((l) => l.slice(0, 11)),
      ).toEqual(["line 000001", "line 000002", "line 000003"]);
      expect(head.body.stdout_page?.next_from_line).toBe(4);
      const range = await logs({ from_line: 7999, to_line: 8001 });
      expect(range.body.stdout?.split("\n")[1]).toBe("line 008000 ERROR in the middle");
      const on = await logs({ from_line: 100 });
      const onPage = on.body.stdout_page as Page;
      expect(Buffer.byteLength(on.body.stdout ?? "")).toBeLessThanOrEqual(4096);
      expect(onPage.first_line).toBe(100);
      expect(onPage.next_from_line).toBe((onPage.last_line as number) + 1);
      expect(on.text).toContain(`from_line ${onPage.next_from_line}`);
    }, 30_000);

    test("the advertised schema has the paging arguments, each with a description", async () => {
      const box = makeSandbox();
      cleanups.push(box.remove);
      const conn = await connectStdio(era, box.env, box.root);
      cleanups.push(conn.close);
      const tool = (await conn.client.listTools()).tools.find((t) => t.name === "get_job_logs");
      if (!tool) throw new Error("get_job_logs is not listed");
      const props = (
        tool.inputSchema as unknown as { properties: Record<string, { type: string; description?: string }> }
      ).properties;
      for (const key of ["head", "from_line", "to_line", "tail_lines", "max_bytes"]) {
        expect(["integer", "number"]).toContain(props[key]?.type as string);
        expect(props[key]?.description?.length ?? 0).toBeGreaterThan(10);
      }
      expect(props.grep?.description).toContain("whole log");
      expect(tool.description).toContain("next_from_line");
    }, 30_000);

    test("bad paging arguments are refused naming them", async () => {
      const { logs } = await finishedJob(era);
      const both = await logs({ head: 2, tail_lines: 2 });
      expect(both.isError).toBe(true);
      expect((await logs({ from_line: 0 })).text).toContain("from_line");
      const backwards = await logs({ from_line: 9, to_line: 3 });
      expect(backwards.text).toContain("ends before it starts");
      const bad = await logs({ grep: "\\d+" });
      expect(bad.text).toContain("[0-9]");
    }, 30_000);
  });
}
