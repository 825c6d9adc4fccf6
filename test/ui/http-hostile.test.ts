// `awaitless ui` from the compiled binary against hostile HTTP: malformed Host headers and unknown paths get our own
// small error page (no script, no source, no working directory, our CSP, no token needed); idle keep-alive sockets
// are closed; 300 sockets held by another local user cannot starve the owner of a server with 256 descriptors.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, Sandbox, until } from "../helpers/cli.ts";
import { createLocalUser, localUsersAvailable, reachableBy } from "../helpers/local-users.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import { raw } from "./http.ts";

const box = new Sandbox();
afterAll(() => box.cleanup());

interface Ui {
  port: number;
  token: string;
  pid: number;
  stop(): Promise<number>;
}

/** `awaitless ui --json`, optionally under `ulimit -n`; its URL read from its first line; stopped by PID. */
async function startUi(fdLimit?: number): Promise<Ui> {
  const argv = fdLimit
    ? ["sh", "-c", `ulimit -n ${fdLimit} && exec "$0" ui --json`, BINARY]
    : [BINARY, "ui", "--json"];
  const proc = Bun.spawn(argv, { cwd: box.work, env: box.env, stdout: "pipe", stderr: "pipe" });
  const reader = proc.stdout.getReader();
  let text = "";
  await until("the URL line", async () => {
    const { value, done } = await reader.read();
    if (done) throw new Error(`awaitless ui exited: ${await new Response(proc.stderr).text()}`);
    text += new TextDecoder().decode(value);
    return text.includes("\n");
  });
  const { port, url } = JSON.parse(text.split("\n")[0]!) as { port: number; url: string };
  const token = /token=([0-9a-f]+)/.exec(url)?.[1] ?? "";
  return {
    port,
    token,
    pid: proc.pid,
    async stop() {
      proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}

/** One request with any Host, on a socket of its own; the whole answer as the server sent it. */
function rawHost(port: number, host: string, path = "/"): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = connect(port, "127.0.0.1", () =>
      s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
    );
    s.on("data", (c) => chunks.push(Buffer.from(c)));
    s.on("error", reject);
    s.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

function expectOurPage(answer: string, token: string) {
  const [head = "", body = ""] = answer.split("\r\n\r\n");
  expect(head).toMatch(/^HTTP\/1\.1 (400|403|404) /);
  expect(head.toLowerCase()).toContain("content-security-policy: default-src 'none'");
  expect(body).toContain("Awaitless dashboard:");
  expect(body).not.toContain("<script");
  expect(body).not.toContain("__bunfallback");
  expect(body).not.toContain(box.work);
  expect(body).not.toContain(process.cwd());
  expect(body).not.toContain("bunfs");
  expect(body).not.toContain(token);
  expect(body.length).toBeLessThan(2000);
}

describe("errors are our own page", () => {
  test("a malformed Host, a rebinding Host, an unknown path: small pages of ours, with our CSP, no token needed", async () => {
    const ui = await startUi();
    try {
      for (const host of [
        "a b",
        "[::1",
        "x:y:z",
        "%%",
        "",
        `127.0.0.1:${ui.port}/x`,
        "<script>x</script>",
        "h".repeat(5000),
      ]) {
        const answer = await rawHost(ui.port, host);
        expectOurPage(answer, ui.token);
        expect(answer).not.toContain("<script>x");
      }
      expectOurPage(await rawHost(ui.port, `127.0.0.1:${ui.port}`, "/no/such/page"), ui.token);
      // the API answers JSON errors, as the page reads them
      const api = await raw(ui.port, "GET", "/api/nothing", { "x-awaitless-token": ui.token });
      expect(api.status).toBe(404);
      expect(JSON.parse(api.body).error.code).toBe("not_found");
      const badEscape = await raw(ui.port, "GET", "/api/jobs/%E0%A4%A", { "x-awaitless-token": ui.token });
      expect(badEscape.status).toBe(400);
    } finally {
      expect(await ui.stop()).toBe(0);
    }
  });
});

describe("sockets", () => {
  test("an idle keep-alive socket is closed by the server; a refused one right after its answer", async () => {
    const ui = await startUi();
    try {
      const closedAfter = (headers: string) =>
        new Promise<string>((resolve, reject) => {
          let got = "";
          const s = connect(ui.port, "127.0.0.1", () =>
            s.write(`GET /api/jobs HTTP/1.1\r\nHost: 127.0.0.1:${ui.port}\r\n${headers}\r\n`),
          );
          s.on("data", (c) => {
            got += c.toString();
          });
          s.on("error", reject);
          s.on("close", () => resolve(got));
        });
      const refused = await closedAfter("");
      expect(refused).toMatch(/^HTTP\/1\.1 401 /);
      expect(refused.toLowerCase()).toContain("connection: close");
      // with the token the connection is kept for the next request, until it has been idle a while
      const kept = await Promise.race([
        closedAfter(`X-Awaitless-Token: ${ui.token}\r\n`),
        Bun.sleep(60_000).then(() => "still open after 60 s"),
      ]);
      expect(kept).toMatch(/^HTTP\/1\.1 200 /);
      expect(kept.toLowerCase()).not.toContain("connection: close");
    } finally {
      await ui.stop();
    }
  }, 90_000);
});

if (gateOnAvailability("the socket flood of another local user", localUsersAvailable())) {
  describe("another user's socket flood", () => {
    test("300 held sockets against a server with 256 descriptors: the owner is still answered", async () => {
      const other = createLocalUser("awl-uif-");
      const bun = reachableBy(other, process.execPath);
      const dir = mkdtempSync(join(tmpdir(), "awl-flood-"));
      chmodSync(dir, 0o755);
      const script = join(dir, "socket-flood.ts");
      copyFileSync(join(import.meta.dir, "socket-flood.ts"), script);
      chmodSync(script, 0o644);
      const ui = await startUi(256);
      let flood: ReturnType<typeof other.spawn> | undefined;
      try {
        flood = other.spawn([bun.path, script, String(ui.port), "300", "request"]);
        const counts: { connected: number; closed: number }[] = [];
        const out = flood.stdout;
        (async () => {
          const dec = new TextDecoder();
          let buf = "";
          for await (const chunk of out) {
            buf += dec.decode(chunk, { stream: true });
            const lines = buf.split("\n");
            buf = lines.pop() ?? "";
            for (const l of lines) if (l) counts.push(JSON.parse(l));
          }
        })();
        await until(
          "the flood to have connected 300 sockets",
          () => counts.at(-1)?.connected === 300,
          30_000,
        );
        const t0 = performance.now();
        const answered = await until(
          "the owner's request to be answered",
          async () => {
            const r = await fetch(`http://127.0.0.1:${ui.port}/api/jobs`, {
              headers: { "x-awaitless-token": ui.token },
              signal: AbortSignal.timeout(5_000),
            }).catch(() => null);
            return r?.status === 200 ? r : null;
          },
          60_000,
          100,
        );
        expect(answered.status).toBe(200);
        console.log(
          `owner answered ${(performance.now() - t0).toFixed(0)} ms after 300 held sockets; the server had closed ${counts.at(-1)?.closed} of them`,
        );
        await until(
          "the server to have closed every flood socket",
          () => counts.at(-1)?.closed === 300,
          60_000,
        );
      } finally {
        flood?.kill("SIGTERM");
        await flood?.exited;
        await ui.stop();
        rmSync(dir, { recursive: true, force: true });
        bun.dispose();
        other.remove();
      }
    }, 180_000);
  });
}
