// The dashboard in a real browser (chromium): the token refusal, the list updating live as a job ends, the log
// tail with grep, a confirmed cancel. Screenshots go to $AWAITLESS_UI_SCREENSHOTS (default: the sandbox).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import {
  type Browser,
  browserAvailable,
  gated,
  launchBrowser,
  logShows,
  type Page,
  screenshotDir,
  startUiProcess,
  type UiProcess,
} from "./browser.ts";

if (gateOnAvailability("dashboard browser tests", browserAvailable())) {
  describe("awaitless ui in chromium", () => {
    let box: Sandbox;
    let ui: UiProcess;
    let browser: Browser;
    let page: Page;
    let shots: string;

    beforeAll(async () => {
      box = new Sandbox();
      box.writeConfig("[defaults]\npoll_interval_seconds = 0.2\n");
      ui = await startUiProcess(box);
      browser = await launchBrowser();
      page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      shots = screenshotDir(box);
    });
    afterAll(async () => {
      await browser?.close();
      for (const j of box.run(["list", "--json", "--state", "active", "--limit", "1000"]).json?.jobs ?? [])
        box.run(["cancel", "--grace-period", "0s", j.job_id]);
      await ui?.stop();
      if (!process.env.AWAITLESS_UI_SCREENSHOTS) console.log(`screenshots: ${shots}`);
    });

    test("without the token the browser gets the sign-in panel, not the dashboard", async () => {
      await page.goto(ui.url);
      await page.waitForSelector("#need-token");
      expect(await page.textContent("#need-token")).toContain("needs its token");
      expect(await page.$("#jobs-table")).toBeNull();
      const api = await page.goto(`${ui.url}api/jobs`);
      expect(api?.status()).toBe(401);
      await page.screenshot({ path: join(shots, "token-refused.png") });
    });

    test("the job list updates live when a job ends", async () => {
      const g = gated(box.root, "live");
      const id = box.submit(g.argv, ["--name", "live-end"]);
      await page.goto(ui.loginUrl);
      const row = `tr[data-job="${id}"]`;
      await page.waitForSelector(`${row}[data-state="running"]`, { timeout: 20_000 });
      await page.waitForSelector("#live.on", { timeout: 10_000 });
      g.end();
      await page.waitForSelector(`${row}[data-state="succeeded"]`, { timeout: 20_000 });
      expect(page.url()).not.toContain("token=");
      await page.screenshot({ path: join(shots, "jobs-live.png"), fullPage: true });
    });

    test("the log tail shows new lines live, and grep narrows it over the whole log", async () => {
      const g = gated(box.root, "tail");
      const id = box.submit(g.argv, ["--name", "tail-me"]);
      await page.goto(`${ui.url}#/job/${id}`);
      await logShows(page, "plain two", true, 20_000);
      g.end();
      await logShows(page, "finished tail", true, 20_000);
      expect(await page.textContent("#log")).toContain("late line");
      await page.fill("#log-grep", "ERROR");
      await page.press("#log-grep", "Enter");
      await logShows(page, "plain two", false, 10_000);
      expect(await page.textContent("#log")).toContain("ERROR one");
      expect(await page.textContent("#log-info")).toContain("stdout: lines 2–2 · 1 matches");
      await page.screenshot({ path: join(shots, "job-log.png"), fullPage: true });
    });

    test("cancel asks first, then the job is cancelled", async () => {
      const g = gated(box.root, "cancel");
      const id = box.submit(g.argv, ["--name", "cancel-me"]);
      await page.goto(`${ui.url}#/job/${id}`);
      await page.waitForSelector('#job-head [data-state="running"]', { timeout: 20_000 });
      await page.click("#cancel");
      await page.waitForSelector("#confirm-no");
      await page.click("#confirm-no");
      expect(box.status(id).state).toBe("running");
      await page.click("#cancel");
      await page.click("#confirm-yes");
      await page.waitForSelector('#job-head [data-state="cancelled"]', { timeout: 20_000 });
      expect(box.status(id).state).toBe("cancelled");
      await page.screenshot({ path: join(shots, "job-cancelled.png"), fullPage: true });
    });

    test("a failed job shows its failure digest, artifacts and parsed results; the queues page shows its line", async () => {
      const script = [
        "mkdir -p out; echo '{\"acc\": 0.25}' > out/r.json;",
        "echo 'Traceback (most recent call last): boom-7731' >&2; exit 2",
      ].join(" ");
      const id = box.submit(["sh", "-c", script], ["--name", "fails", "--artifact", "out/r.json"]);
      await page.goto(`${ui.url}#/job/${id}`);
      await page.waitForSelector('#job-head [data-state="failed"]', { timeout: 20_000 });
      await page.waitForSelector("#digest");
      expect(await page.textContent("#digest")).toContain("boom-7731");
      expect(await page.textContent("#artifacts")).toContain("out/r.json");
      expect(await page.textContent("#parsed")).toContain("0.25");
      expect(await page.textContent("#error")).toContain("exited with code 2");
      await page.screenshot({ path: join(shots, "job-failed.png"), fullPage: true });

      box.run(["queue", "create", "one", "--concurrency", "1"]);
      const g1 = gated(box.root, "q1");
      const g2 = gated(box.root, "q2");
      const first = box.submit(g1.argv, ["--queue", "one", "--name", "q-first"]);
      const second = box.submit(g2.argv, ["--queue", "one", "--name", "q-second"]);
      await page.goto(`${ui.url}#/queues`);
      await page.waitForSelector(`.queue[data-queue="one"] ol a[href="#/job/${second}"]`, {
        timeout: 20_000,
      });
      expect(await page.textContent('.queue[data-queue="one"]')).toContain("1/1 running · 1 waiting");
      await page.screenshot({ path: join(shots, "queues.png") });
      g1.end();
      g2.end();
      expect(first).not.toBe(second);
    });
  });
}
