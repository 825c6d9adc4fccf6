// Takes docs/ui.png: a demo store (finished, failed, running, queued and retried jobs, an array) in the dashboard.
// Run: bun run build && bun test/ui/screenshot.ts [OUT.png]  (default: docs/ui.png)
import { join } from "node:path";
import { ROOT, Sandbox, until } from "../helpers/cli.ts";
import { launchBrowser, startUiProcess } from "./browser.ts";

const out = process.argv[2] ?? join(ROOT, "docs", "ui.png");
const box = new Sandbox();
box.writeConfig("[defaults]\npoll_interval_seconds = 0.2\n");
const ids: string[] = [];
const run = (argv: string[], flags: string[]) => ids.push(box.submit(argv, flags));
run(["sh", "-c", "echo compiling; sleep 0.3; echo done"], ["--name", "build"]);
run(["sh", "-c", "echo 'test_login ... ok'; echo 'test_upload ... FAILED' >&2; exit 1"], ["--name", "tests"]);
run(["sh", "-c", "sleep 0.6; echo trained"], ["--name", "train-small"]);
run(["sh", "-c", "echo epoch 1; sleep 0.9; echo epoch 2"], ["--name", "train-large"]);
await until("the first jobs to end", () => box.status(ids[3]!).state === "succeeded", 20_000);
box.run(["queue", "create", "gpu", "--concurrency", "1"]);
run(
  ["sh", "-c", "for i in 1 2 3 4 5 6; do echo step $i; sleep 20; done"],
  ["--name", "sweep-a", "--queue", "gpu"],
);
run(["sh", "-c", "sleep 60"], ["--name", "sweep-b", "--queue", "gpu"]);
run(["sh", "-c", "echo report"], ["--name", "report", "--after", ids[4]!]);
const counter = join(box.root, "flaky-count");
run(
  [
    "sh",
    "-c",
    'n=$(cat "$1" 2>/dev/null || echo 0); echo $((n + 1)) > "$1"; [ "$n" -ge 1 ]',
    "flaky",
    counter,
  ],
  ["--name", "fetch-data", "--retries", "2", "--retry-on", "exit", "--retry-backoff", "0.2s"],
);
// a sweep: 0-3 done, 5 failed, four running, three waiting for a slot
const sweep = box.submit(
  ["sh", "-c", 'i=$AWAITLESS_ARRAY_INDEX; [ "$i" = 5 ] && exit 1; [ "$i" -lt 4 ] && exit 0; sleep 60'],
  ["--name", "hyper-sweep", "--array", "0-11%4"],
);
await until(
  "the sweep to have 4 running and 5 ended",
  () => {
    const c = box.run(["status", "--json", sweep]).json?.counts ?? {};
    return c.running === 4 && c.succeeded === 4 && c.failed === 1;
  },
  30_000,
);
const ui = await startUiProcess(box);
const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 700 } });
  await page.goto(ui.loginUrl);
  await page.waitForSelector("#live.on");
  await page.waitForSelector(`tr[data-job="${ids[6]}"]`);
  await page.waitForSelector(`tr.array-row[data-array="${sweep}"]`);
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
  for (const id of [...ids, sweep]) box.run(["cancel", "--grace-period", "0s", id]);
  await ui.stop();
  box.cleanup();
}
