// The dashboard in a real browser with jobs elsewhere: an SSH job on the private sshd (127.0.0.1) and Slurm jobs on
// the real test cluster, each in the list with its backend and host, its live state and log tail; a Slurm job held
// by a dependency shows Slurm's pending reason. Skipped with a how-to when sshd or Slurm is missing
// (AWAITLESS_REQUIRE_ALL=1 makes that a failure).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run as runLocal, slurmUp } from "../e2e/slurm-harness.ts";
import { type SshWorld, sshWorld } from "../e2e/ssh-fixture.ts";
import { Sandbox } from "../helpers/cli.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import {
  type Browser,
  both,
  browserAvailable,
  gated,
  launchBrowser,
  logShows,
  type Page,
  screenshotDir,
  startUiProcess,
  textShows,
  type UiProcess,
} from "./browser.ts";

const browser = browserAvailable();

if (gateOnAvailability("dashboard browser tests with an SSH job", both(browser, sshdAvailable()))) {
  describe("an SSH job in chromium", () => {
    let w: SshWorld;
    let ui: UiProcess;
    let chrome: Browser;
    let page: Page;
    let shots: string;
    // the end file is written here and read by the SSH user's job on this same machine
    const shared = mkdtempSync(join(tmpdir(), "awl-ui-ssh-"));
    const remoteDir = `.awl-ui-browser-${process.pid}-${Date.now()}`;

    beforeAll(async () => {
      chmodSync(shared, 0o755);
      w = await sshWorld();
      w.sb.writeConfig(
        `[defaults]\npoll_interval_seconds = 0.2\n[hosts.${w.alias.dash}]\nremote_job_dir = "~/${remoteDir}"\n`,
      );
      ui = await startUiProcess(w.sb);
      chrome = await launchBrowser();
      page = await chrome.newPage({ viewport: { width: 1280, height: 800 } });
      shots = screenshotDir(w.sb);
      await page.goto(ui.loginUrl);
    });
    afterAll(async () => {
      await chrome?.close();
      if (w) {
        const active =
          (await w.sb.runAsync(["list", "--json", "--state", "active", "--limit", "100"])).json?.jobs ?? [];
        for (const j of active) await w.sb.runAsync(["cancel", "--grace-period", "0", j.job_id]);
      }
      await ui?.stop();
      await w?.close();
      rmSync(shared, { recursive: true, force: true });
    });

    test("listed as ssh on its host, live state and log tail over the SSH watch, filtered by host", async () => {
      const g = gated(shared, "ssh");
      // Always async: a blocking run would stop this process from draining sshd's log pipe.
      const sub = await w.sb.runAsync([
        "submit",
        "--json",
        "--host",
        w.alias.dash,
        "--name",
        "over-ssh",
        "--",
        ...g.argv,
      ]);
      expect(sub.code).toBe(0);
      const id = sub.json.job_id as string;
      const local = await w.sb.runAsync(["submit", "--json", "--name", "here", "--", "true"]);
      const row = `tr[data-job="${id}"]`;
      await page.goto(`${ui.url}#/`);
      await page.waitForSelector(`${row}[data-state="running"]`, { timeout: 30_000 });
      expect(await page.textContent(`${row} td:nth-child(4)`)).toBe(`ssh · ${w.alias.dash}`);
      await page.selectOption("#f-host", w.alias.dash);
      await page.waitForSelector(`tr[data-job="${local.json.job_id}"]`, { state: "detached" });
      expect(await page.$$("#jobs-table tbody tr")).toHaveLength(1);
      await page.screenshot({ path: join(shots, "ssh-list.png"), fullPage: true });
      await page.selectOption("#f-host", "");

      await page.goto(`${ui.url}#/job/${id}`);
      await page.waitForSelector('#job-head [data-state="running"]', { timeout: 20_000 });
      expect(await page.textContent("#job-head")).toContain(`ssh · ${w.alias.dash}`);
      await logShows(page, "hello from ssh", true, 20_000);
      g.end();
      await logShows(page, "finished ssh", true, 30_000);
      expect(await page.textContent("#log")).toContain("late line");
      await page.waitForSelector('#job-head [data-state="succeeded"]', { timeout: 30_000 });
      await page.screenshot({ path: join(shots, "ssh-job.png"), fullPage: true });
      await page.goto(`${ui.url}#/`);
      await page.waitForSelector(`${row}[data-state="succeeded"]`, { timeout: 20_000 });
    }, 120_000);
  });
}

const slurm = browser.ok ? await slurmUp("dashboard browser tests with Slurm jobs") : false;
if (gateOnAvailability("dashboard browser tests with Slurm jobs", browser) && slurm) {
  describe("Slurm jobs in chromium", () => {
    let box: Sandbox;
    let ui: UiProcess;
    let chrome: Browser;
    let page: Page;
    let shots: string;
    const slurmIds: string[] = [];
    const flags = ["--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=32M"];

    beforeAll(async () => {
      box = new Sandbox();
      box.writeConfig(
        `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = 1\nslurm_min_poll_interval_seconds = 1\n[hosts.localhost]\nslurm_job_dir = "${join(box.root, "cluster")}"\nslurm_accounting_grace = 20\n`,
      );
      ui = await startUiProcess(box);
      chrome = await launchBrowser();
      page = await chrome.newPage({ viewport: { width: 1280, height: 800 } });
      shots = screenshotDir(box);
      await page.goto(ui.loginUrl);
    });
    afterAll(async () => {
      await chrome?.close();
      if (slurmIds.length > 0) await runLocal(["scancel", ...slurmIds]);
      await ui?.stop();
      box?.cleanup();
    });

    test("a running Slurm job's live tail, and a dependent one pending with Slurm's reason until it runs", async () => {
      const g = gated(box.root, "slurm");
      const parent = (
        await box.runAsync(["submit", "--json", ...flags, "--name", "on-slurm", "--", ...g.argv])
      ).json.job_id as string;
      const child = (
        await box.runAsync([
          "submit",
          "--json",
          ...flags,
          "--name",
          "slurm-child",
          "--after",
          parent,
          "--",
          "sh",
          "-c",
          "echo child ran",
        ])
      ).json.job_id as string;
      for (const id of [parent, child]) slurmIds.push(String(box.status(id).backend_id.slurm_job_id));

      await page.goto(`${ui.url}#/`);
      const prow = `tr[data-job="${parent}"]`;
      const crow = `tr[data-job="${child}"]`;
      // a loaded 2-core machine can take a while to schedule and start the batch job
      await page.waitForSelector(`${prow}[data-state="running"]`, { timeout: 60_000 });
      expect(await page.textContent(`${prow} td:nth-child(4)`)).toBe("slurm · localhost");
      await page.waitForSelector(`${crow}[data-state="queued"]`);
      // Slurm's own reason for the held child (squeue: Dependency), as the scheduler reports it
      await textShows(page, `${crow} td:nth-child(3)`, "(Dependency)", 30_000);
      await page.screenshot({ path: join(shots, "slurm-list.png"), fullPage: true });

      await page.goto(`${ui.url}#/job/${child}`);
      await page.waitForSelector("#status-message");
      expect(await page.textContent("#status-message")).toMatch(
        /^Pending reason: Slurm job \d+ pending: .*\(Dependency\)/,
      );
      expect(await page.textContent("#dependencies")).toContain(parent);
      await page.screenshot({ path: join(shots, "slurm-pending.png"), fullPage: true });

      await page.goto(`${ui.url}#/job/${parent}`);
      await logShows(page, "hello from slurm", true, 30_000);
      expect(await page.textContent("#dependencies")).toContain(child);
      g.end();
      await logShows(page, "finished slurm", true, 60_000);
      await page.waitForSelector('#job-head [data-state="succeeded"]', { timeout: 60_000 });
      await page.screenshot({ path: join(shots, "slurm-job.png"), fullPage: true });

      await page.goto(`${ui.url}#/`);
      await page.waitForSelector(`${crow}[data-state="succeeded"]`, { timeout: 90_000 });
    }, 240_000);
  });
}
