// install.sh end to end: real release binaries from a loopback server, under dash and busybox sh.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type FakeRelease,
  fileHash,
  INSTALL_SH,
  type ReleaseServer,
  releaseCache,
  serveReleases,
  writeReleaseTree,
} from "./release-fixture.ts";

const T = 60_000;
const SHELLS = { dash: ["/usr/bin/dash"], busybox: ["/usr/bin/busybox", "sh"] } as const;
const BUSYBOX_APPLETS =
  "sh wget sha256sum cp mkdir mv ln chmod awk grep cut sed mktemp rm uname cat printf tr".split(" ");

let scratch: string;
let cache: string;
let server: ReleaseServer;
let releases: Record<string, FakeRelease>;
let asset: { x64: string; baseline: string; musl: string; x64gz: string; baselineGz: string; x64xz: string };
let busyboxGzPath: string;
let busyboxXzPath: string;
let busyboxOnlyPath: string;
const HAVE_XZ = Bun.which("xz") !== null;
let cpuAvx2: string;
let cpuOld: string;
let busyboxPath: string;
let muslStub: string;
const MUSL_RUNS = existsSync("/lib/ld-musl-x86_64.so.1") && existsSync("/usr/lib/libstdc++.so.6");

beforeAll(() => {
  cache = releaseCache(["linux-x64", "linux-x64-baseline", "linux-x64-musl"]);
  asset = {
    x64: join(cache, "awaitless-linux-x64"),
    baseline: join(cache, "awaitless-linux-x64-baseline"),
    musl: join(cache, "awaitless-linux-x64-musl"),
    x64gz: "",
    baselineGz: "",
    x64xz: "",
  };
  scratch = mkdtempSync(join(tmpdir(), "awl-install-"));
  cpuAvx2 = join(scratch, "cpuinfo-avx2");
  cpuOld = join(scratch, "cpuinfo-old");
  writeFileSync(cpuAvx2, "processor\t: 0\nflags\t\t: fpu sse sse2 avx avx2 bmi2\n");
  writeFileSync(cpuOld, "processor\t: 0\nflags\t\t: fpu sse sse2 sse4_2 avx\n");
  // A stub `ldd` that answers like Alpine's (musl prints its banner on stderr and exits 1).
  muslStub = join(scratch, "musl-bin");
  mkdirSync(muslStub);
  writeFileSync(
    join(muslStub, "ldd"),
    "#!/bin/sh\necho 'musl libc (x86_64)' >&2\necho 'Version 1.2.5' >&2\nexit 1\n",
  );
  chmodSync(join(muslStub, "ldd"), 0o755);
  // A PATH with busybox applets only: no curl, no coreutils, no ldd.
  busyboxPath = join(scratch, "busybox-bin");
  mkdirSync(busyboxPath);
  for (const a of BUSYBOX_APPLETS) symlinkSync("/usr/bin/busybox", join(busyboxPath, a));
  // The same with busybox's gzip, to unpack the compressed assets.
  busyboxGzPath = join(scratch, "busybox-gz-bin");
  mkdirSync(busyboxGzPath);
  for (const a of [...BUSYBOX_APPLETS, "gzip"]) symlinkSync("/usr/bin/busybox", join(busyboxGzPath, a));
  asset.x64gz = join(scratch, "awaitless-linux-x64.gz");
  asset.baselineGz = join(scratch, "awaitless-linux-x64-baseline.gz");
  writeFileSync(asset.x64gz, Bun.gzipSync(readFileSync(asset.x64), { level: 1 }));
  writeFileSync(asset.baselineGz, Bun.gzipSync(readFileSync(asset.baseline), { level: 1 }));
  // An Alpine-like PATH: busybox applets with unxz and gzip; and one with only the busybox binary itself for xz.
  busyboxXzPath = join(scratch, "busybox-xz-bin");
  mkdirSync(busyboxXzPath);
  for (const a of [...BUSYBOX_APPLETS, "unxz", "gzip"])
    symlinkSync("/usr/bin/busybox", join(busyboxXzPath, a));
  busyboxOnlyPath = join(scratch, "busybox-only-bin");
  mkdirSync(busyboxOnlyPath);
  for (const a of [...BUSYBOX_APPLETS, "busybox"]) symlinkSync("/usr/bin/busybox", join(busyboxOnlyPath, a));
  const all = { "awaitless-linux-x64": asset.x64, "awaitless-linux-x64-baseline": asset.baseline };
  const withMusl = { ...all, "awaitless-linux-x64-musl": asset.musl };
  releases = {
    "0.1.0": { assets: withMusl },
    // A later release whose linux-x64 bytes differ (the baseline build), to see upgrades happen.
    "0.2.0": { assets: { "awaitless-linux-x64": asset.baseline } },
    // A release whose SHA256SUMS does not match the binary served.
    "6.6.6": { assets: all, sums: `${"0".repeat(64)}  awaitless-linux-x64\n` },
    // Releases with compressed assets: a good one, a tampered .gz, and a .gz that unpacks to other bytes.
    "0.3.0": { assets: { "awaitless-linux-x64": asset.x64, "awaitless-linux-x64.gz": asset.x64gz } },
    "0.3.1": {
      assets: { "awaitless-linux-x64": asset.x64, "awaitless-linux-x64.gz": asset.x64gz },
      sums: `${fileHash(asset.x64)}  awaitless-linux-x64\n${"0".repeat(64)}  awaitless-linux-x64.gz\n`,
    },
    "0.3.2": {
      assets: { "awaitless-linux-x64": asset.x64, "awaitless-linux-x64.gz": asset.baselineGz },
      sums: `${fileHash(asset.x64)}  awaitless-linux-x64\n${fileHash(asset.baselineGz)}  awaitless-linux-x64.gz\n`,
    },
  };
  server = serveReleases(releases, "0.1.0");
}, 180_000);

afterAll(() => {
  server?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

interface Run {
  code: number;
  stderr: string;
  home: string;
  bin: string;
}

async function install(
  shell: keyof typeof SHELLS,
  opts: { args?: string[]; env?: Record<string, string>; path?: string } = {},
): Promise<Run> {
  const home = mkdtempSync(join(scratch, "home-"));
  const proc = Bun.spawn([...SHELLS[shell], INSTALL_SH, ...(opts.args ?? [])], {
    cwd: home,
    env: {
      HOME: home,
      PATH: opts.path ?? (shell === "busybox" ? busyboxPath : "/usr/local/bin:/usr/bin:/bin"),
      AWAITLESS_DOWNLOAD_URL: server.url,
      AWAITLESS_CPUINFO: cpuAvx2,
      ...opts.env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  return { code, stderr, home, bin: join(home, ".local", "bin") };
}

const run = (bin: string, ...args: string[]) => {
  const r = Bun.spawnSync([join(bin, "awaitless"), ...args], { stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString() };
};
const requested = (name: string) => server.requests.filter((p) => p.endsWith(`/${name}`)).length;

for (const shell of Object.keys(SHELLS) as (keyof typeof SHELLS)[]) {
  // Registered only when it must fail, so a machine that has the shell shows no skipped test.
  if (!existsSync(SHELLS[shell][0]) && process.env.AWAITLESS_REQUIRE_ALL === "1") {
    test(`${shell} is installed (AWAITLESS_REQUIRE_ALL=1)`, () => {
      throw new Error(`${SHELLS[shell][0]} is missing: apt-get install ${shell}`);
    });
  }
  describe.skipIf(!existsSync(SHELLS[shell][0]))(`install.sh under ${shell}`, () => {
    test(
      "installs the verified linux-x64 binary into ~/.local/bin and says it is not on PATH",
      async () => {
        const r = await install(shell);
        expect(r.code, r.stderr).toBe(0);
        expect(fileHash(join(r.bin, "awaitless"))).toBe(fileHash(asset.x64));
        expect(run(r.bin, "version").stdout).toMatch(/^awaitless \d+\.\d+\.\d+/);
        expect(r.stderr).toContain(`${r.bin} is not on your PATH`);
        expect(readdirSync(r.bin).sort()).toEqual(["awaitless", "awaitless-mcp", "awaitless-runner"]);
        for (const link of ["awaitless-mcp", "awaitless-runner"])
          expect(readlinkSync(join(r.bin, link))).toBe("awaitless");
      },
      T,
    );

    test(
      "a checksum mismatch is refused and nothing is installed",
      async () => {
        const r = await install(shell, { args: ["--version", "6.6.6"] });
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain("checksum mismatch for awaitless-linux-x64");
        expect(r.stderr).toContain("nothing was installed");
        expect(existsSync(r.bin)).toBe(false);
      },
      T,
    );

    test(
      "musl is detected (stub ldd on PATH) and the musl build is fetched",
      async () => {
        const before = requested("awaitless-linux-x64-musl");
        const path = `${muslStub}:${shell === "busybox" ? busyboxPath : "/usr/bin:/bin"}`;
        const r = await install(shell, { path });
        expect(requested("awaitless-linux-x64-musl")).toBe(before + 1);
        if (MUSL_RUNS) {
          expect(r.code, r.stderr).toBe(0);
          expect(fileHash(join(r.bin, "awaitless"))).toBe(fileHash(asset.musl));
        } else {
          // This glibc host has no musl C++ runtime: the binary cannot start, so nothing is installed.
          expect(r.code).not.toBe(0);
          expect(r.stderr).toContain("linux-x64-musl binary does not start");
          expect(r.stderr).toContain("apk add libstdc++");
          expect(existsSync(join(r.bin, "awaitless"))).toBe(false);
        }
      },
      T,
    );
  });
}

describe.skipIf(!existsSync(SHELLS.dash[0]))("install.sh choices (dash)", () => {
  test(
    "a CPU without AVX2 gets the baseline build, which runs here",
    async () => {
      const r = await install("dash", { env: { AWAITLESS_CPUINFO: cpuOld } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain("installing awaitless-linux-x64-baseline");
      expect(fileHash(join(r.bin, "awaitless"))).toBe(fileHash(asset.baseline));
      expect(run(r.bin, "version").code).toBe(0);
    },
    T,
  );

  test(
    "--target forces a build; one that cannot start here is installed with a warning",
    async () => {
      const r = await install("dash", { args: ["--target", "linux-x64-musl"] });
      expect(r.code, r.stderr).toBe(0);
      expect(fileHash(join(r.bin, "awaitless"))).toBe(fileHash(asset.musl));
      if (!MUSL_RUNS) expect(r.stderr).toContain("installing anyway: --target was given");
    },
    T,
  );

  test(
    "--version pins; AWAITLESS_INSTALL_DIR is honoured; a directory on PATH gets no warning",
    async () => {
      const dir = mkdtempSync(join(scratch, "dir-"));
      const r = await install("dash", {
        args: ["--version=v0.2.0"],
        env: { AWAITLESS_INSTALL_DIR: dir },
        path: `${dir}:/usr/bin:/bin`,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain("/download/v0.2.0");
      expect(fileHash(join(dir, "awaitless"))).toBe(fileHash(asset.baseline));
      expect(r.stderr).not.toContain("not on your PATH");
      expect(existsSync(r.bin)).toBe(false);
    },
    T,
  );

  test(
    "rerunning upgrades atomically while the old binary is running",
    async () => {
      const dir = mkdtempSync(join(scratch, "up-"));
      const env = { AWAITLESS_INSTALL_DIR: dir };
      expect((await install("dash", { args: ["--version", "0.1.0"], env })).code).toBe(0);
      const oldHash = fileHash(join(dir, "awaitless"));
      // A running copy (the MCP server waits on stdin): overwriting it in place would fail (ETXTBSY).
      const running = Bun.spawn([join(dir, "awaitless"), "mcp"], {
        env: { HOME: dir, AWAITLESS_DATA_DIR: join(dir, "data") },
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      });
      try {
        const r = await install("dash", { args: ["--version", "0.2.0"], env });
        expect(r.code, r.stderr).toBe(0);
        expect(fileHash(join(dir, "awaitless"))).not.toBe(oldHash);
        expect(fileHash(join(dir, "awaitless"))).toBe(fileHash(asset.baseline));
        expect(running.exitCode).toBeNull();
        expect(readdirSync(dir).filter((f) => f.startsWith(".awaitless"))).toEqual([]);
      } finally {
        running.kill();
        await running.exited;
      }
    },
    T,
  );

  test(
    "installs from a local release directory (file://) and rejects unknown arguments",
    async () => {
      const tree = mkdtempSync(join(scratch, "tree-"));
      writeReleaseTree(tree, "0.1.0", { assets: { "awaitless-linux-x64": asset.x64 } });
      const r = await install("dash", { env: { AWAITLESS_DOWNLOAD_URL: `file://${tree}` } });
      expect(r.code, r.stderr).toBe(0);
      expect(fileHash(join(r.bin, "awaitless"))).toBe(fileHash(asset.x64));
      const bad = await install("dash", { args: ["--frobnicate"] });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain("unknown argument --frobnicate");
    },
    T,
  );

  test(
    "a version with no release fails with the URL it tried",
    async () => {
      const r = await install("dash", { args: ["--version", "9.9.9"] });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`could not download ${server.url}/download/v9.9.9/SHA256SUMS`);
      expect(existsSync(r.bin)).toBe(false);
    },
    T,
  );
});

for (const shell of ["dash", "busybox"] as const) {
  describe.skipIf(!existsSync(SHELLS[shell][0]))(`compressed assets (${shell})`, () => {
    // beforeAll has made busyboxGzPath by the time a test runs (not when this describe is collected).
    const withGzip = () => ({ path: shell === "busybox" ? busyboxGzPath : "/usr/local/bin:/usr/bin:/bin" });
    test(
      "with gzip, the .gz is fetched, both checksums verified, and the unpacked binary installed",
      async () => {
        const [gz, plain] = [requested("awaitless-linux-x64.gz"), requested("awaitless-linux-x64")];
        const r = await install(shell, { args: ["--version", "0.3.0"], ...withGzip() });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toContain("installing awaitless-linux-x64 (0.3.0, gzip)");
        expect(requested("awaitless-linux-x64.gz")).toBe(gz + 1);
        expect(requested("awaitless-linux-x64")).toBe(plain);
        expect(fileHash(join(r.bin, "awaitless"))).toBe(fileHash(asset.x64));
      },
      T,
    );

    test(
      "a .gz that fails its own checksum, or unpacks to other bytes, is refused with nothing installed",
      async () => {
        const bad = await install(shell, { args: ["--version", "0.3.1"], ...withGzip() });
        expect(bad.code).toBe(1);
        expect(bad.stderr).toContain("checksum mismatch for awaitless-linux-x64.gz");
        expect(existsSync(bad.bin)).toBe(false);
        const other = await install(shell, { args: ["--version", "0.3.2"], ...withGzip() });
        expect(other.code).toBe(1);
        expect(other.stderr).toContain("checksum mismatch for awaitless-linux-x64:");
        expect(existsSync(other.bin)).toBe(false);
      },
      T,
    );
  });
}

if (!HAVE_XZ && process.env.AWAITLESS_REQUIRE_ALL === "1") {
  test("xz is installed (AWAITLESS_REQUIRE_ALL=1)", () => {
    throw new Error("xz is missing: apt-get install xz-utils (the .xz assets' tests make one with it)");
  });
}
describe.skipIf(!HAVE_XZ || !existsSync(SHELLS.busybox[0]))("xz assets", () => {
  beforeAll(async () => {
    asset.x64xz = join(scratch, "awaitless-linux-x64.xz");
    const xz = Bun.spawn(["sh", "-c", 'exec xz -0 -T1 -c "$1" > "$2"', "sh", asset.x64, asset.x64xz], {
      stderr: "pipe",
    });
    if ((await xz.exited) !== 0) throw new Error(`xz failed: ${await new Response(xz.stderr).text()}`);
    // Releases with all three: a good one, a tampered .xz, and an .xz (checksum right) that does not unpack.
    Object.assign(releases, {
      "0.4.0": {
        assets: {
          "awaitless-linux-x64": asset.x64,
          "awaitless-linux-x64.gz": asset.x64gz,
          "awaitless-linux-x64.xz": asset.x64xz,
        },
      },
      "0.4.1": {
        assets: {
          "awaitless-linux-x64": asset.x64,
          "awaitless-linux-x64.gz": asset.x64gz,
          "awaitless-linux-x64.xz": asset.x64xz,
        },
        sums: `${fileHash(asset.x64)}  awaitless-linux-x64\n${fileHash(asset.x64gz)}  awaitless-linux-x64.gz\n${"0".repeat(64)}  awaitless-linux-x64.xz\n`,
      },
      "0.4.2": {
        assets: {
          "awaitless-linux-x64": asset.x64,
          "awaitless-linux-x64.gz": asset.x64gz,
          "awaitless-linux-x64.xz": asset.x64gz,
        },
      },
    });
  }, 600_000);

  // How often the plain file, the .gz and the .xz were asked for so far; fetched(): since `before`.
  const counts = () => ["", ".gz", ".xz"].map((ext) => requested(`awaitless-linux-x64${ext}`));
  const fetched = (before: number[]) => counts().map((n, i) => n - before[i]!);

  test(
    "where xz, unxz or busybox's unxz is, only the .xz is fetched, checked and unpacked",
    async () => {
      for (const [shell, path, tool] of [
        ["dash", "/usr/local/bin:/usr/bin:/bin", "xz"],
        ["busybox", busyboxXzPath, "unxz (Alpine: busybox's applet on PATH)"],
        ["busybox", busyboxOnlyPath, "busybox unxz"],
      ] as const) {
        const before = counts();
        const r = await install(shell, { args: ["--version", "0.4.0"], path });
        expect(r.code, `${tool}: ${r.stderr}`).toBe(0);
        expect(r.stderr).toContain("installing awaitless-linux-x64 (0.4.0, xz)");
        expect(fetched(before), tool).toEqual([0, 0, 1]);
        expect(fileHash(join(r.bin, "awaitless"))).toBe(fileHash(asset.x64));
      }
    },
    3 * T,
  );

  test(
    "without any unxz the .gz is fetched; without gzip too, the plain file",
    async () => {
      let before = counts();
      const gz = await install("busybox", { args: ["--version", "0.4.0"], path: busyboxGzPath });
      expect(gz.code, gz.stderr).toBe(0);
      expect(fetched(before)).toEqual([0, 1, 0]);
      before = counts();
      const plain = await install("busybox", { args: ["--version", "0.4.0"] });
      expect(plain.code, plain.stderr).toBe(0);
      expect(fetched(before)).toEqual([1, 0, 0]);
      expect(fileHash(join(plain.bin, "awaitless"))).toBe(fileHash(asset.x64));
    },
    2 * T,
  );

  test(
    "a tampered .xz is refused with nothing installed; one that does not unpack falls back to the .gz",
    async () => {
      const bad = await install("dash", { args: ["--version", "0.4.1"] });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain("checksum mismatch for awaitless-linux-x64.xz");
      expect(existsSync(bad.bin)).toBe(false);
      const before = counts();
      const fallback = await install("dash", { args: ["--version", "0.4.2"] });
      expect(fallback.code, fallback.stderr).toBe(0);
      expect(fallback.stderr).toContain(
        "could not unpack awaitless-linux-x64.xz with xz -dc; trying the next format",
      );
      expect(fetched(before)).toEqual([0, 1, 1]);
      expect(fileHash(join(fallback.bin, "awaitless"))).toBe(fileHash(asset.x64));
    },
    2 * T,
  );
});

describe.skipIf(!existsSync(SHELLS.busybox[0]))("without gzip", () => {
  test(
    "the uncompressed asset is fetched from a release that has both",
    async () => {
      const [gz, plain] = [requested("awaitless-linux-x64.gz"), requested("awaitless-linux-x64")];
      const r = await install("busybox", { args: ["--version", "0.3.0"] });
      expect(r.code, r.stderr).toBe(0);
      expect(requested("awaitless-linux-x64")).toBe(plain + 1);
      expect(requested("awaitless-linux-x64.gz")).toBe(gz);
      expect(fileHash(join(r.bin, "awaitless"))).toBe(fileHash(asset.x64));
    },
    T,
  );
});

describe.skipIf(!existsSync(SHELLS.dash[0]))("install.sh for a newcomer (dash)", () => {
  test(
    "XDG_BIN_HOME is the default directory; the last hint names a command that runs as typed",
    async () => {
      const xdg = mkdtempSync(join(scratch, "xdg-bin-"));
      const off = await install("dash", { env: { XDG_BIN_HOME: xdg } });
      expect(off.code, off.stderr).toBe(0);
      expect(fileHash(join(xdg, "awaitless"))).toBe(fileHash(asset.x64));
      expect(existsSync(off.bin)).toBe(false);
      // Not on PATH: the hint gives the full path, and that command runs.
      expect(off.stderr).toContain(`next: ${xdg}/awaitless demo`);
      const on = await install("dash", { env: { XDG_BIN_HOME: xdg }, path: `${xdg}:/usr/bin:/bin` });
      expect(on.stderr).toMatch(/next: awaitless demo /);
      // --dir and AWAITLESS_INSTALL_DIR still win over XDG_BIN_HOME.
      const dir = mkdtempSync(join(scratch, "dir-"));
      const forced = await install("dash", { env: { XDG_BIN_HOME: xdg, AWAITLESS_INSTALL_DIR: dir } });
      expect(existsSync(join(dir, "awaitless"))).toBe(true);
      expect(forced.stderr).toContain(`next: ${dir}/awaitless demo`);
    },
    T,
  );

  test("--help lists every option and environment variable", async () => {
    const r = Bun.spawnSync(["/usr/bin/dash", INSTALL_SH, "--help"], { stdout: "pipe", stderr: "pipe" });
    expect(r.exitCode).toBe(0);
    const text = r.stdout.toString();
    for (const name of [
      "--version",
      "--dir",
      "--target",
      "--uninstall",
      "AWAITLESS_VERSION",
      "AWAITLESS_INSTALL_DIR",
      "XDG_BIN_HOME",
      "AWAITLESS_TARGET",
      "AWAITLESS_DOWNLOAD_URL",
      "AWAITLESS_CPUINFO",
    ])
      expect(text).toContain(name);
  });

  test(
    "--uninstall removes the binary and its awaitless* links, keeps other files, and lists what remains",
    async () => {
      const r = await install("dash");
      expect(r.code, r.stderr).toBe(0);
      // install.sh made awaitless-mcp and awaitless-runner; a user added a hard link, an absolute link,
      // and two files that are not the binary.
      expect(readlinkSync(join(r.bin, "awaitless-mcp"))).toBe("awaitless");
      linkSync(join(r.bin, "awaitless"), join(r.bin, "awaitless-hard"));
      symlinkSync(join(r.bin, "awaitless"), join(r.bin, "awaitless-abs"));
      symlinkSync("/bin/true", join(r.bin, "awaitless-other"));
      writeFileSync(join(r.bin, "awaitless-notes"), "mine\n");
      // What a user has after using it: data, config, an MCP entry, a completion file.
      const bin = join(r.bin, "awaitless");
      const env = { HOME: r.home, PATH: "/usr/bin:/bin" };
      expect(Bun.spawnSync([bin, "submit", "--", "true"], { env, cwd: r.home }).exitCode).toBe(0);
      mkdirSync(join(r.home, ".config", "awaitless"), { recursive: true });
      writeFileSync(join(r.home, ".config", "awaitless", "config.toml"), "");
      const mcp = Bun.spawnSync([bin, "mcp-config", "claude", "--write"], { env, cwd: r.home });
      expect(mcp.exitCode, mcp.stderr.toString()).toBe(0);
      const fish = join(r.home, ".config", "fish", "completions");
      mkdirSync(fish, { recursive: true });
      writeFileSync(join(fish, "awaitless.fish"), Bun.spawnSync([bin, "completion", "fish"]).stdout);

      const u = await install("dash", { args: ["--uninstall"], env: { HOME: r.home } });
      expect(u.code, u.stderr).toBe(0);
      expect(readdirSync(r.bin).sort()).toEqual(["awaitless-notes", "awaitless-other"]);
      for (const f of ["awaitless", "awaitless-mcp", "awaitless-runner", "awaitless-hard", "awaitless-abs"])
        expect(u.stderr).toContain(`removed ${join(r.bin, f)}`);
      const data = join(r.home, ".local", "share", "awaitless");
      expect(u.stderr).toContain(`rm -rf '${data}'`);
      expect(u.stderr).toContain(`rm '${join(r.home, ".config", "awaitless", "config.toml")}'`);
      expect(u.stderr).toContain(`MCP client entry: ${join(r.home, ".claude.json")}`);
      expect(u.stderr).toContain(`rm '${join(fish, "awaitless.fish")}'`);
      // Nothing but the binary and its links was touched.
      expect(existsSync(data)).toBe(true);
      expect(existsSync(join(fish, "awaitless.fish"))).toBe(true);

      const again = await install("dash", { args: ["--uninstall"], env: { HOME: r.home } });
      expect(again.code).toBe(0);
      expect(again.stderr).toContain(`no awaitless binary in ${r.bin}`);
    },
    T,
  );
});

test("the documented one-liners refuse anything but HTTPS with TLS 1.2 or later", () => {
  for (const doc of ["README.md", "docs/install.md", "server.json"]) {
    const text = readFileSync(join(INSTALL_SH, "..", doc), "utf8");
    const lines = text.split("\n").filter((l) => /\bcurl\b.*install\.sh/.test(l));
    expect(lines.length, doc).toBeGreaterThan(0);
    for (const l of lines) expect(l, doc).toContain("curl --proto '=https' --tlsv1.2 ");
  }
});

test("install.sh is shellcheck-clean (POSIX sh)", () => {
  const which = Bun.spawnSync(["sh", "-c", "command -v shellcheck"]);
  if (which.exitCode !== 0) {
    if (process.env.AWAITLESS_REQUIRE_ALL === "1") throw new Error("shellcheck is not installed");
    console.warn("[skip] shellcheck not installed (apt-get install shellcheck)");
    return;
  }
  const r = Bun.spawnSync(["shellcheck", "-s", "sh", INSTALL_SH], { stdout: "pipe", stderr: "pipe" });
  expect(r.stdout.toString()).toBe("");
  expect(r.exitCode).toBe(0);
});
