// Hints name `awaitless` when PATH finds the npm package's launcher that starts this very binary (npm i -g, a
// project's node_modules/.bin), and never a launcher whose platform package is another binary.
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { invokedName } from "../../src/cli/invoked-as.ts";
import { launchesThis } from "../../src/cli/npm-launcher.ts";

const root = mkdtempSync(join(tmpdir(), "awl-npm-hint-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function file(path: string, text = "#!/bin/sh\n"): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, 0o755);
  return path;
}

/** npm i -g: PREFIX/bin/awaitless → ../lib/node_modules/awaitless/bin/awaitless; the platform package beside it. */
function globalInstall(name: string, nested = false): { bin: string; binary: string } {
  const prefix = join(root, name);
  const lib = join(prefix, "lib", "node_modules");
  file(join(lib, "awaitless", "bin", "awaitless"));
  const platDir = nested ? join(lib, "awaitless", "node_modules") : lib;
  const binary = file(join(platDir, "@awaitless", "linux-x64", "bin", "awaitless"), "binary\n");
  mkdirSync(join(prefix, "bin"));
  symlinkSync("../lib/node_modules/awaitless/bin/awaitless", join(prefix, "bin", "awaitless"));
  return { bin: join(prefix, "bin"), binary };
}

test("npm i -g (sibling or nested platform package): hints say awaitless", () => {
  for (const [name, nested] of [
    ["g1", false],
    ["g2", true],
  ] as const) {
    const g = globalInstall(name, nested);
    expect(launchesThis(join(g.bin, "awaitless"), g.binary)).toBe(true);
    expect(invokedName({ PATH: `${g.bin}:/usr/bin` }, g.binary, [g.binary])).toBe("awaitless");
  }
});

test("a launcher of another install, or one not on PATH, is not taken for this binary", () => {
  const mine = globalInstall("mine");
  const other = globalInstall("other");
  expect(launchesThis(join(other.bin, "awaitless"), mine.binary)).toBe(false);
  expect(invokedName({ PATH: `${other.bin}:/usr/bin` }, mine.binary, [mine.binary])).toBe(mine.binary);
  expect(invokedName({ PATH: "/usr/bin" }, mine.binary, [mine.binary])).toBe(mine.binary);
  // A binary outside any platform package (the installer's, a build) is never matched to a launcher.
  const plain = file(join(root, "plain", "awaitless"), "binary\n");
  expect(launchesThis(join(mine.bin, "awaitless"), plain)).toBe(false);
});
