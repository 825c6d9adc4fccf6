// npm/launcher.sh, the npm package's `awaitless` command, in every layout npm, npx and pnpm make, under dash, bash
// and busybox sh: it finds this platform's package as Node would, execs its binary with the arguments untouched,
// serves MCP under 0.8's names, and says what to do when the binary is missing. The "binary" is a stand-in script.
import { afterAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LAUNCHER } from "../../build/npm.ts";

const SHELLS = { dash: ["/usr/bin/dash"], bash: ["/bin/bash"], busybox: ["/usr/bin/busybox", "sh"] } as const;
const glibc = existsSync("/lib64/ld-linux-x86-64.so.2") || existsSync("/lib/ld-linux-aarch64.so.1");
const HOST = `${process.platform}-${process.arch}${process.platform === "linux" && !glibc ? "-musl" : ""}`;
const OTHER = process.arch === "x64" ? "linux-arm64" : "linux-x64";

const root = mkdtempSync(join(tmpdir(), "awl-npm-launcher-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const d = join(root, `t${n++}`);
  mkdirSync(d);
  return d;
};

/** A platform package whose "binary" prints its platform, its arguments one a line and its stdin, then exits $STUB_EXIT. */
function platformPackage(nodeModules: string, plat: string, executable = true): string {
  const bin = join(nodeModules, "@awaitless", plat, "bin", "awaitless");
  mkdirSync(join(bin, ".."), { recursive: true });
  writeFileSync(
    bin,
    `#!/bin/sh\necho "plat=${plat}"\nfor a in "$@"; do echo "arg=$a"; done\nexit "\${STUB_EXIT:-0}"\n`,
  );
  chmodSync(bin, executable ? 0o755 : 0o644);
  return bin;
}

/** The main package's directory with the launcher as bin/awaitless. */
function mainPackage(dir: string): string {
  const bin = join(dir, "bin", "awaitless");
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(LAUNCHER, bin);
  chmodSync(bin, 0o755);
  return bin;
}

function run(shell: keyof typeof SHELLS, cmd: string, args: string[] = [], env: Record<string, string> = {}) {
  const r = Bun.spawnSync([...SHELLS[shell], cmd, ...args], {
    env: { PATH: "/usr/bin:/bin", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

/** npm's local layout: node_modules/awaitless, the platform package hoisted beside it, a .bin link. */
function npmLocal(): string {
  const nm = join(fresh(), "node_modules");
  mainPackage(join(nm, "awaitless"));
  platformPackage(nm, HOST);
  mkdirSync(join(nm, ".bin"));
  symlinkSync("../awaitless/bin/awaitless", join(nm, ".bin", "awaitless"));
  return join(nm, ".bin", "awaitless");
}

for (const shell of Object.keys(SHELLS) as (keyof typeof SHELLS)[]) {
  describe.skipIf(!existsSync(SHELLS[shell][0]))(`under ${shell}`, () => {
    test("npm's project layout (node_modules/.bin): the hoisted platform package, arguments byte for byte, exit status", () => {
      const args = ["--version", "two words", "it's", "$HOME", "", "-x"];
      const r = run(shell, npmLocal(), args, { STUB_EXIT: "3" });
      expect(r.err).toBe("");
      expect(r.out).toBe([`plat=${HOST}`, ...args.map((a) => `arg=${a}`)].join("\n") + "\n");
      expect(r.code).toBe(3);
    });

    test("npm i -g (PREFIX/bin): the platform package as a sibling, or nested in the package", () => {
      const prefix = fresh();
      const lib = join(prefix, "lib", "node_modules");
      mainPackage(join(lib, "awaitless"));
      platformPackage(join(lib, "awaitless", "node_modules"), HOST);
      mkdirSync(join(prefix, "bin"));
      symlinkSync("../lib/node_modules/awaitless/bin/awaitless", join(prefix, "bin", "awaitless"));
      expect(run(shell, join(prefix, "bin", "awaitless"), ["list"]).out).toBe(`plat=${HOST}\narg=list\n`);
      // tarballs installed side by side (npm i -g main.tgz platform.tgz): the platform package is a global sibling
      rmSync(join(lib, "awaitless", "node_modules"), { recursive: true });
      platformPackage(lib, HOST);
      expect(run(shell, join(prefix, "bin", "awaitless"), ["list"]).out).toBe(`plat=${HOST}\narg=list\n`);
    });

    test("pnpm's layout: packages linked in from its store resolve from their real path", () => {
      const project = fresh();
      const store = join(project, "node_modules", ".pnpm");
      const real = join(store, "awaitless@0.1.0", "node_modules");
      mainPackage(join(real, "awaitless"));
      platformPackage(join(store, `@awaitless+${HOST}@0.1.0`, "node_modules"), HOST);
      mkdirSync(join(real, "@awaitless"));
      symlinkSync(
        join(store, `@awaitless+${HOST}@0.1.0`, "node_modules", "@awaitless", HOST),
        join(real, "@awaitless", HOST),
      );
      symlinkSync(join(real, "awaitless"), join(project, "node_modules", "awaitless"));
      mkdirSync(join(project, "node_modules", ".bin"));
      const shim = join(project, "node_modules", ".bin", "awaitless");
      writeFileSync(
        shim,
        '#!/bin/sh\nbasedir=$(dirname "$0")\nexec "$basedir/../awaitless/bin/awaitless" "$@"\n',
      );
      chmodSync(shim, 0o755);
      expect(run(shell, shim, ["status"]).out).toBe(`plat=${HOST}\narg=status\n`);
    });

    test("a link of the user's own elsewhere is followed (readlink), relative and absolute", () => {
      const target = npmLocal().replace("/.bin/awaitless", "/awaitless/bin/awaitless");
      const home = fresh();
      mkdirSync(join(home, "bin"));
      symlinkSync(target, join(home, "bin", "awaitless"));
      symlinkSync("bin/awaitless", join(home, "aw"));
      expect(run(shell, join(home, "bin", "awaitless"), ["a"]).out).toBe(`plat=${HOST}\narg=a\n`);
      expect(run(shell, join(home, "aw"), ["b"]).out).toBe(`plat=${HOST}\narg=b\n`);
    });

    test("awaitless-mcp and awaitless-runner serve MCP with options only; a command stays a command", () => {
      const local = npmLocal();
      for (const name of ["awaitless-mcp", "awaitless-runner"]) {
        const link = join(local, "..", name);
        symlinkSync("../awaitless/bin/awaitless", link);
        expect(run(shell, link).out).toBe(`plat=${HOST}\narg=mcp\n`);
        expect(run(shell, link, ["--config", "c.toml"]).out).toBe(
          `plat=${HOST}\narg=mcp\narg=--config\narg=c.toml\n`,
        );
        expect(run(shell, link, ["gc"]).out).toBe(`plat=${HOST}\narg=gc\n`);
      }
    });
  });
}

describe.skipIf(!existsSync(SHELLS.dash[0]))("choices and failures (dash)", () => {
  test("with several platform packages (a forced or copied tree) this machine's is chosen", () => {
    const nm = join(fresh(), "node_modules");
    mainPackage(join(nm, "awaitless"));
    const otherLibc = HOST.endsWith("-musl") ? HOST.slice(0, -"-musl".length) : `${HOST}-musl`;
    for (const p of [OTHER, otherLibc, HOST]) platformPackage(nm, p);
    expect(run("dash", join(nm, "awaitless", "bin", "awaitless"), ["x"]).out).toBe(`plat=${HOST}\narg=x\n`);
  });

  test("no platform package (--omit=optional): exit 1, naming the package and how to get it", () => {
    const nm = join(fresh(), "node_modules");
    mainPackage(join(nm, "awaitless"));
    const r = run("dash", join(nm, "awaitless", "bin", "awaitless"), ["--version"]);
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toContain(`the binary for this machine (${HOST}) is not installed`);
    expect(r.err).toContain(`@awaitless/${HOST}`);
    expect(r.err).toContain("--omit=optional");
    expect(r.err).toContain("install.sh");
  });

  test("a binary that lost its execute bit is named", () => {
    const nm = join(fresh(), "node_modules");
    mainPackage(join(nm, "awaitless"));
    const bin = platformPackage(nm, HOST, false);
    const r = run("dash", join(nm, "awaitless", "bin", "awaitless"));
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${bin} is not executable`);
  });
});
