// The jobs page in a real browser (chromium) with a 1,000-task array and 50 other jobs: the window of the newest 500
// counts jobs and arrays, so all 50 jobs and the array's one row show, and the row marks its last task's end live.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Sandbox, until } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import {
  type Browser,
  browserAvailable,
  launchBrowser,
  type Page,
  screenshotDir,
  startUiProcess,
  textShows,
  type UiProcess,
} from "./browser.ts";

if (gateOnAvailability("dashboard browser tests (a 1,000-task array)", browserAvailable())) {
  describe("a 1,000-task array beside 50 jobs in chromium", () => {
    let box: Sandbox;
    let ui: UiProcess;
    let browser: Browser;
    let page: Page;
    let shots: string;
    let arrayId = "";
    const others: string[] = [];
    const end = () => join(box.root, "end-0");

    beforeAll(async () => {
      box = new Sandbox();
      box.writeConfig("[defaults]\npoll_interval_seconds = 0.2\n");
      for (let i = 0; i < 50; i++) others.push(box.submit(["sh", "-c", "exit 0", `other-${i}`]));
      // task 0 waits (bounded) for the test's file; every other task ends at once
      const script =
        '[ "$AWAITLESS_ARRAY_INDEX" = 0 ] || exit 0; i=0; while [ ! -e "$1" ] && [ "$i" -lt 3000 ]; do i=$((i + 1)); sleep 0.1; done';
      arrayId = box.submit(["sh", "-c", script, "big", end()], ["--array", "0-999", "--name", "big"]);
      await until(
        "999 of the array's tasks ended",
        async () => box.run(["status", "--json", arrayId]).json?.counts?.succeeded === 999,
        120_000,
        500,
      );
      ui = await startUiProcess(box);
      browser = await launchBrowser();
      page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      shots = screenshotDir(box);
      await page.goto(ui.loginUrl);
    }, 240_000);
    afterAll(async () => {
      await browser?.close();
      if (box) writeFileSync(end(), "");
      if (arrayId) box.run(["cancel", "--grace-period", "0s", arrayId]);
      await ui?.stop();
      if (!process.env.AWAITLESS_UI_SCREENSHOTS && shots) console.log(`screenshots: ${shots}`);
    });

    test("all 50 jobs and the array's one row show; the row marks the last task's end live", async () => {
      await page.goto(`${ui.url}#/`);
      const row = `tr.array-row[data-array="${arrayId}"]`;
      await page.waitForSelector(row, { timeout: 20_000 });
      await textShows(page, `${row} .array-progress`, "999/1000 ended", 20_000);
      for (const id of others) expect(await page.$(`tr[data-job="${id}"]`)).not.toBeNull();
      expect(await page.$$("#jobs-table tbody tr")).toHaveLength(51);
      expect(await page.textContent("#count")).toContain("51 of 51 listed");
      expect(await page.getAttribute(row, "data-state")).toBe("running");
      writeFileSync(end(), "");
      await page.waitForSelector(`${row}[data-state="succeeded"]`, { timeout: 30_000 });
      expect(await page.textContent(`${row} .array-progress`)).toContain("1000/1000 ended · 1000 succeeded");
      await page.screenshot({ path: join(shots, "jobs-large-array.png"), fullPage: true });
    }, 90_000);
  });
}
