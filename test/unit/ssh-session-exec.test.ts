// SshSession.exec against an in-process ssh2 server that answers each exec in one burst: the exec reply, the output,
// the exit status, EOF and close are written in one tick, so the client reads them in one chunk, as a loaded client
// does with a fast command (CI once saw `command -v …` and `squeue` "exit" with neither code nor signal). The status
// must survive that: ssh2 emits "exit" while parsing, before exec's caller has resumed from its await.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Connection, Server, utils } from "ssh2";
import { SshSession } from "../../src/ssh/ssh-session.ts";

type Burst = (ch: {
  write(d: string): void;
  stderr: { write(d: string): void };
  exit(s: number | string, dump?: boolean, msg?: string): void;
  end(): void;
}) => void;

// The reply to each command, all written synchronously in the exec handler.
const BURSTS: Record<string, Burst> = {
  status: (ch) => {
    ch.write("/usr/bin/find\n");
    ch.stderr.write("note\n");
    ch.exit(7);
    ch.end();
  },
  signal: (ch) => {
    ch.exit("TERM", false, "");
    ch.end();
  },
  // A channel closed with no status at all: still {code: null, signal: null} (the connection stays open).
  none: (ch) => {
    ch.write("partial");
    ch.end();
  },
};

let dir: string;
let server: Server;
const conns: Connection[] = [];
let session: SshSession;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "awl-ssh-exec-"));
  const hostKey = utils.generateKeyPairSync("ed25519");
  const clientKey = utils.generateKeyPairSync("ed25519");
  writeFileSync(join(dir, "id"), clientKey.private, { mode: 0o600 });
  server = new Server({ hostKeys: [hostKey.private] }, (conn) => {
    conns.push(conn);
    conn.on("error", () => undefined);
    conn.on("authentication", (ctx) =>
      ctx.method === "publickey" ? ctx.accept() : ctx.reject(["publickey"]),
    );
    conn.on("session", (accept) => {
      accept().on("exec", (acceptExec, _reject, info) => {
        const burst = BURSTS[info.command];
        if (burst) burst(acceptExec() as unknown as Parameters<Burst>[0]);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const [type, blob] = hostKey.public.split(" ");
  writeFileSync(join(dir, "known_hosts"), `[127.0.0.1]:${port} ${type} ${blob}\n`);
  session = await SshSession.connect({
    label: "burst",
    host: "127.0.0.1",
    port,
    user: "me",
    identityFiles: [join(dir, "id")],
    agentSocket: null,
    identitiesOnly: true,
    hostKey: {
      host: "127.0.0.1",
      port,
      userKnownHostsFiles: [join(dir, "known_hosts")],
      globalKnownHostsFiles: [],
      strict: "yes",
    },
    connectTimeoutMs: 10_000,
    keepaliveIntervalMs: 0,
    keepaliveCountMax: 3,
  });
});

afterAll(async () => {
  session?.destroy();
  for (const c of conns) c.end();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  rmSync(dir, { recursive: true, force: true });
});

test("an exit status that arrives with the exec reply is kept, with both streams", async () => {
  for (let i = 0; i < 5; i++) {
    const r = await session.exec("status", "", 10_000);
    expect({
      code: r.code,
      signal: r.signal,
      stdout: r.stdout.toString(),
      stderr: r.stderr.toString(),
    }).toEqual({
      code: 7,
      signal: null,
      stdout: "/usr/bin/find\n",
      stderr: "note\n",
    });
  }
});

test("an exit signal that arrives with the exec reply is kept", async () => {
  const r = await session.exec("signal", "", 10_000);
  expect({ code: r.code, signal: r.signal }).toEqual({ code: null, signal: "TERM" });
});

test("a channel closed without a status gives neither code nor signal, and the connection stays usable", async () => {
  const r = await session.exec("none", "", 10_000);
  expect({ code: r.code, signal: r.signal, stdout: r.stdout.toString() }).toEqual({
    code: null,
    signal: null,
    stdout: "partial",
  });
  expect(session.isOpen).toBe(true);
  expect((await session.exec("status", "", 10_000)).code).toBe(7);
});
