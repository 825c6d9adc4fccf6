// SSH artifact collection without a host: the report parsers and the glob matcher. The remote scripts under real
// shells, compared with the local collector: test/wrapper/ssh-artifacts-remote.test.ts.
import { describe, expect, test } from "bun:test";
import {
  compareWalkOrder,
  decodeField,
  globMatcher,
  listingBounds,
  parseFilesReport,
  parseListReport,
  parseStat,
} from "../../src/backends/ssh/ssh-artifacts.ts";
import { globStaticPrefix } from "../../src/core/results/artifacts.ts";

describe("pure parts", () => {
  test("static prefix: the segments before the first one with glob syntax", () => {
    expect(globStaticPrefix("results/**/*.json")).toBe("results");
    expect(globStaticPrefix("*.json")).toBe(".");
    expect(globStaticPrefix("a/b/c?.txt")).toBe("a/b");
    expect(globStaticPrefix("a/{b,c}/d.json")).toBe("a");
    expect(globStaticPrefix("a/b\\{x\\}/d.json")).toBe("a");
    expect(globStaticPrefix("/h/p/*.json")).toBe("/h/p");
    expect(globStaticPrefix("/*.json")).toBe("/");
  });

  test("listing bounds: depth unless ** (or a brace holding '/'), dots only when a segment starts with one", () => {
    expect(listingBounds("out/*/*.json", "out")).toEqual({ depth: "2", dots: false });
    expect(listingBounds("results/**/*.json", "results")).toEqual({ depth: "", dots: false });
    expect(listingBounds(".cache/.*.json", ".cache")).toEqual({ depth: "1", dots: true });
    expect(listingBounds("{a/b,c}/*.json", ".")).toEqual({ depth: "", dots: false });
    expect(listingBounds("/*.json", "/")).toEqual({ depth: "1", dots: false });
  });

  test("fields: none, plain, hex", () => {
    expect(decodeField("-")).toBeNull();
    expect(decodeField("pa b")).toBe("a b");
    expect(decodeField(`x${Buffer.from("a\nb\tc").toString("hex")}`)).toBe("a\nb\tc");
    expect(() => decodeField("zz")).toThrow();
  });

  test("walk order is depth first by name, not plain string order", () => {
    expect(["a-b", "a/x", "a"].sort(compareWalkOrder)).toEqual(["a", "a/x", "a-b"]);
  });

  test("the matcher agrees with Bun.Glob.scan({dot: false}) on dot names and **", () => {
    const m = globMatcher("**/*.json");
    expect(m("a/b/y.json")).toBe(true);
    expect(m("y.json")).toBe(true);
    expect(m(".h/z.json")).toBe(false);
    expect(m("a/.d.json")).toBe(false);
    expect(globMatcher(".*.json")(".top.json")).toBe(true);
    expect(globMatcher("**/.h/*.json")(".h/z.json")).toBe(true);
    expect(globMatcher("{.h,a}/*.json")(".h/z.json")).toBe(false);
    expect(globMatcher("a/**")("a")).toBe(false);
    expect(globMatcher("a/**")("a/b/c")).toBe(true);
    expect(globMatcher("{a,b}/*.json")("b/x.json")).toBe(true);
    expect(globMatcher("st\\*r.json")("st*r.json")).toBe(true);
  });

  test("list report: sections per declaration; rows with kinds, targets, real paths", () => {
    const r = parseListReport(
      [
        "B\tp/h/job",
        "@\tok\tp**/*.json\tp.",
        "L\t-\t-\t-",
        "P\td\td\tp/h/job",
        "f\t-\t-\tpa/x.json",
        `l\tf\tp/etc/passwd\tx${Buffer.from("new\nline.json").toString("hex")}`,
        "@\tA",
        "",
      ].join("\n"),
    );
    if ("error" in r) throw new Error("unexpected");
    expect(r.base).toBe("/h/job");
    expect(r.declarations).toHaveLength(2);
    expect(r.declarations[0]?.prefix).toBe(".");
    expect(r.declarations[0]?.listing).toEqual([
      { kind: "f", target: "-", real: null, sub: "a/x.json" },
      { kind: "l", target: "f", real: "/etc/passwd", sub: "new\nline.json" },
    ]);
    expect(r.declarations[1]?.outside).toBe(true);
    expect(parseListReport("E\tENOENT\n")).toEqual({ error: "ENOENT" });
    expect(() => parseListReport("junk\n")).toThrow();
  });

  test("stat text: seconds and the fraction from %y, or seconds only", () => {
    expect(parseStat("12 1700000000 2023-11-14 22:13:20.123456789 +0000")).toEqual({
      size: 12,
      mtime: "2023-11-14T22:13:20.123Z",
    });
    expect(parseStat("12 1700000000")).toEqual({ size: 12, mtime: "2023-11-14T22:13:20.000Z" });
    expect(parseStat("12 ")).toEqual({ size: 12, mtime: null });
    expect(parseStat("")).toBeNull();
  });

  test("a report without its start marker, and a listing without an absolute base, are refused", () => {
    expect(() => parseFilesReport("1 hash\n", 1)).toThrow(/no start marker/);
    expect(() => parseListReport("B\tp\n")).toThrow(/no physical path/);
    expect(() => parseListReport("B\tprelative\n")).toThrow(/no physical path/);
    expect(parseListReport("motd line\nB\tp/home/u\n")).toEqual({ base: "/home/u", declarations: [] });
  });

  test("files report: JSON heads in hex, hashes, gone and unreadable files", () => {
    const sha = "b".repeat(64);
    const out = [
      "Welcome to the cluster! (a login shell's banner, before the report)",
      "3 gone",
      "#awaitless-files",
      "1 json",
      "6 1700000000 2023-11-14 22:13:20.5 +0000",
      " 5b 31 2c 0a",
      " 32 5d",
      ".",
      `${"c".repeat(64)}  -`,
      "2 hash",
      "9 1700000001",
      `SHA2-256(stdin)= ${sha}`,
      "3 gone",
      "4 unreadable",
      "3 1700000002",
      "5 hash",
      "",
      "",
      "",
    ].join("\n");
    const r = parseFilesReport(out, 6);
    expect(r[0]).toEqual({
      status: "json",
      size: 6,
      mtime: "2023-11-14T22:13:20.500Z",
      sha256: "c".repeat(64),
      head: new Uint8Array(Buffer.from("[1,\n2]")),
    });
    expect(r[1]).toMatchObject({ status: "hash", size: 9, sha256: sha });
    expect(r[2]).toEqual({ status: "gone" });
    expect(r[3]).toMatchObject({ status: "unreadable", size: 3 });
    expect(r[4]).toEqual({ status: "gone" }); // stat failed: it vanished meanwhile
    expect(r[5]).toEqual({ status: "gone" }); // never answered
    expect(() => parseFilesReport("#awaitless-files\n1 json\n6 1\n 5b", 1)).toThrow("cut short");
    expect(() => parseFilesReport("#awaitless-files\n7 hash\n", 1)).toThrow("garbled");
  });
});
