// Byte budgets through the binary and the official client: tools/list, a quick run, get_job_logs, no text repeating the JSON.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Era } from "./harness.ts";
import { connectStdio, makeSandbox } from "./stdio-client.ts";

type Json = Record<string, unknown>;
type Conn = Awaited<ReturnType<typeof connectStdio>>;

/** The JSON-RPC response line the client received for the request with this id (bytes as on the pipe). */
function responseBytes(conn: Conn, method: string): { bytes: number; message: Json } {
  const sent = conn.tap.log.filter((e) => e.dir === ">>" && e.message.method === method).at(-1);
  const id = sent?.message.id;
  const got = conn.tap.log.find((e) => e.dir === "<<" && e.message.id === id && "result" in e.message);
  if (got === undefined) throw new Error(`no response to ${method}`);
  return { bytes: Buffer.byteLength(JSON.stringify(got.message)), message: got.message };
}

/** Every string of at least `min` characters inside a JSON value (the candidates a text could repeat). */
function longStrings(value: unknown, min: number, out: string[] = []): string[] {
  if (typeof value === "string") {
    for (const line of value.split("\n")) if (line.trim().length >= min) out.push(line.trim());
  } else if (Array.isArray(value)) for (const item of value) longStrings(item, min, out);
  else if (value !== null && typeof value === "object")
    for (const item of Object.values(value)) longStrings(item, min, out);
  return out;
}

function texts(result: Json): string[] {
  const content = (result.content as Array<{ type: string; text?: string }>) ?? [];
  return content.filter((c) => c.type === "text").map((c) => c.text ?? "");
}

for (const era of ["legacy", "modern"] as Era[]) {
  describe(`byte budgets (${era})`, () => {
    const box = makeSandbox();
    let conn: Conn;
    beforeAll(async () => {
      conn = await connectStdio(era, box.env, box.root);
    });
    afterAll(async () => {
      await conn?.close();
      box.remove();
    });

    test("tools/list fits in 8 KiB (and the ~110 B keep_leftovers costs) and every tool still says when and when not to use it", async () => {
      const { tools } = await conn.client.listTools();
      const { bytes } = responseBytes(conn, "tools/list");
      // measured 8 149 B (2026 era) before keep_leftovers, a launch argument of every launch tool, added 108 B
      expect(bytes).toBeLessThanOrEqual(8192 + 128);
      expect(tools.length).toBeGreaterThanOrEqual(11);
      for (const tool of tools) {
        expect({
          tool: tool.name,
          when: /\b(use|default for)\b/i.test(tool.description ?? ""),
        }).toEqual({
          tool: tool.name,
          when: true,
        });
        expect({ tool: tool.name, whenNot: /\bnot (for|needed)\b/i.test(tool.description ?? "") }).toEqual({
          tool: tool.name,
          whenNot: true,
        });
      }
    });

    test("a quick successful run: full structuredContent, a one-line text that does not repeat it, no link", async () => {
      await conn.client.callTool({ name: "run", arguments: { command: ["echo", "hi"] } });
      const { bytes, message } = responseBytes(conn, "tools/call");
      const result = message.result as Json;
      const structured = result.structuredContent as Json;
      // structuredContent stays the full documented result (PROTOCOL.md); the text takes at most 100 bytes, and an
      // inline answer, which holds the whole result, has no resource link (measured: 943 B legacy, 1 053 B 2026;
      // structuredContent alone is 795 B; then leftovers and resources, which every terminal result has, added
      // about 190 B: 1 137 B legacy, 1 247 B 2026).
      expect(Buffer.byteLength(JSON.stringify(result.content))).toBeLessThanOrEqual(100);
      expect(JSON.stringify(result.content)).not.toContain("resource_link");
      expect(bytes).toBeLessThanOrEqual(era === "legacy" ? 1200 : 1320);
      expect(structured.state).toBe("succeeded");
      expect(structured.exit_code).toBe(0);
      expect(structured.stdout_tail).toBe("hi\n");
      const text = texts(result).join("\n");
      expect(text.split("\n").length).toBe(1);
      expect(text).toContain("succeeded");
      for (const s of longStrings(structured, 24)) if (s !== structured.job_id) expect(text).not.toContain(s);
    });

    test("get_job_logs sends the log once: the text does not repeat structuredContent's lines", async () => {
      const lines = Array.from({ length: 40 }, (_, i) => `log line number ${i} with some words`).join("\n");
      const ran = await conn.client.callTool({
        name: "run",
        arguments: {
          command: [
            "sh",
            "-c",
            `printf '%s\\n' ${lines
              .split("\n")
              .map((l) => `'${l}'`)
              .join(" ")}`,
          ],
        },
      });
      const jobId = (ran.structuredContent as Json).job_id as string;
      await conn.client.callTool({ name: "get_job_logs", arguments: { job_id: jobId } });
      const { message } = responseBytes(conn, "tools/call");
      const result = message.result as Json;
      expect((result.structuredContent as Json).stdout).toContain("log line number 39");
      const text = texts(result).join("\n");
      expect(text).not.toContain("log line number 3 ");
      expect(text).toContain("stdout");
    });

    test("a successful run whose stdout says little shows a short stderr tail in its text", async () => {
      await conn.client.callTool({
        name: "run",
        arguments: { command: ["sh", "-c", "echo 'compiled 3 files with 2 warnings' >&2"] },
      });
      const { message } = responseBytes(conn, "tools/call");
      const text = texts(message.result as Json).join("\n");
      expect(text).toContain("compiled 3 files with 2 warnings");
    });
  });
}
