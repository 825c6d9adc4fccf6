// The SSH artifact scripts under each shell a host may have (sh, dash, bash, busybox sh, and busybox sh with only
// busybox utilities on PATH), on a temp tree: their manifest equals collectLocalArtifacts' for the same tree apart from
// `remote`, also on a host with few utilities and with a find that lacks -exec {} +. The report parsers and the glob
// matcher alone: test/unit/ssh-artifacts.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectLocalArtifacts } from "../../src/backends/local/artifacts-local.ts";
import {
  collectRemoteArtifacts,
  parseFilesReport,
  parseListReport,
  type ScriptRunner,
} from "../../src/backends/ssh/ssh-artifacts.ts";
import type { ArtifactEntry } from "../../src/core/model/job.ts";
import { ARTIFACT_FILES, ARTIFACTS } from "../../src/wrapper/host-scripts.ts";
import { busyboxAppletDir } from "../helpers/busybox.ts";
import { type HostShell, hostShells, missingBusybox, runHostScript } from "../helpers/host-shells.ts";

const tmp = mkdtempSync(join(tmpdir(), "awl-ssh-artifacts-remote-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const shells = hostShells(tmp);
const bb = Bun.which("busybox");
const missing = missingBusybox(shells);
if (missing !== null) {
  test("busybox is installed (AWAITLESS_REQUIRE_ALL=1)", () => {
    throw new Error(missing);
  });
}

/** Runs the remote scripts with a local shell, as `sh -s` on a host would. */
function localRunner(shell: HostShell, counter?: { runs: number }): ScriptRunner {
  return {
    run(body, args) {
      if (counter) counter.runs++;
      return runHostScript(shell, body, args);
    },
  };
}

// ----- the scripts under real shells, compared with the local collector -----

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
