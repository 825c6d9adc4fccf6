import { describe, expect, test } from "bun:test";
import type { ArtifactEntry } from "../../src/core/model/job.ts";
import {
  compareArtifacts,
  isJsonArtifactPath,
  parseArtifactContent,
  parsedResults,
  redactJsonStrings,
} from "../../src/core/results/artifacts.ts";
import { REDACTED, Redactor } from "../../src/core/util/redact.ts";

const enc = new TextEncoder();
const entry = (path: string, extra: Partial<ArtifactEntry> = {}): ArtifactEntry => ({
  path,
  declared_path: path,
  exists: true,
  remote: false,
  ...extra,
});

describe("parseArtifactContent", () => {
  test("parses a .json file within the bound", () => {
    expect(parseArtifactContent("out/metrics.json", enc.encode('{"acc":0.9,"n":[1,2]}'), 100)).toEqual({
      content: { acc: 0.9, n: [1, 2] },
    });
  });

  test("accepts upper-case extensions and a byte-order mark", () => {
    expect(parseArtifactContent("R.JSON", enc.encode("\uFEFF[true]"), 100)).toEqual({ content: [true] });
  });

  test("a file exactly at the bound is parsed; one byte over is not", () => {
    const bytes = enc.encode('"abcd"');
    expect(parseArtifactContent("x.json", bytes, bytes.length)).toEqual({ content: "abcd" });
    expect(parseArtifactContent("x.json", bytes, bytes.length - 1)).toEqual({
      parse_error: `too large to inline (${bytes.length} bytes > ${bytes.length - 1})`,
    });
  });

  test("invalid JSON gives a parse_error saying so", () => {
    const out = parseArtifactContent("bad.json", enc.encode("{not json"), 100);
    expect("parse_error" in out && out.parse_error.startsWith("invalid JSON: ")).toBe(true);
    expect("content" in out).toBe(false);
  });

  test("invalid UTF-8 gives a parse_error", () => {
    expect(parseArtifactContent("b.json", Uint8Array.from([0x22, 0xff, 0x22]), 100)).toEqual({
      parse_error: "not valid UTF-8",
    });
  });

  test("a JSON null is content, not absence", () => {
    expect(parseArtifactContent("n.json", enc.encode("null"), 100)).toEqual({ content: null });
  });

  test("other files contribute nothing", () => {
    expect(parseArtifactContent("log.txt", enc.encode("{}"), 100)).toEqual({});
    expect(parseArtifactContent("data.jsonl", enc.encode("{}"), 100)).toEqual({});
    expect(isJsonArtifactPath("a.json.gz")).toBe(false);
  });
});

describe("parsedResults", () => {
  test("an empty object when no artifact has object content", () => {
    expect(parsedResults([])).toEqual({});
    expect(
      parsedResults([entry("a.txt", { size_bytes: 3 }), entry("b.json", { parse_error: "invalid JSON: x" })]),
    ).toEqual({});
    expect(parsedResults([entry("n.json", { content: null })])).toEqual({});
    expect(parsedResults([entry("z.json", { content: 0 })])).toEqual({});
    expect(parsedResults([entry("l.json", { content: [1, 2] })])).toEqual({});
  });

  test("a single JSON object artifact gives its content (as Awaitless 0.8 did)", () => {
    expect(parsedResults([entry("a.txt"), entry("m.json", { content: { ok: true } })])).toEqual({ ok: true });
  });

  test("several merge their top-level keys in manifest order, the later value winning", () => {
    expect(
      parsedResults([
        entry("a/m.json", { content: { a: 1, shared: "first" } }),
        entry("b.json", { content: [1] }),
        entry("c.json", { content: { c: 3, shared: "second" } }),
        entry("d.txt"),
      ]),
    ).toEqual({ a: 1, c: 3, shared: "second" });
  });

  test("a __proto__ key is a plain key", () => {
    const content = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as unknown;
    const merged = parsedResults([entry("p.json", { content })]);
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.keys(merged)).toEqual(["__proto__", "x"]);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  test("missing entries never contribute", () => {
    expect(parsedResults([entry("gone.json", { exists: false, content: { a: 1 } })])).toEqual({});
  });
});

describe("redactJsonStrings", () => {
  test("redacts string values and keys at any depth and leaves other values", () => {
    const red = new Redactor(["topsecret"]);
    expect(
      redactJsonStrings({ k: "x topsecret", n: 1, a: [{ topsecret: "topsecret" }, null, true] }, red),
    ).toEqual({
      k: `x ${REDACTED}`,
      n: 1,
      a: [{ [REDACTED]: REDACTED }, null, true],
    });
  });

  test("keys that redact alike are all kept, the later ones numbered", () => {
    const red = new Redactor(["topsecret", "othersecret"]);
    expect(redactJsonStrings({ topsecret: 1, othersecret: 2, plain: 3 }, red)).toEqual({
      [REDACTED]: 1,
      [`${REDACTED} (2)`]: 2,
      plain: 3,
    });
  });
});

describe("compareArtifacts", () => {
  test("orders by path, then declared path, by code unit", () => {
    const list = [
      entry("b"),
      entry("a/b"),
      entry("a.txt"),
      { ...entry("a.txt"), declared_path: "*.txt" },
      entry("B"),
    ];
    expect(list.sort(compareArtifacts).map((e) => `${e.path}<${e.declared_path}`)).toEqual([
      "B<B",
      "a.txt<*.txt",
      "a.txt<a.txt",
      "a/b<a/b",
      "b<b",
    ]);
  });
});
