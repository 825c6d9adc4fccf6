// The dashboard's job-graph views in a real browser (chromium): an array folded into one row of the jobs list, its
// page (counts, task grid, failed indices, live as tasks end, a confirmed cancel of the whole array), a task's page,
// and a retried job's attempt history with each earlier attempt's own output.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import {
  type Browser,
  browserAvailable,
  launchBrowser,
  logShows,
  type Page,
  screenshotDir,
  startUiProcess,
  textShows,
  type UiProcess,
} from "./browser.ts";

/** Task 3 fails at once (exit 3); every other task waits (bounded) for the test's end file, then succeeds. */
function arrayCommand(end: string): string[] {
  const script = [
    'if [ "$AWAITLESS_ARRAY_INDEX" = 3 ]; then echo "task 3 breaks" >&2; exit 3; fi;',
    'i=0; while [ ! -e "$1" ] && [ "$i" -lt 3000 ]; do i=$((i + 1)); sleep 0.1; done;',
    'echo "task $AWAITLESS_ARRAY_INDEX done"',
  ].join(" ");
  return ["sh", "-c", script, "arr", end];
}

const texts = (page: Page, selector: string) =>
  page.$$eval(selector, (els) => els.map((e) => (e as { textContent: string | null }).textContent ?? ""));

if (gateOnAvailability("dashboard browser tests (job graphs)", browserAvailable())) {
  describe("arrays and attempts in chromium", () => {
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
      page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      shots = screenshotDir(box);
      await page.goto(ui.loginUrl);
    });
    afterAll(async () => {
      await browser?.close();
      for (const j of box.run(["list", "--json", "--state", "active", "--limit", "1000"]).json?.jobs ?? [])
        box.run(["cancel", "--grace-period", "0s", j.job_id]);
      await ui?.stop();
      if (!process.env.AWAITLESS_UI_SCREENSHOTS) console.log(`screenshots: ${shots}`);
    });

    test("an array is one row of the jobs list with its progress, unfolding to its tasks", async () => {
      const end = join(box.root, "end-fold");
      const id = box.submit(arrayCommand(end), ["--array", "0-5%4", "--name", "sweep"]);
      const tasks = box.run(["inspect", "--json", id]).json.task_list as { index: number; job_id: string }[];
      expect(tasks.length).toBe(6);
      await page.goto(`${ui.url}#/`);
      const row = `tr.array-row[data-array="${id}"]`;
      await page.waitForSelector(row, { timeout: 20_000 });
      await textShows(page, `${row} .array-progress`, "1 failed", 20_000);
      // folded: no task has a row of its own
      // (a task listed as a job in the moment before its link to the array is forgotten at the next listing)
      const taskIds = tasks.map((t) => t.job_id);
      await page.waitForFunction(
        (ids) => {
          // biome-ignore lint/suspicious/noExplicitAny: the page's document
          const doc = (globalThis as any).document;
          return ids.every((id) => doc.querySelector(`tr[data-job="${id}"]`) === null);
        },
        taskIds,
        { timeout: 20_000 },
      );
      expect(await page.textContent(`${row} .array-progress`)).toContain("/6 ended");
      expect(await page.textContent("#count")).toContain("folded");
      await page.click(`${row} button.fold`);
      await page.waitForSelector(`tr.task-row[data-job="${tasks[3]!.job_id}"][data-state="failed"]`);
      // the unfolded rows come from the array's own read: wait for all six rather than race a re-render
      await page.waitForFunction(
        // biome-ignore lint/suspicious/noExplicitAny: the page's document
        () => (globalThis as any).document.querySelectorAll("tr.task-row[data-job]").length === 6,
        undefined,
        {
          timeout: 20_000,
        },
      );
      await page.screenshot({ path: join(shots, "jobs-array-row.png"), fullPage: true });
      // the queue filter offers named queues only: the array's private queue is its row's
      const queues = await page.$$eval("#f-queue option", (els) =>
        els.map((e) => (e as unknown as { value: string }).value),
      );
      expect(queues.filter((q) => q.startsWith("array."))).toEqual([]);
      // the queues page counts the active array's private queue, as `queue list` does
      await page.goto(`${ui.url}#/queues`);
      await textShows(page, "#hidden-array-queues", "job array", 20_000);
      expect(await page.textContent("#hidden-array-queues")).toMatch(
        /^\d+ job arrays? active, (its|their) private queues? not shown/,
      );
      expect(await page.$(`section.queue[data-queue="array.${id}"]`)).toBeNull();
      await page.goto(`${ui.url}#/`);
      await page.waitForSelector(row);
      writeFileSync(end, "");
      await page.waitForSelector(`${row}[data-state="failed"]`, { timeout: 30_000 });
      expect(await page.textContent(`${row} .array-progress`)).toContain("6/6 ended");
      // a filter picks tasks: the row stays whole (its progress counts every task), unfolded it shows the matching
      await page.selectOption("#f-state", "failed");
      await page.waitForFunction(() => {
        // biome-ignore lint/suspicious/noExplicitAny: the page's document
        return (globalThis as any).document.querySelectorAll("tr.task-row[data-job]").length === 1;
      });
      expect(await page.getAttribute("tr.task-row[data-job]", "data-job")).toBe(tasks[3]!.job_id);
      expect(await page.textContent(`${row} .array-progress`)).toContain(
        "6/6 ended · 5 succeeded · 1 failed",
      );
      await page.selectOption("#f-state", "");
    }, 90_000);

    test("the array page: counts, the task grid and failed indices, live as tasks end; a task's page links back", async () => {
      const end = join(box.root, "end-page");
      const id = box.submit(arrayCommand(end), ["--array", "0-5%4", "--name", "sweep-page"]);
      await page.goto(`${ui.url}#/array/${id}`);
      await page.waitForSelector('#task-grid .cell[data-index="3"][data-state="failed"]', {
        timeout: 20_000,
      });
      expect(await page.$$("#task-grid .cell")).toHaveLength(6);
      expect(await page.textContent("#failed-indices")).toBe("failed: 3 ");
      expect(await page.getAttribute('#task-grid .cell[data-index="3"]', "title")).toContain("exit 3");
      expect(await page.textContent("#array-head")).toContain("at most 4 at once");
      // live: the page follows the tasks ending without a reload
      await page.waitForSelector('#task-grid .cell[data-state="running"]', { timeout: 20_000 });
      writeFileSync(end, "");
      await page.waitForSelector('#task-grid .cell[data-index="5"][data-state="succeeded"]', {
        timeout: 30_000,
      });
      await page.waitForSelector('#array-head [data-state="failed"]', { timeout: 20_000 });
      expect(await page.textContent("#array-counts")).toContain("6 of 6 tasks ended");
      expect(await page.textContent("#array-counts")).toContain("5 succeeded");
      expect(await page.isDisabled("#cancel-array")).toBe(true);
      await page.screenshot({ path: join(shots, "array-page.png"), fullPage: true });
      // a task's page: its own log, and a link to its array
      await page.click('#task-grid .cell[data-index="3"]');
      await page.waitForSelector("#array-task");
      expect(await page.textContent("#array-task")).toBe(`task 3 of array ${id}`);
      await page.waitForSelector("#digest");
      expect(await page.textContent("#digest")).toContain("task 3 breaks");
      // the array's own ID given as a job goes to the array page
      await page.goto(`${ui.url}#/job/${id}`);
      await page.waitForSelector("#task-grid");
      expect(page.url()).toContain(`#/array/${id}`);
    }, 90_000);

    test("cancel of the whole array asks first; then no task runs and waiting ones never start", async () => {
      const end = join(box.root, "end-never");
      const id = box.submit(arrayCommand(end), ["--array", "10-17%2", "--name", "to-cancel"]);
      // a task's page by its address follows that task live: cancelled from the CLI, it shows at once
      await page.goto(`${ui.url}#/job/${id}.10`);
      await page.waitForSelector('#job-head [data-state="running"]', { timeout: 20_000 });
      expect(await page.textContent("#array-task")).toBe(`task 10 of array ${id}`);
      expect((await box.runAsync(["cancel", `${id}.10`])).code).toBe(0);
      await page.waitForSelector('#job-head [data-state="cancelled"]', { timeout: 20_000 });
      await page.goto(`${ui.url}#/array/${id}`);
      await page.waitForSelector('#task-grid .cell[data-state="running"]', { timeout: 20_000 });
      await page.click("#cancel-array");
      await page.click("#confirm-no");
      expect(box.run(["status", "--json", id]).json.state).not.toBe("cancelled");
      await page.click("#cancel-array");
      await page.click("#confirm-yes");
      await page.waitForSelector('#array-head [data-state="cancelled"]', { timeout: 30_000 });
      const states = await page.$$eval("#task-grid .cell", (els) =>
        els.map((e) => (e as unknown as { dataset: { state: string } }).dataset.state),
      );
      expect(states).toEqual(Array(8).fill("cancelled"));
      const st = box.run(["status", "--json", id]).json;
      expect(st.cancelled_indices).toEqual([10, 11, 12, 13, 14, 15, 16, 17]);
      expect(await page.textContent("#action-msg")).toContain("cancel requested for 7 tasks (1 had ended)");
    }, 90_000);

    test("submit again on one task: a standalone job with that task's index env, said so before and after", async () => {
      const id = box.submit(
        ["sh", "-c", 'echo "index $AWAITLESS_ARRAY_INDEX of $AWAITLESS_ARRAY_ID"'],
        ["--array", "0-1", "--name", "again"],
      );
      await page.goto(`${ui.url}#/job/${id}.1`);
      await page.waitForSelector('#job-head [data-state="succeeded"]', { timeout: 30_000 });
      expect(await page.textContent("#submit-again")).toBe("Submit this task again…");
      await page.click("#submit-again");
      const question = await page.textContent(".dialog p");
      expect(question).toContain(`task 1 of array ${id} again as a standalone job`);
      expect(question).toContain("AWAITLESS_ARRAY_INDEX=1");
      expect(question).toContain("outside the array");
      await page.click("#confirm-yes");
      await page.waitForSelector("#from-array-task", { timeout: 20_000 });
      expect(await page.textContent("#from-array-task")).toContain(`Submitted again from task ${id}.1`);
      const again = decodeURIComponent(page.url().split("#/job/")[1]!);
      await page.waitForSelector('#job-head [data-state="succeeded"]', { timeout: 30_000 });
      await logShows(page, `index 1 of ${id}`, true, 20_000);
      expect(await page.$("#array-task")).toBeNull();
      // not a task: outside the array's queue, its counts unchanged; its own row in the jobs list
      const st = box.run(["status", "--json", again]).json;
      expect(st.queue ?? null).toBeNull();
      expect(st.array_task).toBeUndefined();
      const arr = box.run(["status", "--json", id]).json;
      expect([arr.tasks, arr.counts]).toEqual([2, { succeeded: 2 }]);
      await page.goto(`${ui.url}#/`);
      await page.waitForSelector(`tr[data-job="${again}"]:not(.task-row)`, { timeout: 20_000 });
      await page.screenshot({ path: join(shots, "task-submitted-again.png"), fullPage: true });
    }, 90_000);

    test("a retried job shows every attempt: state, exit code, reason and each earlier attempt's own output", async () => {
      const counter = join(box.root, "attempts-count");
      const script = [
        'n=$(cat "$1" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$1";',
        'echo "output of run $n"; [ "$n" -ge 3 ] || { echo "run $n fails" >&2; exit 7; }',
      ].join(" ");
      const id = box.submit(
        ["sh", "-c", script, "retry", counter],
        ["--name", "flaky", "--retries", "2", "--retry-on", "exit", "--retry-backoff", "0.2s"],
      );
      await page.goto(`${ui.url}#/job/${id}`);
      await page.waitForSelector('#job-head [data-state="succeeded"]', { timeout: 60_000 });
      await page.waitForSelector('#attempts tr.attempt[data-attempt="1"]');
      expect(await page.textContent("#job-head")).toContain("attempt 3 of 3");
      expect(await texts(page, "#attempts tbody tr td:first-child")).toEqual(["3 (this one)", "2", "1"]);
      const first = '#attempts tr.attempt[data-attempt="1"]';
      expect(await page.getAttribute(first, "data-state")).toBe("failed");
      expect(await texts(page, `${first} td`)).toContain("7");
      await page.click(`${first} details summary`);
      const log = await page.textContent(`${first} details`);
      expect(log).toContain("output of run 1");
      expect(log).toContain("run 1 fails");
      expect(log).not.toContain("run 2");
      expect(await page.textContent('#attempts tr.attempt[data-attempt="2"] details')).toContain(
        "output of run 2",
      );
      await logShows(page, "output of run 3", true, 20_000);
      await page.screenshot({ path: join(shots, "job-attempts.png"), fullPage: true });
      // the jobs list says which attempt a row shows
      await page.goto(`${ui.url}#/`);
      await page.waitForSelector(`tr[data-job="${id}"] .attempt-of`);
      expect(await page.textContent(`tr[data-job="${id}"] .attempt-of`)).toBe(" attempt 3 of 3");
    }, 90_000);
  });
}
