// The whole local path under each POSIX shell that may own jobs, and a database held locked by another process.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

function which(cmd: string): string | null {
  const r = Bun.spawnSync(["sh", "-c", `command -v ${cmd}`]);
  return r.exitCode === 0 ? r.stdout.toString().trim() : null;
}

const shells: [string, string | null][] = [
  ["dash", which("dash")],
  ["bash", which("bash")],
  [
    "busybox sh",
    (() => {
      const bb = which("busybox");
      if (!bb) return null;
      const link = join(sb.root, "busybox", "sh");
      // busybox runs the applet named by argv[0], so the link must be called `sh`
      if (!existsSync(link)) {
        mkdirSync(join(sb.root, "busybox"));
        symlinkSync(bb, link);
      }
      return link;
    })(),
  ],
];

describe("the local backend under each shell", () => {
  for (const [name, path] of shells) {
    const missing = path === null;
    if (missing && process.env.AWAITLESS_REQUIRE_ALL === "1") {
      test(`${name} is installed`, () => {
        throw new Error(`${name} is missing: apt-get install dash bash busybox`);
      });
      continue;
    }
    test.skipIf(missing)(`${name}: run, cancel and timeout behave the same`, () => {
      const env = { AWAITLESS_SHELL: path! };
      const ok = sb.run(["run", "--json", "--", "sh", "-c", 'echo "$0 ok"; exit 4'], { env });
      expect(ok.json.exit_code).toBe(4);
      expect(ok.json.stdout_tail).toBe("sh ok\n");
      const t = sb.run(["run", "--json", "--timeout", "1", "--", "sleep", "30"], { env });
      expect(t.json.state).toBe("timed_out");
      const id = sb.run(["submit", "--json", "--", "sleep", "30"], { env }).json.job_id;
      expect(sb.run(["cancel", "--json", "--grace-period", "1", id]).json.job_state).toBe("cancelled");
      const started = readFileSync(join(sb.dataDir, "jobs", id, "started"), "utf8");
      expect(started).toMatch(/^pgid=\d+$/m);
    });
  }
});

describe("a database locked by another process", () => {
  test("a write gives a clear error after the busy timeout, creates nothing, and works once released", async () => {
    sb.run(["list"]); // create the store
    const db = join(sb.dataDir, "store.db");
    const locker = Bun.spawn(
      [
        process.execPath,
        "-e",
        `const {Database}=require("bun:sqlite");const d=new Database(${JSON.stringify(db)});d.exec("BEGIN IMMEDIATE");console.log("locked");setTimeout(()=>{},60000);`,
      ],
      { stdout: "pipe", stderr: "inherit" },
    );
    try {
      const reader = locker.stdout.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toContain("locked");
      const before = sb.jobCount();
      const r = sb.run(["submit", "--", "true"], { env: { AWAITLESS_BUSY_TIMEOUT_MS: "300" } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("locked");
      expect(r.stderr).toContain("hint:");
      locker.kill("SIGKILL");
      await locker.exited;
      expect(sb.jobCount()).toBe(before);
      expect(sb.run(["run", "--", "true"]).code).toBe(0);
    } finally {
      locker.kill("SIGKILL");
    }
  });
});
