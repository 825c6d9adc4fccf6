// Text that is not text, request lines that are not JSON-RPC, bounded echoes and list rows: the pure parts.
import { describe, expect, test } from "bun:test";
import { AwaitlessError, boundedText } from "../../src/core/model/errors.ts";
import { decodeKeepingBadBytes, isUtf8 } from "../../src/core/util/utf8-text.ts";
import { boundedErrorResponse } from "../../src/mcp/echo-bounds.ts";
import { boundList, boundRow, LIST_ANSWER_BYTES, ROW_TEXT_CHARS } from "../../src/mcp/list-bounds.ts";
import { checkRequestLine } from "../../src/mcp/request-check.ts";
import { illFormedArgument } from "../../src/mcp/text-args.ts";

describe("decodeKeepingBadBytes", () => {
  test("valid UTF-8 decodes as usual; each bad byte becomes its own lone surrogate U+DC80–U+DCFF", () => {
    expect(decodeKeepingBadBytes(Buffer.from("héllo ✓ 𝄞"))).toBe("héllo ✓ 𝄞");
    for (const [bytes, want] of [
      [[0x61, 0xff, 0x62], "a\udcffb"],
      [[0xc3, 0x28], "\udcc3("], // a lead byte without its continuation
      [[0xc0, 0xaf], "\udcc0\udcaf"], // overlong "/"
      [[0xed, 0xa0, 0x80], "\udced\udca0\udc80"], // a UTF-16 surrogate encoded in UTF-8
      [[0xf4, 0x90, 0x80, 0x80], "\udcf4\udc90\udc80\udc80"], // past U+10FFFF
      [[0xe2, 0x9c], "\udce2\udc9c"], // cut short at the end
    ] as const) {
      const b = Buffer.from(bytes);
      expect(isUtf8(b)).toBe(false);
      const text = decodeKeepingBadBytes(b);
      expect(text).toBe(want);
      expect(text.isWellFormed()).toBe(false);
    }
  });
});

describe("checkRequestLine", () => {
  const line = (s: string | Buffer) => checkRequestLine(Buffer.isBuffer(s) ? s : Buffer.from(s));
  test("a JSON-RPC line passes as it is; blank lines are skipped", () => {
    const ok = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\r\n');
    expect(line(ok)).toEqual({ kind: "forward", line: ok });
    expect(line("  \r\n").kind).toBe("skip");
  });
  test("not JSON: -32700 with the id when the line's start shows it, else null", () => {
    const a = line('{"jsonrpc":"2.0","id":4,"method":"x"');
    expect(a).toMatchObject({ kind: "answer", code: -32700, id: 4 });
    expect(line("hello").kind === "answer" && line("hello")).toMatchObject({ id: null, code: -32700 });
  });
  test("JSON but not JSON-RPC: -32600 with its id", () => {
    expect(line('{"jsonrpc":"2.0","id":"a","method":5}')).toMatchObject({
      kind: "answer",
      code: -32600,
      id: "a",
    });
    expect(line("[1,2]")).toMatchObject({ kind: "answer", code: -32600, id: null });
  });
  test("bad bytes inside a string: forwarded with \\udcXX escapes, which parse back to the same lone surrogates", () => {
    const raw = Buffer.concat([
      Buffer.from(
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","arguments":{"name":"a',
      ),
      Buffer.from([0xff]),
      Buffer.from('"}}}\n'),
    ]);
    const v = line(raw);
    expect(v.kind).toBe("forward");
    const text = v.kind === "forward" ? v.line.toString() : "";
    expect(text).toContain("\\udcff");
    expect(JSON.parse(text).params.arguments.name).toBe("a\udcff");
  });
  test("a bad byte after a backslash or outside a string is not JSON", () => {
    const afterBackslash = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":2,"method":"a\\'),
      Buffer.from([0xff]),
      Buffer.from('"}'),
    ]);
    expect(line(afterBackslash)).toMatchObject({ kind: "answer", code: -32700 });
    const outside = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":3,'),
      Buffer.from([0xff]),
      Buffer.from('"method":"a"}'),
    ]);
    expect(line(outside)).toMatchObject({ kind: "answer", code: -32700, id: 3 });
  });
});

describe("illFormedArgument", () => {
  test("names the first string or key that is not text by its place", () => {
    expect(illFormedArgument({ name: "ok", cwd: "/x" })).toBeUndefined();
    expect(illFormedArgument({ name: "a\ud800" })).toBe("name");
    expect(illFormedArgument({ artifacts: ["a", "b\udfff"] })).toBe("artifacts[1]");
    expect(illFormedArgument({ env: { X: "\udc80" } })).toBe("env.X");
    expect(illFormedArgument({ env: { "A B": "\udc80" } })).toBe('env."A B"');
    expect(illFormedArgument({ env: { "K\ud800": "v" } })).toBe("a key of env");
    expect(illFormedArgument({ "\ud800": 1 })).toBe("an argument's name");
    // deep nesting is walked without recursion
    let deep: unknown = "\ud800";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(illFormedArgument({ x: deep })).toStartWith("x[0][0]");
  });
});

describe("bounded echoes", () => {
  test("an error keeps the start and the end of a long message, and bounds its hint and details", () => {
    const big = "x".repeat(1_000_000);
    const e = new AwaitlessError("invalid_argument", `bad queue name "${big}": use letters`, `not "${big}"`, {
      name: big,
      many: Array.from({ length: 1000 }, (_, i) => i),
    });
    expect(e.message.length).toBeLessThan(2_100);
    expect(e.message).toStartWith('bad queue name "xxx');
    expect(e.message).toEndWith('": use letters');
    expect(e.message).toContain("more characters left out");
    expect(e.hint.length).toBeLessThan(2_100);
    expect(JSON.stringify(e.toWire("mcp")).length).toBeLessThan(10_000);
    expect(boundedText("short")).toBe("short");
  });
  test("a JSON-RPC error answer's message and data are bounded; other messages pass untouched", () => {
    const long = "y".repeat(100_000);
    const answer = {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32602, message: `Tool ${long} not found`, data: { uri: long } },
    };
    const bounded = boundedErrorResponse(answer as never) as unknown as typeof answer;
    expect(JSON.stringify(bounded).length).toBeLessThan(5_000);
    expect(bounded.error.message).toEndWith(" not found");
    expect(bounded.id).toBe(1);
    const result = { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: long }] } };
    expect(boundedErrorResponse(result as never)).toBe(result as never);
  });
});

describe("list rows", () => {
  test("a long command is cut to its first characters, saying how much more there was", () => {
    const row = boundRow({ job_id: "j", argv: ["sh", "-c", "a".repeat(10_000), "tail"], cwd: "/w" });
    expect(row.argv.slice(0, 2)).toEqual(["sh", "-c"]);
    expect(row.argv.join("").length).toBeLessThan(ROW_TEXT_CHARS + 100);
    expect(row.argv.at(-1)).toBe("[1 more arguments, 9496 more characters]");
    expect((row as { cut_fields?: string[] }).cut_fields).toEqual(["argv"]);
    const fine = { job_id: "j", argv: ["true"], cwd: "/w" };
    expect(boundRow(fine)).toEqual(fine);
  });
  test("rows past the answer's budget are left out, newest kept", () => {
    const rows = Array.from({ length: 2000 }, (_, i) => ({
      job_id: `j${i}`,
      argv: ["x".repeat(400)],
      cwd: "/w",
    }));
    const list = boundList(rows, (r) => r.job_id);
    expect(list.rows[0]!.job_id).toBe("j0");
    expect(list.leftOut).toBe(2000 - list.rows.length);
    expect(list.leftOut).toBeGreaterThan(0);
    expect(JSON.stringify(list.rows).length).toBeLessThanOrEqual(LIST_ANSWER_BYTES);
  });
});
