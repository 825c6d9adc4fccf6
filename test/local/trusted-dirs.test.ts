// Directories another user could control are refused, through the compiled binary as root with files owned by
// `nobody`: a data dir of another user (or reached through their link), a --log-dir under a 0777 parent; a sticky
// root-owned parent with our own 0700 directory is accepted; a tampered wrapper in our bin/ is replaced, never run.
import { afterAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  existsSync,
  lchownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { WRAPPER_SHA256 } from "../../src/wrapper/scripts.ts";
import { sha256Hex } from "../../src/wrapper/sha256.ts";
import { Sandbox } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";

const NOBODY = 65534;
const WRAPPER_NAME = `wrapper-${WRAPPER_SHA256.slice(0, 16)}.sh`;

/** A fake wrapper that leaves a marker and fakes a passing job: it must never run. */
function fakeWrapper(marker: string): string {
  return `#!/bin/sh\ntouch '${marker}'\nexit 0\n`;
}

function rootAvailable() {
  const ok = process.platform === "linux" && process.getuid?.() === 0;
  return { ok, why: ok ? "" : "needs Linux and root (files owned by another uid)" };
}

if (gateOnAvailability("trusted-directory tests (root, chown to nobody)", rootAvailable())) {
  const boxes: Sandbox[] = [];
  afterAll(() => {
    for (const sb of boxes) sb.cleanup();
  });
  const box = () => {
    const sb = new Sandbox();
    boxes.push(sb);
    return sb;
  };

  describe("the data directory", () => {
    test("owned by another user, with a planted wrapper: refused, the wrapper never runs", () => {
      const sb = box();
      const marker = join(sb.root, "fake-wrapper-ran");
      mkdirSync(join(sb.dataDir, "bin"), { recursive: true, mode: 0o700 });
      writeFileSync(join(sb.dataDir, "bin", WRAPPER_NAME), fakeWrapper(marker), { mode: 0o700 });
      chownSync(join(sb.dataDir, "bin", WRAPPER_NAME), NOBODY, NOBODY);
      chownSync(join(sb.dataDir, "bin"), NOBODY, NOBODY);
      chownSync(sb.dataDir, NOBODY, NOBODY);
      const r = sb.run(["run", "--", "true"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`refusing the data directory ${sb.dataDir}`);
      expect(r.stderr).toContain("owned by another user (uid 65534)");
      expect(r.stderr).toContain("choose a directory you own");
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(join(sb.dataDir, "awaitless.db"))).toBe(false);
    });

    test("reached through a link into another user's directory: refused", () => {
      const sb = box();
      const theirs = join(sb.root, "theirs");
      mkdirSync(theirs, { mode: 0o755 });
      chownSync(theirs, NOBODY, NOBODY);
      symlinkSync(theirs, join(sb.root, "link"));
      const r = sb.run(["list"], { env: { AWAITLESS_DATA_DIR: join(sb.root, "link", "data") } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${theirs} is owned by another user`);
      expect(existsSync(join(theirs, "data"))).toBe(false);
    });

    test("a link another user planted in a sticky parent is refused even when it points at our own directory", () => {
      const sb = box();
      const sticky = join(sb.root, "tmp");
      mkdirSync(sticky);
      chmodSync(sticky, 0o1777);
      const mine = join(sb.root, "mine");
      mkdirSync(mine, { mode: 0o700 });
      const link = join(sticky, "data");
      symlinkSync(mine, link);
      // ours: accepted (only we can repoint it)
      expect(sb.run(["list"], { env: { AWAITLESS_DATA_DIR: link } }).code).toBe(0);
      // theirs: they could repoint it at any time
      lchownSync(link, NOBODY, NOBODY);
      const r = sb.run(["list"], { env: { AWAITLESS_DATA_DIR: link } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${link} is owned by another user`);
    });

    test("under a group-writable, non-sticky parent: refused with the chmod that fixes it", () => {
      const sb = box();
      const shared = join(sb.root, "shared");
      mkdirSync(shared);
      chmodSync(shared, 0o775);
      const dataDir = join(shared, "data");
      const r = sb.run(["list"], { env: { AWAITLESS_DATA_DIR: dataDir } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${shared} is writable by its group and not sticky`);
      expect(r.stderr).toContain(`chmod go-w ${shared}`);
      chmodSync(shared, 0o755);
      expect(sb.run(["list"], { env: { AWAITLESS_DATA_DIR: dataDir } }).code).toBe(0);
    });
  });

  describe("--log-dir", () => {
    test("under an other-writable, non-sticky parent: refused, nothing created", () => {
      const sb = box();
      const open = join(sb.root, "open");
      mkdirSync(open);
      chmodSync(open, 0o777);
      const r = sb.run(["submit", "--log-dir", join(open, "logs"), "--", "true"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`refusing --log-dir ${join(open, "logs")}`);
      expect(r.stderr).toContain(`${open} is writable by other users and not sticky`);
      expect(r.stderr).toContain(`chmod go-w ${open}`);
      expect(readdirSync(open)).toEqual([]);
      expect(sb.jobCount()).toBe(0);
    });

    test("our own 0700 directory in a sticky root-owned 1777 parent: accepted", () => {
      const sb = box();
      const sticky = join(sb.root, "tmp");
      mkdirSync(sticky);
      chmodSync(sticky, 0o1777);
      const mine = join(sticky, "mine");
      mkdirSync(mine, { mode: 0o700 });
      const r = sb.run(["run", "--json", "--log-dir", mine, "--", "sh", "-c", "echo ok"]);
      expect(r.code).toBe(0);
      expect(r.json.job_state).toBe("succeeded");
      expect(readdirSync(mine)).toEqual([r.json.job_id]);
      // and the same sticky parent holds a data directory of ours
      const data = join(sticky, "data");
      mkdirSync(data, { mode: 0o700 });
      expect(sb.run(["run", "--", "true"], { env: { AWAITLESS_DATA_DIR: data } }).code).toBe(0);
    });

    test("a directory of another user inside a sticky parent: refused", () => {
      const sb = box();
      const sticky = join(sb.root, "tmp");
      mkdirSync(sticky);
      chmodSync(sticky, 0o1777);
      const theirs = join(sticky, "x");
      mkdirSync(theirs, { mode: 0o777 });
      chmodSync(theirs, 0o777);
      chownSync(theirs, NOBODY, NOBODY);
      const r = sb.run(["submit", "--log-dir", theirs, "--", "true"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${theirs} is owned by another user`);
      expect(readdirSync(theirs)).toEqual([]);
    });
  });

  test("a tampered wrapper in our own bin/ is replaced before the launch and never runs", () => {
    const sb = box();
    expect(sb.run(["run", "--", "true"]).code).toBe(0);
    const wrapper = join(sb.dataDir, "bin", WRAPPER_NAME);
    expect(sha256Hex(readFileSync(wrapper))).toBe(WRAPPER_SHA256);
    const marker = join(sb.root, "tampered-wrapper-ran");
    writeFileSync(wrapper, fakeWrapper(marker));
    const r = sb.run(["run", "--json", "--", "sh", "-c", "echo real; exit 3"]);
    expect(r.json.job_state).toBe("failed");
    expect(r.json.exit_code).toBe(3);
    expect(existsSync(marker)).toBe(false);
    expect(sha256Hex(readFileSync(wrapper))).toBe(WRAPPER_SHA256);
  });
}
