import { describe, expect, test } from "bun:test";
import { canonicalJson, sha256Hex } from "../../src/core/results/canonical-json.ts";

describe("canonicalJson", () => {
  test("sorts keys recursively and drops whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: "x" } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  test("the same value built in a different key order gives the same text", () => {
    const one = { argv: ["make", "test"], env: { B: "2", A: "1" }, cwd: "/tmp/x" };
    const two = { cwd: "/tmp/x", env: { A: "1", B: "2" }, argv: ["make", "test"] };
    expect(canonicalJson(one)).toBe(canonicalJson(two));
  });

  test("orders keys by code unit, not locale", () => {
    expect(canonicalJson({ b: 1, B: 2, a: 3, _: 4, "10": 5, "9": 6 })).toBe(
      '{"10":5,"9":6,"B":2,"_":4,"a":3,"b":1}',
    );
  });

  test("drops undefined fields and keeps nulls", () => {
    expect(canonicalJson({ a: undefined, b: null, c: () => 1 })).toBe('{"b":null}');
  });

  test("array holes, undefined and non-finite numbers become null", () => {
    expect(canonicalJson([undefined, Number.NaN, Number.POSITIVE_INFINITY, 1.5, -0, 1e21])).toBe(
      "[null,null,null,1.5,0,1e+21]",
    );
  });

  test("escapes strings as JSON.stringify does", () => {
    expect(canonicalJson({ 'k"ey': 'q"\n\u2028é' })).toBe(JSON.stringify({ 'k"ey': 'q"\n\u2028é' }));
  });

  test("honours toJSON", () => {
    expect(canonicalJson({ at: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)) })).toBe(
      '{"at":"2024-01-02T03:04:05.006Z"}',
    );
  });

  test("repeated (non-cyclic) references are fine; cycles and bigint throw", () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cycle/);
    expect(() => canonicalJson({ n: 1n })).toThrow(/bigint/);
    expect(() => canonicalJson(undefined)).toThrow(/no JSON form/);
  });

  test("scalars at the top level", () => {
    expect(canonicalJson("s")).toBe('"s"');
    expect(canonicalJson(null)).toBe("null");
    expect(canonicalJson(true)).toBe("true");
  });
});

describe("sha256Hex", () => {
  test("matches known digests", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  test("hashes strings as UTF-8, the same as their bytes", () => {
    expect(sha256Hex("héllo ✓")).toBe(sha256Hex(new TextEncoder().encode("héllo ✓")));
  });

  test("the hash of canonical JSON is stable across key order", () => {
    const h1 = sha256Hex(canonicalJson({ state: "failed", exit_code: 2, digest: ["x"] }));
    const h2 = sha256Hex(canonicalJson({ digest: ["x"], exit_code: 2, state: "failed" }));
    expect(h1).toBe(h2);
    expect(h1).toBe(sha256Hex('{"digest":["x"],"exit_code":2,"state":"failed"}'));
  });
});
