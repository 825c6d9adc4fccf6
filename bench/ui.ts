// The dashboard's costs: time from a job's exit to the page showing it (the event path): to the SSE event a raw
// client reads, and, with chromium, to the job's row in a real jobs page changing its state (a MutationObserver in
// the page stamps it); measured with few and with 100 active jobs. Then the CPU of `awaitless ui` with 100 active
// jobs and 3 open pages (chromium jobs pages; SSE readers without chromium) against `awaitless list` run in a loop
// (back to back, and every 2 s as `watch` does) over the same window. CPU is utime+stime from /proc (the server's
// process; the loop's children via their rusage).
// Usage: bun run build && bun bench/ui.ts [--quick]   AWAITLESS_BENCH_BIN=/path/to/awaitless: another build.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromiumPath, launchBrowser, type Page } from "../test/ui/browser.ts";

const ROOT = join(import.meta.dir, "..");
const BIN = process.env.AWAITLESS_BENCH_BIN ?? join(ROOT, "dist", "awaitless");
const quick = process.argv.includes("--quick");
const N_JOBS = quick ? 20 : 100;
const PAGES = 3;
const SAMPLES = quick ? 5 : 20;
const WINDOW_S = quick ? 20 : 60;
const HZ = 100;

const home = mkdtempSync(join(tmpdir(), "awl-bench-ui-"));
const env: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  AWAITLESS_DATA_DIR: join(home, "data"),
  AWAITLESS_CONFIG: join(home, "config.toml"),
  NO_COLOR: "1",
};
writeFileSync(env.AWAITLESS_CONFIG!, "");

function cli(args: string[]): string {
  return execFileSync(BIN, args, { env, encoding: "utf8" });
}
/** A job blocked reading its FIFO: it exits the moment the bench writes a line to it. */
function fifoJob(i: string): { id: string; fifo: string } {
  const fifo = join(home, `fifo-${i}`);
  execFileSync("mkfifo", [fifo]);
  const id = JSON.parse(cli(["submit", "--json", "--", "sh", "-c", 'read x < "$1"', "sh", fifo]))
    .job_id as string;
  return { id, fifo };
}
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** An SSE reader of /api/events: calls `on` for each event. */
async function openFeed(
  url: string,
  token: string,
  on: (event: string, data: { job_id: string; finished_at: string | null }) => void,
  signal: AbortSignal,
) {
  const res = await fetch(`${url}api/events`, { headers: { "x-awaitless-token": token }, signal });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = "";
  (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += dec.decode(value, { stream: true });
        let i = buf.indexOf("\n\n");
        while (i >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const ev = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (ev && data) on(ev, JSON.parse(data));
          i = buf.indexOf("\n\n");
        }
      }
    } catch {}
  })();
}

const server = Bun.spawn([BIN, "ui", "--json"], { env, stdout: "pipe", stderr: "inherit" });
const first = await server.stdout.getReader().read();
const { url: loginUrl } = JSON.parse(new TextDecoder().decode(first.value).split("\n")[0]!);
const url = loginUrl.replace(/#token=.*$/, "");
const token = loginUrl.split("token=")[1];
const ctl = new AbortController();
const browser: Browser | null = chromiumPath() ? await launchBrowser() : null;
const pages: Page[] = [];

/** Resolves with the wall-clock time (ms) at which the page's row of `jobId` first shows a finished state. */
function rowEnds(page: Page, jobId: string): Promise<number> {
  return page.evaluate((id) => {
    // biome-ignore lint/suspicious/noExplicitAny: the page's document
    const doc = (globalThis as any).document;
    const ended = () => {
      const row = doc.querySelector(`tr[data-job="${id}"]`);
      return row && ["succeeded", "failed", "cancelled", "timed_out", "lost"].includes(row.dataset.state);
    };
    return new Promise<number>((resolve) => {
      if (ended()) return resolve(Date.now());
      // biome-ignore lint/suspicious/noExplicitAny: the page's MutationObserver
      const obs = new (globalThis as any).MutationObserver(() => {
        if (ended()) {
          obs.disconnect();
          resolve(Date.now());
        }
      });
      obs.observe(doc.body, { subtree: true, childList: true, attributes: true });
    });
  }, jobId);
}

/** Exit → SSE event and exit → page row for jobs already listed as running; each ended by a write to its FIFO. */
async function latencies(
  list: { id: string; fifo: string }[],
  waiting: Map<string, (t: number) => void>,
): Promise<{ sse: number[]; page: number[] }> {
  const sse: number[] = [];
  const shownInPage: number[] = [];
  for (const job of list) {
    const shown = new Promise<number>((resolve) => waiting.set(job.id, resolve));
    const inPage = pages[0] ? rowEnds(pages[0], job.id) : null;
    const wall0 = Date.now();
    const t0 = performance.now();
    writeFileSync(job.fifo, "go\n");
    sse.push((await shown) - t0);
    if (inPage) shownInPage.push((await inPage) - wall0);
  }
  return { sse, page: shownInPage };
}
const fmt = (xs: number[]) => `median ${median(xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;

try {
  if (browser) {
    for (let p = 0; p < PAGES; p++) {
      const page = await browser.newPage();
      await page.goto(loginUrl);
      await page.waitForSelector("#live.on", { timeout: 20_000 });
      pages.push(page);
    }
  }
  // 1. exit → feed: one job at a time, already listed as running, ended by a write to its FIFO.
  const waiting = new Map<string, (t: number) => void>();
  await openFeed(
    url,
    token,
    (ev, data) => {
      if (ev === "job" && data.finished_at) waiting.get(data.job_id)?.(performance.now());
    },
    ctl.signal,
  );
  const lat = { sse: [] as number[], page: [] as number[] };
  for (let i = 0; i < SAMPLES; i++) {
    const job = fifoJob(`lat-${i}`);
    const running = new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (JSON.parse(cli(["status", "--json", job.id])).state === "running") {
          clearInterval(t);
          resolve();
        }
      }, 50);
    });
    await running;
    await Bun.sleep(2500); // the feed has listed it (its rescan is 2 s) and waits on its watch
    const l = await latencies([job], waiting);
    lat.sse.push(...l.sse);
    lat.page.push(...l.page);
  }
  console.log(`exit → feed, 1 active job (${SAMPLES} jobs): SSE ${fmt(lat.sse)}`);
  if (browser) console.log(`exit → page row, 1 active job (${SAMPLES} jobs): chromium ${fmt(lat.page)}`);

  // 2. CPU: N active jobs, 3 pages, a quiet window.
  const jobs = Array.from({ length: N_JOBS }, (_, i) => fifoJob(`cpu-${i}`));
  if (!browser) for (let p = 1; p < PAGES; p++) await openFeed(url, token, () => {}, ctl.signal);
  await Bun.sleep(3000);
  const c0 = cpuTicks(server.pid);
  await Bun.sleep(WINDOW_S * 1000);
  const uiCpu = (cpuTicks(server.pid) - c0) / HZ;

  const loop = (gapMs: number) => {
    let cpu = 0;
    let runs = 0;
    const end = Date.now() + WINDOW_S * 1000;
    while (Date.now() < end) {
      const r = Bun.spawnSync([BIN, "list", "--limit", "500"], { env, stdout: "ignore", stderr: "ignore" });
      cpu += Number(r.resourceUsage?.cpuTime.user ?? 0) + Number(r.resourceUsage?.cpuTime.system ?? 0);
      runs++;
      if (gapMs) Bun.sleepSync(Math.min(gapMs, Math.max(0, end - Date.now())));
    }
    return { cpu: cpu / 1e6, runs };
  };
  const tight = loop(0);
  const watch = loop(2000);
  console.log(`CPU over ${WINDOW_S} s with ${N_JOBS} active jobs:`);
  console.log(
    `  awaitless ui, ${PAGES} open pages:      ${uiCpu.toFixed(2)} s (${((uiCpu / WINDOW_S) * 100).toFixed(1)}% of a core)`,
  );
  console.log(
    `  list back to back (${tight.runs} runs):  ${tight.cpu.toFixed(2)} s  → ratio list/ui ${(tight.cpu / Math.max(uiCpu, 0.01)).toFixed(1)}×`,
  );
  console.log(
    `  list every 2 s (${watch.runs} runs):     ${watch.cpu.toFixed(2)} s  → ratio list/ui ${(watch.cpu / Math.max(uiCpu, 0.01)).toFixed(1)}×`,
  );
  // 3. exit → page again, now with every other of the N jobs active (each of these is listed and watched)
  const loaded = await latencies(jobs.slice(0, SAMPLES), waiting);
  console.log(`exit → feed, ${N_JOBS} active jobs (${SAMPLES} jobs): SSE ${fmt(loaded.sse)}`);
  if (browser)
    console.log(`exit → page row, ${N_JOBS} active jobs (${SAMPLES} jobs): chromium ${fmt(loaded.page)}`);
  console.log(browser ? `pages: ${PAGES} chromium jobs pages` : `pages: ${PAGES} SSE readers (no chromium)`);
  for (const j of jobs.slice(SAMPLES)) writeFileSync(j.fifo, "go\n");
} finally {
  await browser?.close();
  ctl.abort();
  server.kill("SIGTERM");
  await server.exited;
  for (const j of JSON.parse(cli(["list", "--json", "--state", "active", "--limit", "1000"])).jobs)
    cli(["cancel", "--grace-period", "0s", j.job_id]);
  rmSync(home, { recursive: true, force: true });
}
