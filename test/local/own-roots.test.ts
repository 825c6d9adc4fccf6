// The data directory is awaitless's own: an existing directory open to others (a 1777 one as root) is refused and
// keeps its mode; `/tmp` (in a private mount namespace, so the real one is never at risk), the home and ~/.ssh are
// refused as roots before anything is created in them; an 0.8 data directory (0755, holding 0.8's store) is still
// made private, as before. Through the compiled binary as root.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { BINARY, Sandbox } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import { FIXTURE_08 } from "../helpers/store08.ts";

const mode = (p: string) => statSync(p).mode & 0o7777;

function rootAvailable() {
  const ok = process.platform === "linux" && process.getuid?.() === 0 && Bun.which("unshare") !== null;
  return { ok, why: ok ? "" : "needs Linux, root and unshare(1) (a private mount namespace)" };
}

const boxes: Sandbox[] = [];
afterAll(() => {
  for (const b of boxes) b.cleanup();
});
function box(): Sandbox {
  const sb = new Sandbox();
  boxes.push(sb);
  return sb;
}

describe("the data directory", () => {
  test("an existing directory open to others is refused with the fix, and keeps its mode", () => {
    const sb = box();
    const shared = join(sb.root, "shared");
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const r = sb.run(["list"], { env: { AWAITLESS_DATA_DIR: shared } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `refusing the data directory ${shared}: it exists and is open to other users (mode 1777)`,
    );
    expect(r.stderr).toContain(`run chmod 700 ${shared} if only you use it, or set AWAITLESS_DATA_DIR`);
    expect(mode(shared)).toBe(0o1777);
    expect(readdirSync(shared)).toEqual([]);

    const mine = join(sb.root, "mine");
    mkdirSync(mine, { mode: 0o755 });
    chmodSync(mine, 0o755);
    expect(sb.run(["list"], { env: { AWAITLESS_DATA_DIR: mine } }).code).toBe(2);
    expect(mode(mine)).toBe(0o755);
    chmodSync(mine, 0o700); // the fix the message names
    expect(sb.run(["list"], { env: { AWAITLESS_DATA_DIR: mine } }).code).toBe(0);
  });

  test("the home and ~/.ssh are refused as data directories, nothing made in them", () => {
    const sb = box();
    const ssh = join(sb.root, ".ssh");
    mkdirSync(ssh, { mode: 0o700 });
    for (const [dir, why] of [
      [sb.root, "is your home directory"],
      [ssh, "is your ~/.ssh"],
      [join(ssh, "awaitless"), "is inside your ~/.ssh"],
    ] as const) {
      const before = readdirSync(sb.root).sort();
      const r = sb.run(["list"], { env: { AWAITLESS_DATA_DIR: dir } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`refusing the data directory ${dir}: ${dir} ${why}`);
      expect(readdirSync(sb.root).sort()).toEqual(before);
      expect(readdirSync(ssh)).toEqual([]);
    }
    sb.writeConfig('[defaults]\ndata_dir = "~"\n');
    const r = sb.run(["list"], { env: { AWAITLESS_DATA_DIR: "" } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is your home directory");
    expect(r.stderr).toContain(`for example ${join(sb.root, "awaitless")}`);
  });

  test("an Awaitless 0.8 data directory (0755, its store inside) is still ours to make private", () => {
    const sb = box();
    cpSync(FIXTURE_08, sb.dataDir, { recursive: true });
    chmodSync(sb.dataDir, 0o755);
    expect(sb.run(["list"]).code).toBe(0);
    expect(mode(sb.dataDir)).toBe(0o700);
  });

  test("root with data_dir = /tmp (a private /tmp in its own mount namespace): refused, /tmp untouched", () => {
    if (!gateOnAvailability("a data_dir of /tmp as root (unshare -m)", rootAvailable())) return;
    // The namespace gets its own empty 1777 tmpfs on /tmp: whatever the binary does, the real /tmp is not touched.
    // The binary is copied first to a tmpfs of the namespace's own on /mnt (a checkout under /tmp would be hidden).
    const probe = [
      "mount --make-rprivate / && mount -t tmpfs -o size=256m tmpfs /mnt || exit 99",
      `cp '${BINARY}' /mnt/awaitless || exit 99`,
      "mount -t tmpfs -o mode=1777,size=4m tmpfs /tmp || exit 99",
      `AWAITLESS_DATA_DIR=/tmp HOME=/nonexistent NO_COLOR=1 /mnt/awaitless list; echo "code=$?"`,
      'echo "mode=$(stat -c %a /tmp)"; echo "entries=$(ls -A /tmp | tr "\\n" " ")"',
    ].join("\n");
    const p = Bun.spawnSync(["unshare", "-m", "sh", "-c", probe], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = p.stdout.toString();
    const err = p.stderr.toString();
    expect(out).toContain("code=2");
    expect(err).toContain("refusing the data directory /tmp: /tmp is shared with other users and the system");
    expect(err).toContain("for example /tmp/awaitless");
    expect(out).toContain("mode=1777");
    expect(out).toMatch(/entries=\s*$/m);
  });
});
