// SSH artifact collection without a host: the report parsers and the glob matcher, then the remote scripts run by
// real local shells (sh, dash, busybox sh, and busybox sh with only busybox utilities on PATH) on a temp tree,
// whose manifest must equal collectLocalArtifacts' for the same tree apart from `remote`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectLocalArtifacts } from "../../src/backends/local/artifacts-local.ts";
import {
  collectRemoteArtifacts,
  compareWalkOrder,
  decodeField,
  globMatcher,
  listingBounds,
  parseFilesReport,
  parseListReport,
  parseStat,
  type ScriptRunner,
} from "../../src/backends/ssh/ssh-artifacts.ts";
import type { ArtifactEntry } from "../../src/core/model/job.ts";
import { globStaticPrefix } from "../../src/core/results/artifacts.ts";
import { ARTIFACT_FILES, ARTIFACTS, script } from "../../src/wrapper/host-scripts.ts";
import { busyboxAppletDir } from "../helpers/busybox.ts";

const tmp = mkdtempSync(join(tmpdir(), "awl-ssh-artifacts-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

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

// ----- the scripts under real shells, compared with the local collector -----

const busyboxOnlyPath = () => busyboxAppletDir(join(tmp, "busybox-bin"));

interface ShellCase {
  name: string;
  argv: string[];
  path?: string;
}

const shells: ShellCase[] = [];
for (const name of ["sh", "dash", "bash"]) {
  const p = Bun.which(name);
  if (p) shells.push({ name, argv: [p, "-s"] });
}
const bb = Bun.which("busybox");
if (bb) {
  shells.push({ name: "busybox sh", argv: [bb, "sh", "-s"] });
  const path = busyboxOnlyPath();
  if (path) shells.push({ name: "busybox sh, busybox utilities only", argv: [bb, "sh", "-s"], path });
}
if (process.env.AWAITLESS_REQUIRE_ALL === "1" && !shells.some((s) => s.path)) {
  test("busybox is installed (AWAITLESS_REQUIRE_ALL=1)", () => {
    throw new Error("busybox is missing: apt-get install -y busybox dash");
  });
}

/** Runs the remote scripts with a local shell, as `sh -s` on a host would. */
function localRunner(shell: ShellCase, counter?: { runs: number }): ScriptRunner {
  return {
    async run(body, args) {
      if (counter) counter.runs++;
      const p = Bun.spawn(shell.argv, {
        stdin: Buffer.from(script(body, args)),
        stdout: "pipe",
        stderr: "pipe",
        env: shell.path ? { ...process.env, PATH: shell.path } : process.env,
      });
      const [stdout, stderr, code] = await Promise.all([
        new Response(p.stdout).arrayBuffer(),
        new Response(p.stderr).arrayBuffer(),
        p.exited,
      ]);
      return { code, signal: null, stdout: Buffer.from(stdout), stderr: Buffer.from(stderr) };
    },
  };
}

let cwd: string;
let outside: string;

function write(rel: string, content: string): void {
  const abs = join(cwd, rel);
  mkdirSync(join(abs, ".."), { recursive: true });
  writeFileSync(abs, content);
}

beforeAll(() => {
  const base = join(tmp, "tree");
  cwd = join(base, "job");
  outside = join(base, "outside");
  mkdirSync(cwd, { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.json"), '{"leak":true}');
  mkdirSync(join(outside, "job-like"));
  write("metrics.json", '{"loss":0.25}');
  write("bad.json", "{oops");
  write("big.json", JSON.stringify({ data: "x".repeat(300) }));
  write("notes.txt", "hello\n");
  write("results/a/r1.json", "[1]");
  write("results/a/b/r2.json", '{"n":2}');
  write("results/c/r3.txt", "3");
  write("results/.cache/r4.json", "{}");
  write("results/.top.json", "{}");
  write("out/x.json", "1");
  write("out/y.txt", "y");
  write("out/deep/z.bin", "z");
  write("with space.json", '{"s":1}');
  write("tab\there.json", '{"t":1}');
  write("new\nline.json", '{"n":1}');
  write("st*r.json", "2");
  write("back\\slash.json", "4");
  write("-dash.json", "5");
  write("üñí €.json", '"u"');
  write("dir\nwith newline/inner.json", "6");
  write("br{x}/q.json", "3");
  write("a-b", "ab");
  write("a/x", "ax");
  write("many/f0.txt", "0");
  write("many/f1.txt", "1");
  write("many/sub/f2.txt", "2");
  write("many/sub/f3.txt", "3");
  mkdirSync(join(cwd, "empty"));
  symlinkSync(join(outside, "secret.json"), join(cwd, "escape.json"));
  symlinkSync(outside, join(cwd, "outdir"));
  symlinkSync(join(cwd, "metrics.json"), join(cwd, "latest.json"));
  symlinkSync(join(cwd, "missing-target"), join(cwd, "dangling.json"));
  symlinkSync(join(cwd, "results"), join(cwd, "res-link"));
  symlinkSync("..", join(cwd, "up"));
  symlinkSync(join(cwd, "out"), join(cwd, "many", "to-out"));
  Bun.spawnSync(["mkfifo", join(cwd, "pipe.json")]);
  const t = new Date("2024-05-06T07:08:09.123Z");
  utimesSync(join(cwd, "notes.txt"), t, t);
  symlinkSync(cwd, join(base, "cwd-link"));
});

const DECLARATIONS = [
  "results/**/*.json",
  "**/*.json",
  "*.json",
  "{out,results}/*.json",
  "out",
  "out/",
  "./out/../notes.txt",
  "many",
  "results/.*.json",
  "results/**",
  "res-link/**/*.json",
  "outdir/*.json",
  "outdir",
  "escape.json",
  "dangling.json",
  "latest.json",
  "up/job/*.json",
  "../outside/secret.json",
  "out/../../outside/*.json",
  "empty",
  "nothing-here",
  "*.parquet",
  "st\\*r.json",
  "br\\{x\\}/*.json",
  "st*r.json",
  "with space.json",
  "pipe.json",
  "?otes.tx[tu]",
  "",
];

const localOnly = (entries: ArtifactEntry[]) => entries.map((e) => ({ ...e, remote: false }));

describe.each(shells.map((s) => [s.name, s] as const))("remote artifact scripts under %s", (_name, shell) => {
  const opts = { maxInlineBytes: 64 };

  test("the second round trip refuses a file whose directory became a symbolic link out of the cwd", async () => {
    // Between the listing and the read, results/ is replaced by a link to a directory outside with the same name.
    const root = join(tmp, `swap-${shell.name.replaceAll(" ", "-").replaceAll(",", "")}`);
    mkdirSync(join(root, "job", "res"), { recursive: true });
    mkdirSync(join(root, "elsewhere"));
    writeFileSync(join(root, "job", "res", "m.json"), "[1]");
    writeFileSync(join(root, "elsewhere", "m.json"), '{"secret":1}');
    const real = join(root, "job", "res", "m.json");
    const ask = () => localRunner(shell).run(ARTIFACT_FILES, ["64", "j", real]);
    expect(parseFilesReport((await ask()).stdout.toString(), 1)[0]?.status).toBe("json");
    renameSync(join(root, "job", "res"), join(root, "job", "res.old"));
    symlinkSync(join(root, "elsewhere"), join(root, "job", "res"));
    expect(parseFilesReport((await ask()).stdout.toString(), 1)[0]).toEqual({ status: "gone" });
  });

  test("the manifest equals the local collector's for every kind of declaration", async () => {
    const counter = { runs: 0 };
    const remote = await collectRemoteArtifacts(localRunner(shell, counter), cwd, DECLARATIONS, 64);
    const local = await collectLocalArtifacts(cwd, DECLARATIONS, opts);
    expect(remote.every((e) => e.remote)).toBe(true);
    expect(localOnly(remote)).toEqual(local);
    expect(counter.runs).toBe(2);
    // The tree really exercised what it is meant to.
    const by = (path: string, declared: string) =>
      remote.find((e) => e.path === path && e.declared_path === declared);
    expect(by("results/a/b/r2.json", "results/**/*.json")).toMatchObject({ exists: true, content: { n: 2 } });
    expect(by("new\nline.json", "*.json")).toMatchObject({ exists: true, content: { n: 1 } });
    expect(by("tab\there.json", "*.json")).toMatchObject({ exists: true });
    expect(by("with space.json", "with space.json")).toMatchObject({ content: { s: 1 } });
    expect(by("bad.json", "*.json")?.parse_error).toStartWith("invalid JSON");
    expect(by("big.json", "*.json")?.parse_error).toStartWith("too large to inline");
    expect(by("escape.json", "escape.json")?.reason).toContain("symbolic link");
    expect(by("outdir/secret.json", "outdir/*.json")?.reason).toContain("symbolic link");
    expect(by("up/job/metrics.json", "up/job/*.json")).toMatchObject({ exists: true });
    expect(by("notes.txt", "./out/../notes.txt")?.modified_at).toBe("2024-05-06T07:08:09.123Z");
    expect(by("pipe.json", "pipe.json")?.reason).toBe("not a regular file; not read");
  });

  test("absolute declarations, inside and outside the cwd", async () => {
    const decls = [join(cwd, "notes.txt"), join(cwd, "results", "*", "*.json"), join(outside, "secret.json")];
    const remote = await collectRemoteArtifacts(localRunner(shell), cwd, decls, 64);
    expect(localOnly(remote)).toEqual(await collectLocalArtifacts(cwd, decls, opts));
  });

  test("a cwd reached through a symbolic link confines on its real path", async () => {
    const linked = join(tmp, "tree", "cwd-link");
    const decls = ["notes.txt", "escape.json", "up/job/*.txt", join(linked, "*.txt")];
    const remote = await collectRemoteArtifacts(localRunner(shell), linked, decls, 64);
    expect(localOnly(remote)).toEqual(await collectLocalArtifacts(linked, decls, opts));
  });

  test("per-declaration limits cut directories and globs with the same note", async () => {
    const decls = ["many", "**/*.json", "many/**", "results/**/*.json"];
    const remote = await collectRemoteArtifacts(localRunner(shell), cwd, decls, 64, {
      maxEntriesPerDeclaration: 2,
    });
    const local = await collectLocalArtifacts(cwd, decls, { ...opts, maxEntriesPerDeclaration: 2 });
    expect(localOnly(remote)).toEqual(local);
    expect(remote.filter((e) => e.reason?.includes("more than 2 files"))).toHaveLength(3);
  });

  test("a listing cut on the host says so", async () => {
    const remote = await collectRemoteArtifacts(localRunner(shell), cwd, ["many"], 64, {
      maxListedPerDeclaration: 2,
    });
    const note = remote.find((e) => e.reason?.includes("more than 2 entries to examine on the host"));
    expect(note).toMatchObject({ path: "many/", declared_path: "many", exists: true });
  });

  test("a cwd that cannot be entered marks every declaration", async () => {
    const remote = await collectRemoteArtifacts(localRunner(shell), join(cwd, "no-such"), ["a", "b/*"], 64);
    expect(remote.map((e) => [e.path, e.exists, e.reason])).toEqual([
      ["a", false, `the job's working directory ${join(cwd, "no-such")} cannot be read (ENOENT)`],
      ["b/*", false, `the job's working directory ${join(cwd, "no-such")} cannot be read (ENOENT)`],
    ]);
  });

  test("the listing prunes what cannot match: dot entries and entries deeper than the pattern", async () => {
    const r = await localRunner(shell).run(ARTIFACTS, [cwd, "100", "results/*/*.json", "results", "2", "0"]);
    const report = parseListReport(r.stdout.toString());
    if ("error" in report) throw new Error(report.error);
    const subs = report.declarations[0]?.listing.map((e) => e.sub).sort();
    expect(subs).toEqual(["a", "a/b", "a/r1.json", "c", "c/r3.txt"]);
  });
});

// A host without stat, realpath and readlink: sizes from ls, whole seconds from date -r, hashes from
// `busybox sha256sum`, directories resolved with cd -P, and links to files refused as unresolvable.
describe.if(bb !== null)("remote artifact scripts on a host with few utilities", () => {
  test("the same sizes and hashes; what cannot be resolved is not read", async () => {
    const dir = busyboxAppletDir(
      join(tmp, "degraded-bin"),
      new Set(["stat", "realpath", "readlink", "sha256sum"]),
    )!;
    symlinkSync(bb as string, join(dir, "busybox"));
    const shell = { name: "degraded", argv: [bb as string, "sh", "-s"], path: dir };
    const decls = ["*.json", "out", "res-link/a/*.json"];
    const remote = await collectRemoteArtifacts(localRunner(shell), cwd, decls, 64);
    const local = await collectLocalArtifacts(cwd, decls, { maxInlineBytes: 64 });
    const key = (e: ArtifactEntry) => `${e.declared_path}<${e.path}`;
    const localBy = new Map(local.map((e) => [key(e), e]));
    expect(remote.map(key)).toEqual(local.map(key));
    for (const e of remote) {
      const l = localBy.get(key(e)) as ArtifactEntry;
      if (e.path === "latest.json" || e.path === "escape.json") {
        expect(e).toMatchObject({ exists: false, reason: "cannot be resolved (no realpath on the host)" });
        continue;
      }
      expect({ ...e, remote: false, modified_at: undefined }).toEqual({ ...l, modified_at: undefined });
      if (l.modified_at) expect(e.modified_at).toBe(`${l.modified_at.slice(0, 19)}.000Z`);
    }
  });
});

describe.if(Bun.which("dash") !== null)("remote artifact scripts with a find that lacks -exec {} +", () => {
  test("one shell per name gives the same manifest", async () => {
    const dir = join(tmp, "old-find-bin");
    mkdirSync(dir);
    const find = Bun.which("find") as string;
    writeFileSync(
      join(dir, "find"),
      `#!/bin/sh\nfor a; do last=$a; done\n[ "$last" = + ] && { echo "find: missing argument to -exec" >&2; exit 1; }\nexec ${find} "$@"\n`,
      { mode: 0o755 },
    );
    const shell = {
      name: "dash",
      argv: [Bun.which("dash") as string, "-s"],
      path: `${dir}:${process.env.PATH}`,
    };
    const decls = ["**/*.json", "out"];
    const remote = await collectRemoteArtifacts(localRunner(shell), cwd, decls, 64);
    expect(localOnly(remote)).toEqual(await collectLocalArtifacts(cwd, decls, { maxInlineBytes: 64 }));
  });
});
