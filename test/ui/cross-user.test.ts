// Two local users, two servers on two ports: the victim's `awaitless ui` and another user's server. The victim's
// browser (chromium) signs in to its own dashboard, then opens the other user's page, in the same tab and in a new
// one; that page tries what a page can. Whatever the other server received (cookies, headers, URLs, what its page
// found) is replayed against the victim's dashboard: every replay is refused (401/403), the job is untouched.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, requireBinary, until } from "../helpers/cli.ts";
import { createLocalUser, type LocalUser, localUsersAvailable, reachableBy } from "../helpers/local-users.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import { type Browser, both, browserAvailable, launchBrowser } from "./browser.ts";
import { raw } from "./http.ts";

/** The lines a child prints, as they come. */
function lines(proc: { stdout: ReadableStream<Uint8Array> }): string[] {
  const seen: string[] = [];
  (async () => {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += dec.decode(chunk, { stream: true });
      let i = buf.indexOf("\n");
      while (i >= 0) {
        seen.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
        i = buf.indexOf("\n");
      }
    }
  })();
  return seen;
}

interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

if (
  gateOnAvailability("the dashboard across two local users", both(browserAvailable(), localUsersAvailable()))
) {
  describe("another user's server opened by the victim's browser", () => {
    let victim: LocalUser;
    let other: LocalUser;
    let browser: Browser;
    const stops: (() => void)[] = [];
    let victimUi: { url: string; base: string; token: string; port: number };
    let otherUrl: string;
    let recorded: string[];
    let jobId: string;
    let victimRun: (args: string[]) => { code: number; stdout: string; stderr: string };

    beforeAll(async () => {
      requireBinary();
      victim = createLocalUser("awl-uiv-");
      stops.push(() => victim.remove());
      other = createLocalUser("awl-uio-");
      stops.push(() => other.remove());
      const bin = reachableBy(victim, BINARY);
      stops.push(bin.dispose);
      const bun = reachableBy(other, process.execPath);
      stops.push(bun.dispose);
      // the other user's server script, where that user can read it
      const dir = mkdtempSync(join(tmpdir(), "awl-other-page-"));
      chmodSync(dir, 0o755);
      stops.push(() => rmSync(dir, { recursive: true, force: true }));
      const script = join(dir, "other-user-server.ts");
      copyFileSync(join(import.meta.dir, "other-user-server.ts"), script);
      chmodSync(script, 0o644);

      // the victim's own defaults: data and config under its home
      victimRun = (args) => victim.run([bin.path, ...args]);
      const sub = victimRun(["submit", "--json", "--name", "victims-job", "--", "sleep", "300"]);
      expect({ code: sub.code, stderr: sub.stderr }).toEqual({ code: 0, stderr: "" });
      jobId = JSON.parse(sub.stdout).job_id;
      stops.push(() => victimRun(["cancel", "--grace-period", "0s", jobId]));

      const ui = victim.spawn([bin.path, "ui", "--json"]);
      stops.push(() => ui.kill("SIGTERM"));
      const uiOut = lines(ui);
      const first = await until("the victim's ui to print its URL", () => uiOut[0], 20_000);
      const { url, port } = JSON.parse(first) as { url: string; port: number };
      const token = /token=([0-9a-f]+)/.exec(url)?.[1] ?? "";
      expect(token.length).toBe(48);
      victimUi = { url, token, port, base: url.replace(/[#?]token=.*$/, "") };

      const rec = other.spawn([bun.path, script, victimUi.base, jobId]);
      stops.push(() => rec.kill("SIGTERM"));
      recorded = lines(rec);
      const head = await until("the other user's server to listen", () => recorded[0], 20_000);
      otherUrl = `http://127.0.0.1:${(JSON.parse(head) as { port: number }).port}/`;
      expect(otherUrl).not.toContain(`:${victimUi.port}/`);

      browser = await launchBrowser();
    });
    afterAll(async () => {
      await browser?.close();
      for (const stop of stops.reverse()) {
        try {
          stop();
        } catch (e) {
          console.warn(`cleanup: ${String(e)}`);
        }
      }
    });

    const reports = () =>
      recorded.slice(1).filter((l) => (JSON.parse(l) as Recorded).url.endsWith("/report"));

    test("nothing the other server gets works against the victim's dashboard", async () => {
      const ctx = await browser.newContext();
      const tab = await ctx.newPage();
      // the victim signs in to its own dashboard and sees its job
      await tab.goto(victimUi.url);
      await tab.waitForSelector(`tr[data-job="${jobId}"]`, { timeout: 20_000 });
      expect(tab.url()).toBe(victimUi.base);
      // then, in the same tab, opens the other user's page; then again in a new tab
      await tab.goto(otherUrl);
      await until("the other page's first report", () => reports().length >= 1, 20_000);
      const second = await ctx.newPage();
      await second.goto(otherUrl);
      await until("the other page's second report", () => reports().length >= 2, 20_000);
      // back in the victim's tab, the dashboard still works (a reload keeps this tab's token)
      await tab.goto(victimUi.base);
      await tab.waitForSelector(`tr[data-job="${jobId}"]`, { timeout: 20_000 });
      await tab.reload();
      await tab.waitForSelector(`tr[data-job="${jobId}"]`, { timeout: 20_000 });
      await ctx.close();

      const got = recorded.slice(1).map((l) => JSON.parse(l) as Recorded);
      expect(got.length).toBeGreaterThan(2);
      const everything = JSON.stringify(got);
      // every header the other server saw, replayed with curl's freedom (no Origin), on a read and on an action
      const tries: Record<string, string>[] = [];
      for (const r of got) {
        const { host: _h, origin: _o, "content-length": _c, connection: _k, ...h } = r.headers;
        tries.push(h);
      }
      // and anything in what it got that looks like a token, in every place a credential could go
      for (const candidate of new Set(everything.match(/[0-9a-f]{32,}/g) ?? []))
        tries.push({ "x-awaitless-token": candidate }, { cookie: `awaitless_ui_token=${candidate}` });
      for (const headers of tries) {
        const read = await raw(victimUi.port, "GET", "/api/jobs", headers);
        const cancel = await raw(victimUi.port, "POST", `/api/jobs/${jobId}/cancel`, headers);
        expect({
          headers,
          read: [401, 403].includes(read.status),
          cancel: [401, 403].includes(cancel.status),
        }).toEqual({ headers, read: true, cancel: true });
      }
      expect(everything).not.toContain(victimUi.token);
      // what the other page found in the browser: no storage of the victim's origin, no window it could read
      const found = got.filter((r) => r.url.endsWith("/report")).flatMap((r) => JSON.parse(r.body));
      const byWhat = (w: string) => found.filter((f: { what: string }) => f.what === w);
      for (const f of byWhat("api cors")) expect(f.ok).toBe(false);
      for (const f of byWhat("opened window text")) expect(f.ok).toBe(false);
      for (const f of byWhat("opened window storage")) expect(f.ok).toBe(false);
      expect(JSON.parse(victimRun(["status", "--json", jobId]).stdout).state).toBe("running");
    }, 120_000);
  });
}
