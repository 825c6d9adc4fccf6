// The whole log over SSH through the compiled binary against a private OpenSSH sshd, for a dash and a busybox
// login shell: grep, --head and --lines are answered on the host by the one remote scan, with the same lines,
// numbers and totals as the same job's log read on this machine; a capped log says where its middle was dropped.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { type SshWorld, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability("SSH log scan e2e tests (private OpenSSH server)", sshdAvailable());

let w: SshWorld;
if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
  });
  afterAll(async () => {
    await w?.close();
  });
}

/** 16,000 lines of 70 bytes (1.1 MB), one ERROR in the middle. */
const PRINT =
  'awk \'BEGIN { for (i = 1; i <= 16000; i++) { printf "line %06d %s\\n", i, (i == 8000 ? "ERROR in the middle" : ' +
  '"build output build output build output build output ok") } }\'';

describe.each(runE2e ? (["dash", "busybox"] as const) : [])("logs of an SSH job as the %s user", (kind) => {
  const onHost = ["--backend", "ssh", "--host", ""];
  let remote = "";
  let local = "";
  beforeAll(() => {
    onHost[3] = w.alias[kind];
    remote = w.sb.submit(["sh", "-c", PRINT], onHost);
    local = w.sb.submit(["sh", "-c", PRINT]);
    for (const id of [remote, local]) expect(w.sb.run(["wait", id]).code).toBe(0);
  });
  // Async, so that this process keeps draining the sshd's log pipe between calls (a full pipe stalls the sshd).
  const logs = (id: string, args: string[]) => w.sb.runAsync(["logs", id, "--stream", "stdout", ...args]);

  test("--grep finds a line near the start of a 1 MiB+ log with its number, as for a local job", async () => {
    const r = await logs(remote, ["--grep", "line 000001 "]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("1:line 000001 build output build output build output build output ok\n");
    const json = (await logs(remote, ["--grep", "ERROR|line 01599[0-9]", "--json"])).json;
    expect(json.stdout_bytes).toBeGreaterThan(1 << 20);
    expect(json.stdout_page).toMatchObject({
      matches_total: 11,
      lines: 11,
      first_line: 8000,
      last_line: 15999,
    });
    for (const args of [
      ["--grep", "0 build", "--tail", "4"],
      ["--grep", "[13579]{3}", "--head", "3", "--lines", "500:"],
      ["--tail", "2"],
    ]) {
      const a = (await logs(remote, [...args, "--json"])).json;
      const b = (await logs(local, [...args, "--json"])).json;
      expect({ args, stdout: a.stdout, page: a.stdout_page }).toEqual({
        args,
        stdout: b.stdout,
        page: b.stdout_page,
      });
    }
  }, 60_000);

  test("--head and --lines page the remote log; the notes say how to read on", async () => {
    const head = await logs(remote, ["--head", "2"]);
    expect(head.stdout.split("\n").map((l) => l.slice(0, 11))).toEqual(["line 000001", "line 000002", ""]);
    expect(head.stderr).toContain(`--lines 3:`);
    const range = await logs(remote, ["--lines", "7999:8001"]);
    expect(range.stdout.split("\n")[1]).toBe("line 008000 ERROR in the middle");
  }, 60_000);

  test("an absent pattern is reported absent from the whole remote log", async () => {
    const r = await logs(remote, ["--grep", "no such line"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('(no stdout line matches "no such line" in the whole log)\n');
  }, 60_000);

  test("a pattern full of shell syntax is only a pattern on the host", async () => {
    const r = await logs(remote, ["--grep", "'; echo pwned; '|$(id)|`id`"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `(no stdout line matches ${JSON.stringify("'; echo pwned; '|$(id)|`id`")} in the whole log)\n`,
    );
  }, 60_000);
});

describe.each(runE2e ? (["dash", "busybox"] as const) : [])("a capped SSH log as the %s user", (kind) => {
  test("line numbers count from the dropped-middle marker, and grep still reaches the head", async () => {
    w.sb.writeConfig("[defaults]\nlog_cap_bytes = 65536\n");
    try {
      const id = w.sb.submit(["sh", "-c", PRINT], ["--backend", "ssh", "--host", w.alias[kind]]);
      expect((await w.sb.runAsync(["wait", id])).code).toBe(0);
      const r = await w.sb.runAsync([
        "logs",
        id,
        "--stream",
        "stdout",
        "--grep",
        "line 000001 |line 016000",
        "--json",
      ]);
      expect(r.code).toBe(0);
      const page = r.json.stdout_page;
      expect(r.json.dropped_bytes.stdout).toBeGreaterThan(0);
      expect(page.dropped_middle.bytes).toBeGreaterThan(0);
      expect(r.json.stdout.split("\n")[0]).toBe(
        "1:line 000001 build output build output build output build output ok",
      );
      expect(r.json.stdout).toContain("line 016000");
      const marker = w.sb.run([
        "logs",
        id,
        "--stream",
        "stdout",
        "--lines",
        `${page.dropped_middle.after_line + 1}`,
      ]);
      expect(marker.stdout).toMatch(/^\[… \d+ bytes dropped by the log cap …\]\n$/);
      expect(marker.stderr).toContain("bytes the log cap dropped after line");
    } finally {
      w.sb.writeConfig("");
    }
  }, 60_000);
});
