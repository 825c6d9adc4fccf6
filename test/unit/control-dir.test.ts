// The OpenSSH control socket directory: in the runtime dir or the data dir, 0700, ours, never through a
// symlink or another user's directory, and short enough for a Unix socket path.
import { afterAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AwaitlessError } from "../../src/core/model/errors.ts";
import { defaultControlDir, MAX_CONTROL_DIR_BYTES } from "../../src/ssh/control-dir.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "awl-cdir-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const d = join(root, `c${++n}`);
  mkdirSync(d, { mode: 0o700 });
  return d;
};
const isRoot = process.getuid?.() === 0;

function refusal(env: Record<string, string>): AwaitlessError {
  try {
    defaultControlDir(env);
  } catch (e) {
    if (e instanceof AwaitlessError) return e;
    throw e;
  }
  throw new Error("defaultControlDir did not refuse");
}

describe("defaultControlDir", () => {
  test("under a private XDG_RUNTIME_DIR, created 0700", () => {
    const rt = fresh();
    const dir = defaultControlDir({ XDG_RUNTIME_DIR: rt, AWAITLESS_DATA_DIR: join(rt, "data") });
    expect(dir).toBe(join(rt, "awaitless-ssh"));
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
  });

  test("under the data dir when the runtime dir is missing or open to others", () => {
    const base = fresh();
    const open = join(base, "rt");
    mkdirSync(open);
    chmodSync(open, 0o755);
    for (const env of [{}, { XDG_RUNTIME_DIR: open }, { XDG_RUNTIME_DIR: "relative" }]) {
      const data = join(base, `data${++n}`);
      expect(defaultControlDir({ ...env, AWAITLESS_DATA_DIR: data })).toBe(join(data, "ssh"));
    }
  });

  test("a symlink in its place is refused, naming it", () => {
    const data = fresh();
    const elsewhere = fresh();
    symlinkSync(elsewhere, join(data, "ssh"));
    const err = refusal({ AWAITLESS_DATA_DIR: data });
    expect(err.message).toContain(
      `${join(data, "ssh")} cannot hold ssh control sockets: it is a symbolic link`,
    );
    expect(err.hint).toContain("ControlPath");
  });

  test.if(isRoot)("another user's directory in its place is refused", () => {
    const data = fresh();
    mkdirSync(join(data, "ssh"), { mode: 0o700 });
    chownSync(join(data, "ssh"), 65534, 65534);
    expect(refusal({ AWAITLESS_DATA_DIR: data }).message).toContain("it is owned by uid 65534");
  });

  test("our own directory left open is tightened to 0700", () => {
    const data = fresh();
    mkdirSync(join(data, "ssh"));
    chmodSync(join(data, "ssh"), 0o777);
    defaultControlDir({ AWAITLESS_DATA_DIR: data });
    expect(lstatSync(join(data, "ssh")).mode & 0o777).toBe(0o700);
  });

  test("a data dir too deep for a socket path gets a short private directory, the same one each time", () => {
    const data = join(fresh(), "d".repeat(80));
    const dir = defaultControlDir({ AWAITLESS_DATA_DIR: data });
    expect(Buffer.byteLength(dir)).toBeLessThanOrEqual(MAX_CONTROL_DIR_BYTES);
    const st = lstatSync(dir);
    expect(st.isDirectory() && (st.mode & 0o777) === 0o700).toBe(true);
    expect(readFileSync(join(data, "ssh", "short-dir"), "utf8").trim()).toBe(dir);
    expect(defaultControlDir({ AWAITLESS_DATA_DIR: data })).toBe(dir);
    // Replaced by something that is not ours any more: a new one is made.
    rmSync(dir, { recursive: true });
    symlinkSync(fresh(), dir);
    const again = defaultControlDir({ AWAITLESS_DATA_DIR: data });
    expect(again).not.toBe(dir);
    expect(lstatSync(again).isDirectory()).toBe(true);
    rmSync(again, { recursive: true });
    rmSync(dir);
  });
});
