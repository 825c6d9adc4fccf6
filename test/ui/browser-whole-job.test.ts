// The dashboard's job page in chromium: what the command left running (listed, stopped or kept) and what the job
// cost; a job that kept processes can be cancelled from its page, which stops them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, pidAlive, Sandbox, until } from "../helpers/cli.ts";
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

if (gateOnAvailability("dashboard browser tests", browserAvailable())) {
  describe("the whole job on the dashboard", () => {
    let box: Sandbox;
    let ui: UiProcess;
    let browser: Browser;
    let page: Page;
    let shots: string;
    const left: number[] = [];

    beforeAll(async () => {
      box = new Sandbox();
      box.writeConfig("[defaults]\npoll_interval_seconds = 0.2\n");
      ui = await startUiProcess(box);
      browser = await launchBrowser();
      page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      shots = screenshotDir(box);
    });
    afterAll(async () => {
      for (const p of left) killQuietly(p);
      await browser?.close();
      await ui?.stop();
    });

    const leaving = ["sh", "-c", 'setsid sleep 300 & echo $! > "$AWAITLESS_JOB_DIR/left"; echo up'];
    const leftPid = (id: string) =>
      Number(readFileSync(join(box.run(["inspect", "--json", id]).json.job_dir, "left"), "utf8"));

    test("a job's page lists what its command left and says it was stopped, and what the job cost", async () => {
      const id = box.submit(leaving);
      expect(box.run(["wait", "--json", id]).json.state).toBe("succeeded");
      await page.goto(ui.loginUrl);
      await page.goto(`${ui.url}#/job/${id}`);
      await page.waitForSelector("#leftovers", { timeout: 20_000 });
      expect(await page.textContent("#leftovers")).toContain("left 1 process running: stopped");
      expect(await page.textContent("#leftover-processes")).toContain(`${leftPid(id)} `);
      expect(await page.textContent("#resources")).toMatch(/^Resources: CPU /);
      expect(await page.isDisabled("#cancel")).toBe(true);
      await page.screenshot({ path: join(shots, "job-leftovers.png"), fullPage: true });
    });

    test("a job that kept processes running can be cancelled from its page, which stops them", async () => {
      const id = box.submit(leaving, ["--keep-leftovers"]);
      expect(box.run(["wait", "--json", id]).json.state).toBe("succeeded");
      const pid = leftPid(id);
      left.push(pid);
      await page.goto(`${ui.url}#/job/${id}`);
      await page.waitForSelector("#leftovers", { timeout: 20_000 });
      expect(await page.textContent("#leftovers")).toContain("kept running (Cancel stops them)");
      expect(pidAlive(pid)).toBe(true);
      await page.click("#cancel");
      await page.click("#confirm-yes");
      await until("the kept process to be stopped", () => !pidAlive(pid), 20_000);
      expect(box.status(id).state).toBe("succeeded");
    });
  });
}
