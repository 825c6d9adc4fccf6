// The dashboard's first paint in chromium: "Loading" until the feed's first listing (never "No finished jobs yet" or
// "0 of 0" before data), its own icon and no console error or failed request, human labels on a job's page, and a
// time axis under the chart.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import {
  type Browser,
  browserAvailable,
  launchBrowser,
  type Page,
  screenshotDir,
  startUiProcess,
  type UiProcess,
} from "./browser.ts";

if (gateOnAvailability("dashboard first-paint tests", browserAvailable())) {
  describe("the dashboard's first paint", () => {
    let box: Sandbox;
    let ui: UiProcess;
    let browser: Browser;
    let shots: string;
    const ids: string[] = [];

    beforeAll(async () => {
      box = new Sandbox();
      ids.push(box.submit(["sh", "-c", "head -c 3000 /dev/zero | tr '\\0' x"], ["--name", "prints"]));
      ids.push(box.submit(["sh", "-c", "echo oops >&2; exit 3"], ["--name", "fails"]));
      for (const id of ids) box.run(["wait", id]);
      ui = await startUiProcess(box);
      browser = await launchBrowser();
      shots = screenshotDir(box);
    });
    afterAll(async () => {
      await browser?.close();
      await ui?.stop();
      if (!process.env.AWAITLESS_UI_SCREENSHOTS) console.log(`screenshots: ${shots}`);
    });

    /** A page that records every console error and every answer of 400 or more. */
    async function watchedPage(): Promise<{ page: Page; problems: string[] }> {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const problems: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
      });
      page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
      page.on("response", (r) => {
        if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${r.url()}`);
      });
      page.on("requestfailed", (r) => {
        // the live stream is aborted when the page goes away: not a failure the user sees
        if (!r.url().endsWith("/api/events")) problems.push(`failed ${r.url()}: ${r.failure()?.errorText}`);
      });
      return { page, problems };
    }

    test("Loading until the first listing, then the jobs; an icon; no console error, no failed request", async () => {
      const { page, problems } = await watchedPage();
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      // the feed's first listing is held back: the page as it is before any data
      await page.route("**/api/events", async (route) => {
        await held;
        await route.continue();
      });
      await page.goto(ui.loginUrl);
      await page.waitForSelector("#loading");
      const before = (await page.textContent("main")) ?? "";
      expect(before).toContain("Loading");
      expect(before).not.toContain("No finished jobs yet");
      expect(before).not.toMatch(/0 of 0/);
      await page.screenshot({ path: join(shots, "first-paint-loading.png") });
      release();
      await page.waitForSelector(`tr[data-job="${ids[0]}"]`, { timeout: 20_000 });
      expect(await page.$("#loading")).toBeNull();
      expect(await page.textContent("#count")).toContain("2 of 2 listed");
      // the icon the page names is served (the browser asks for it itself)
      expect(await page.getAttribute('link[rel="icon"]', "href")).toBe("/favicon.svg");
      const icon = await page.evaluate(async () => (await fetch("/favicon.svg")).headers.get("content-type"));
      expect(icon).toContain("image/svg+xml");
      // a time axis under the chart: ticks with times on them
      const ticks = await page.$$eval("#chart-axis .tick", (els) => els.map((e) => e.textContent ?? ""));
      expect(ticks.length).toBeGreaterThanOrEqual(2);
      for (const t of ticks) expect(t).toMatch(/\d{1,2}[:.]\d{2}/);
      await page.screenshot({ path: join(shots, "first-paint-jobs.png") });
      await page.close();
      expect(problems).toEqual([]);
    });

    test("a job's page shows human labels and units, not wire keys or JSON", async () => {
      const { page, problems } = await watchedPage();
      await page.goto(ui.loginUrl);
      await page.goto(`${ui.url}#/job/${ids[0]}`);
      await page.waitForSelector("#summary dt");
      const labels = await page.$$eval("#summary dt", (els) => els.map((e) => e.textContent ?? ""));
      expect(labels).toContain("stdout");
      expect(labels).toContain("exit code");
      expect(labels).toContain("working directory");
      expect(labels).toContain("process");
      for (const l of labels) expect(l).not.toContain("_");
      const summary = (await page.textContent("#summary")) ?? "";
      expect(summary).toContain("2.9 KiB (3,000 bytes)");
      expect(summary).not.toContain("stdout_bytes");
      expect(summary).not.toContain("backend_id");
      expect(summary).not.toContain("{");
      const specLabels = await page.$$eval("#spec dt", (els) => els.map((e) => e.textContent ?? ""));
      for (const l of specLabels) expect(l).not.toContain("_");
      const resultLabels = await page.$$eval("#result dt", (els) => els.map((e) => e.textContent ?? ""));
      for (const l of resultLabels) expect(l).not.toContain("_");
      await page.screenshot({ path: join(shots, "first-paint-job.png"), fullPage: true });
      await page.close();
      expect(problems).toEqual([]);
    });
  });
}
