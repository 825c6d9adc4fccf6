// The remote log scan (the host program `logs` runs over SSH) under each shell a host may have: every query answers
// exactly as the in-process scan on the same job directory, and a pattern reaches grep as data, never as shell.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scanLocalLog } from "../../src/backends/local/local-logs.ts";
import { scanRemoteLog } from "../../src/backends/ssh/ssh-logs.ts";
import type { LogQuery, LogScan } from "../../src/core/logs/log-query.ts";
import { type HostShell, hostShells, missingBusybox, runHostScript } from "../helpers/host-shells.ts";
import { jobDirsIn, numbered, q } from "../helpers/log-fixtures.ts";

const tmp = mkdtempSync(join(tmpdir(), "awl-log-scan-remote-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const jobDir = jobDirsIn(tmp);

const shells = hostShells(tmp);
const missing = missingBusybox(shells);
if (missing !== null) {
  test("busybox is installed (AWAITLESS_REQUIRE_ALL=1)", () => {
    throw new Error(missing);
  });
}

/** Each line as `N[c][k]:bytes` (c: cut, k: inside a key block). */
const view = (s: LogScan) =>
  s.lines.map((l) => `${l.n}${l.cut ? "c" : ""}${l.key ? "k" : ""}:${Buffer.from(l.raw).toString("latin1")}`);

const hostFor = (shell: HostShell) => ({
  name: shell.name,
  run: (body: string, args: readonly string[]) => runHostScript(shell, body, args),
});

const fixtures = (): Record<string, string> => {
  const secretish =
    "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n";
  return {
    plain: jobDir({ stdout: numbered(3000, (i) => (i % 97 === 0 ? `ERROR ${i} failed` : `ok ${i} fine`)) }),
    "no final newline": jobDir({ stdout: "one\ntwo ERROR\nthree" }),
    empty: jobDir({ stdout: "" }),
    "long lines": jobDir({ stdout: `a\n${"L".repeat(40_000)}ERROR\nb ERROR\n${"M".repeat(30_000)}\nend\n` }),
    capped: jobDir({
      "stdout.head": `${numbered(40, (i) => `head ${i} ok`)}${secretish}partial head li`,
      "stdout.prev": `ne cut\nQu7h9XK2P1ZfoV2bYq0BvAYwgIiiIo5ULc5pbTMjY1UdjemsWU8CAwEAAQ==\n-----END RSA PRIVATE KEY-----\n`,
      stdout: numbered(500, (i) => (i % 50 === 0 ? `ERROR tail ${i}` : `tail ${i} MIIB`)),
      "stdout.dropped": "500000",
    }),
    "capped, contiguous": jobDir({
      "stdout.head": numbered(30),
      "stdout.prev": numbered(30).slice(100),
      stdout: "last ERROR\n",
      "stdout.dropped": "100",
    }),
    missing: jobDir({}),
  };
};

const queries: [string, LogQuery][] = [
  ["grep, last matches", q({ grep: "ERROR" })],
  ["grep, last 3", q({ grep: "ERROR|fine$", limit: 3 })],
  ["grep, small budget", q({ grep: "ERROR", budget: 64 })],
  ["grep, range forward", q({ grep: "ERROR|MIIB", from: 20, to: 600, limit: 4, forward: true })],
  ["grep, up to a line", q({ grep: "[0-9]{2}0 ", to: 900, limit: 5 })],
  ["grep, key lines", q({ grep: "MIIB|Qu7h" })],
  ["grep, anchored", q({ grep: "^(ERROR|head) [0-9]+ ", limit: 10 })],
  ["head", q({ limit: 7, forward: true })],
  ["range", q({ from: 35, to: 60, forward: true })],
  ["range past the end", q({ from: 100_000, forward: true })],
  ["range, small budget", q({ from: 2, forward: true, budget: 100 })],
  ["tail", q({ limit: 5 })],
  ["default, small budget", q({ budget: 300 })],
  ["up to a line", q({ to: 44, limit: 6 })],
  ["last lines of a range", q({ from: 40, to: 45, limit: 3 })],
];

describe.each(shells.map((s) => [s.name, s] as const))("the remote log scan under %s", (_name, shell) => {
  const dirs = fixtures();
  for (const [fname, dir] of Object.entries(dirs)) {
    test(`${fname}: every query answers exactly as the in-process scan`, async () => {
      const host = hostFor(shell);
      for (const [qname, query] of queries) {
        const local = scanLocalLog(dir, "stdout", query);
        const remote = await scanRemoteLog(host, dir, "stdout", query);
        expect({ qname, ...remote, lines: view(remote) }).toEqual({ qname, ...local, lines: view(local) });
      }
    });
  }

  test("a pattern is data, never shell: quotes, $(…) and backticks reach grep as text", async () => {
    const dir = jobDir({ stdout: "a $(touch pwned) b\nq'uote\"d\n`id`\n" });
    const host = hostFor(shell);
    for (const p of ["\\$\\(touch pwned\\)", "q'uote\"d", "`id`", "'; touch pwned2; '"]) {
      const query = q({ grep: p });
      const remote = await scanRemoteLog(host, dir, "stdout", query);
      expect(view(remote)).toEqual(view(scanLocalLog(dir, "stdout", query)));
    }
    expect(Bun.spawnSync(["ls", dir]).stdout.toString()).toBe("stdout\n");
  });
});
