// Signing in to the dashboard in chromium as docs/ui.md says: the printed URL's fragment leaves the address bar and
// stays in the tab; a reload keeps it; a new tab from the printed URL or from a dashboard link is signed in; a tab
// with no way to the token shows the sign-in panel, which takes a pasted token and says when one is wrong.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Sandbox } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import { type Browser, browserAvailable, launchBrowser, startUiProcess, type UiProcess } from "./browser.ts";

if (gateOnAvailability("dashboard sign-in tests", browserAvailable())) {
  describe("signing in", () => {
    let box: Sandbox;
    let ui: UiProcess;
    let browser: Browser;
    let jobId: string;
    let token: string;

    beforeAll(async () => {
      box = new Sandbox();
      jobId = box.submit(["true"], ["--name", "signed"]);
      box.run(["wait", jobId]);
      ui = await startUiProcess(box);
      token = /#token=([0-9a-f]+)$/.exec(ui.loginUrl)![1]!;
      browser = await launchBrowser();
    });
    afterAll(async () => {
      await browser?.close();
      await ui?.stop();
    });

    const listed = (id: string) => `tr[data-job="${id}"]`;

    test("the printed URL signs in and leaves the address bar; a reload and a new tab from the URL stay signed in", async () => {
      const ctx = await browser.newContext();
      const tab = await ctx.newPage();
      await tab.goto(ui.loginUrl);
      await tab.waitForSelector(listed(jobId), { timeout: 20_000 });
      expect(tab.url()).toBe(ui.url);
      await tab.reload();
      await tab.waitForSelector(listed(jobId), { timeout: 20_000 });
      const other = await ctx.newPage();
      await other.goto(ui.loginUrl);
      await other.waitForSelector(listed(jobId), { timeout: 20_000 });
      // a tab opened from one of the dashboard's links gets the token from an open dashboard tab
      const [opened] = await Promise.all([
        ctx.waitForEvent("page"),
        tab.click(`a[href="#/job/${jobId}"]`, { modifiers: ["Control"] }),
      ]);
      await opened.waitForSelector("#summary", { timeout: 20_000 });
      expect(await opened.$("#need-token")).toBeNull();
      await ctx.close();
    });

    test("with no dashboard tab open, the address alone shows the sign-in panel; a pasted token opens it, a wrong one is said", async () => {
      const ctx = await browser.newContext();
      const tab = await ctx.newPage();
      await tab.goto(ui.url);
      await tab.waitForSelector("#need-token");
      expect(await tab.$(listed(jobId))).toBeNull();
      await tab.fill("#token-input", "0".repeat(token.length));
      await tab.press("#token-input", "Enter");
      await tab.waitForSelector("#signin-why");
      expect(await tab.textContent("#signin-why")).toContain("wrong token");
      await tab.fill("#token-input", ui.loginUrl);
      await tab.press("#token-input", "Enter");
      await tab.waitForSelector(listed(jobId), { timeout: 20_000 });
      expect(await tab.$("#need-token")).toBeNull();
      await ctx.close();
    });
  });
}
