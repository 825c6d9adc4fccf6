// The MCP request line splitter: whole lines pass through across chunk boundaries; an oversized line is
// dropped whole and reported with the request id read from either end of it.
import { describe, expect, test } from "bun:test";
import { RequestLines, requestIdFromEdges } from "../../src/mcp/request-lines.ts";

function feed(limit: number, chunks: string[]) {
  const lines: string[] = [];
  const oversized: { bytes: number; id: string | number | null }[] = [];
  const r = new RequestLines(
    (l) => lines.push(l.toString()),
    (bytes, id) => oversized.push({ bytes, id }),
    limit,
  );
  for (const c of chunks) r.push(Buffer.from(c));
  return { lines, oversized };
}

describe("RequestLines", () => {
  test("lines split across chunks and several lines in one chunk come out whole", () => {
    const got = feed(100, ['{"a":', '1}\n{"b":2}\n{"c"', ":3}\n"]);
    expect(got.lines).toEqual(['{"a":1}\n', '{"b":2}\n', '{"c":3}\n']);
    expect(got.oversized).toEqual([]);
  });

  test("a line over the limit is dropped whole, the next line passes, and a line at the limit passes", () => {
    const big = `{"jsonrpc":"2.0","id":7,"method":"x","params":{"s":"${"y".repeat(80)}"}}`;
    const atLimit = `{"id":8,"s":"${"z".repeat(100 - 15)}"}`;
    expect(atLimit.length).toBe(100);
    const got = feed(100, [big.slice(0, 30), big.slice(30), "\n", atLimit, '\n{"ok":1}\n']);
    expect(got.oversized).toEqual([{ bytes: big.length, id: 7 }]);
    expect(got.lines).toEqual([`${atLimit}\n`, '{"ok":1}\n']);
  });

  test("an unterminated line is held, not passed on", () => {
    expect(feed(100, ['{"a":1}']).lines).toEqual([]);
  });
});

describe("requestIdFromEdges", () => {
  test("the id from the head after scalar members, or from the tail as last member", () => {
    expect(requestIdFromEdges('{"jsonrpc":"2.0","id":"r-1","method":"tools/call","params":{', "")).toBe(
      "r-1",
    );
    expect(
      requestIdFromEdges('{"method":"tools/call","params":{"a":"', 'xx"}},"jsonrpc":"2.0","id":42}'),
    ).toBe(42);
  });

  test("an id inside params is not taken for the request's", () => {
    expect(requestIdFromEdges('{"method":"m","params":{"id":5,"x":"', 'q"}}')).toBeNull();
    expect(requestIdFromEdges('{"method":"m","params":{"x":"', 'q","id":5}}')).toBeNull();
  });
});
