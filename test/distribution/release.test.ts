// build/release.ts: header checks, SHA256SUMS format, and (gated: heavy) one command building the targets: every
// target with the publishing compression with AWAITLESS_RELEASE_TEST=1 (before a release), two in CI
// (AWAITLESS_REQUIRE_ALL=1: the native build and a cross one, the same code path for each target) with `--fast`
// compression: xz -6 of each binary took minutes of a busy 2-core machine; the path is the same, only the preset.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  assetName,
  checkBinary,
  renderSums,
  selectTargets,
  sniffBinary,
  TARGETS,
  unknownArgs,
} from "../../build/release.ts";
import { DEV_BINARY, ROOT, requireDevBinary } from "./release-fixture.ts";

const EVERY_TARGET = process.env.AWAITLESS_RELEASE_TEST === "1";
const BUILD_TARGETS = EVERY_TARGET || process.env.AWAITLESS_REQUIRE_ALL === "1";
/** What the gated test builds: every target before a release, else the native one and a cross one. */
const BUILT = EVERY_TARGET ? TARGETS : selectTargets("linux-x64,darwin-arm64");
const target = (name: string) => TARGETS.find((t) => t.name === name)!;

describe("release helpers", () => {
  test("the dev build is read as an x86-64 glibc ELF and matches linux-x64 only", () => {
    requireDevBinary();
    const f = sniffBinary(readFileSync(DEV_BINARY));
    expect(f).toEqual({ format: "elf", arch: "x64", interpreter: "/lib64/ld-linux-x86-64.so.2" });
    expect(checkBinary(target("linux-x64"), f)).toBeUndefined();
    expect(checkBinary(target("linux-x64-musl"), f)).toContain("expected a musl interpreter");
    expect(checkBinary(target("linux-arm64"), f)).toContain("expected arm64, got x64");
    expect(checkBinary(target("darwin-x64"), f)).toContain("expected macho, got elf");
  });

  test("Mach-O headers and non-executables", () => {
    const macho = new Uint8Array(32);
    new DataView(macho.buffer).setUint32(0, 0xfeedfacf, true);
    new DataView(macho.buffer).setUint32(4, 0x0100000c, true);
    expect(sniffBinary(macho)).toEqual({ format: "macho", arch: "arm64" });
    expect(() => sniffBinary(new TextEncoder().encode("#!/bin/sh\necho hi\n".padEnd(64)))).toThrow(
      /not an ELF or 64-bit Mach-O/,
    );
  });

  test("SHA256SUMS is sha256sum's format, sorted; targets are named and validated", () => {
    expect(
      renderSums([
        { file: "b", sha256: "2".repeat(64) },
        { file: "a", sha256: "1".repeat(64) },
      ]),
    ).toBe(`${"1".repeat(64)}  a\n${"2".repeat(64)}  b\n`);
    expect(selectTargets("darwin-arm64,linux-x64").map(assetName)).toEqual([
      "awaitless-linux-x64",
      "awaitless-darwin-arm64",
    ]);
    expect(() => selectTargets("linux-riscv64")).toThrow(
      /unknown target\(s\) linux-riscv64; the targets are/,
    );
    expect(TARGETS.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        "linux-x64",
        "linux-x64-baseline",
        "linux-arm64",
        "linux-x64-musl",
        "linux-arm64-musl",
        "darwin-arm64",
        "darwin-x64",
      ]),
    );
  });
});

test("an argument the script does not take is refused by name before anything is built", () => {
  expect(unknownArgs(["--outdir=/x", "--only=linux-x64", "--fast"])).toEqual([]);
  const r = Bun.spawnSync(
    [process.execPath, join(ROOT, "build", "release.ts"), "--fats", "--outdir=/nonexistent/x"],
    {
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  expect(r.exitCode).toBe(2);
  expect(r.stderr.toString()).toContain("unknown argument(s) --fats");
  expect(r.stderr.toString()).toContain("[--fast]");
});

test("docs/install.md lists every asset and names the darwin builds as untested", () => {
  const doc = readFileSync(join(ROOT, "docs", "install.md"), "utf8");
  for (const t of TARGETS) expect(doc).toContain(`| \`${assetName(t)}\` |`);
  const untested = doc.slice(doc.indexOf("**Untested**"));
  for (const name of ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64-musl"])
    expect(untested).toContain(name);
});

describe.if(BUILD_TARGETS)(
  "release builds (every target with AWAITLESS_RELEASE_TEST=1; two with AWAITLESS_REQUIRE_ALL=1)",
  () => {
    const out = mkdtempSync(join(tmpdir(), "awl-release-"));
    afterAll(() => rmSync(out, { recursive: true, force: true }));

    test("one command builds the targets into a directory with SHA256SUMS and a size report", async () => {
      const only = EVERY_TARGET ? [] : [`--only=${BUILT.map((t) => t.name).join(",")}`, "--fast"];
      const proc = Bun.spawn(
        [process.execPath, join(ROOT, "build", "release.ts"), `--outdir=${out}`, ...only],
        {
          cwd: ROOT,
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      const [code, stdout, stderr] = await Promise.all([
        proc.exited,
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
      ]);
      expect(code, stderr).toBe(0);
      const files = readdirSync(out).sort();
      expect(files).toEqual(
        [
          ...BUILT.map(assetName),
          ...BUILT.map((t) => `${assetName(t)}.gz`),
          ...BUILT.map((t) => `${assetName(t)}.xz`),
          "SHA256SUMS",
        ].sort(),
      );
      for (const t of BUILT) {
        expect(stdout).toMatch(new RegExp(`${assetName(t)}\\s+\\d+\\.\\d MiB\\s+[0-9a-f]{64}`));
        expect(checkBinary(t, sniffBinary(readFileSync(join(out, assetName(t)))))).toBeUndefined();
      }
      const check = Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: out, stdout: "pipe" });
      expect(check.exitCode).toBe(0);
      expect(check.stdout.toString().match(/: OK$/gm)?.length).toBe(3 * BUILT.length);
      // Each .xz unpacks to its binary with busybox's unxz too (what an Alpine login node has).
      const bb = Bun.spawnSync([
        "sh",
        "-c",
        'busybox unxz -c < "$1.xz" | cmp - "$1"',
        "sh",
        join(out, "awaitless-linux-x64"),
      ]);
      expect(bb.exitCode).toBe(0);
      for (const native of BUILT.some((t) => t.name === "linux-x64-baseline")
        ? ["linux-x64", "linux-x64-baseline"]
        : ["linux-x64"]) {
        const v = Bun.spawnSync([join(out, `awaitless-${native}`), "version"], { stdout: "pipe" });
        expect(v.stdout.toString()).toMatch(/^awaitless \d+\.\d+\.\d+/);
      }
    }, 600_000);
  },
);
