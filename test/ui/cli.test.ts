// `awaitless ui` from the compiled binary: what it prints, --open without a browser opener, --host's warning, bad input.
import { afterAll, describe, expect, test } from "bun:test";
import { Sandbox, until } from "../helpers/cli.ts";

const box = new Sandbox();
afterAll(() => box.cleanup());

/** Starts `awaitless ui ARGS`, reads its stdout's first line and all stderr written by then; stops it by PID. */
async function started(args: string[], env: Record<string, string> = {}) {
  const proc = box.spawn(["ui", ...args], { env });
  const out = proc.stdout.getReader();
  const err = proc.stderr.getReader();
  let stdout = "";
  let stderr = "";
  const dec = new TextDecoder();
  await until("the URL line", async () => {
    const { value, done } = await out.read();
    if (done) throw new Error("awaitless ui exited");
    stdout += dec.decode(value);
    return stdout.includes("\n");
  });
  const errRead = (async () => {
    for (;;) {
      const { value, done } = await err.read();
      if (done) return;
      stderr += dec.decode(value);
    }
  })();
  return {
    stdout,
    stderr: () => stderr,
    async stop() {
      proc.kill("SIGTERM");
      const code = await proc.exited;
      await errRead;
      return code;
    },
  };
}

describe("awaitless ui", () => {
  test("prints a loopback URL with a token that opens the API; SIGTERM stops it with exit 0", async () => {
    const ui = await started([]);
    const m = /^Awaitless dashboard: (http:\/\/127\.0\.0\.1:(\d+)\/)#token=([0-9a-f]{48})\n/.exec(ui.stdout);
    expect(m).not.toBeNull();
    const [, base, , token] = m!;
    expect((await fetch(`${base}api/jobs`)).status).toBe(401);
    const ok = await fetch(`${base}api/jobs`, { headers: { "x-awaitless-token": token! } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ jobs: [], arrays: [], total: 0 });
    await until("the ssh -L hint", () => ui.stderr().includes("ssh -L"));
    expect(await ui.stop()).toBe(0);
  });

  test("--open without xdg-open says so and keeps serving", async () => {
    const ui = await started(["--open", "--json"], { PATH: "/nonexistent" });
    expect(JSON.parse(ui.stdout).url).toContain("#token=");
    await until("the note", () => ui.stderr().includes("no xdg-open here"));
    expect(await ui.stop()).toBe(0);
  });

  test("--host other than loopback warns", async () => {
    const ui = await started(["--host", "0.0.0.0", "--json"]);
    await until("the warning", () => ui.stderr().includes("not only this machine's loopback"));
    expect(await ui.stop()).toBe(0);
  });

  test("a bad --port is refused with what to give", () => {
    const r = box.run(["ui", "--port", "70000"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--port: bad number");
    expect(r.stderr).toContain("from 0 to 65535");
  });
});
