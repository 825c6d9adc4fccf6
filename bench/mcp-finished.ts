// tools/call round trip with 100 of the session's jobs in the store, before and after finished_jobs (issue 14).
// Run: bun bench/mcp-finished.ts (AWAITLESS_TEST_BIN=OTHER_BINARY measures another build, e.g. main's).
import { BINARY } from "../test/mcp/stdio-client.ts";
import { Bench, median } from "./mcp-common.ts";

const JOBS = 100;
const SAMPLES = 1000;

const finishedIn = (r: { structuredContent?: unknown }) =>
  ((r.structuredContent as { finished_jobs?: unknown[] }).finished_jobs ?? []).length;

const bench = new Bench();
try {
  const conn = await bench.connect("legacy");
  const ids: string[] = [];
  let announced = 0;
  let announcing = 0;
  const count = (r: { structuredContent?: unknown }) => {
    const got = finishedIn(r);
    announced += got;
    if (got > 0) announcing++;
    return got;
  };
  for (let i = 0; i < JOBS; i++) {
    const r = await conn.client.callTool({
      name: "submit_job",
      arguments: { command: ["sh", "-c", `: ${i}`] },
    });
    ids.push((r.structuredContent as { job_id: string }).job_id);
    count(r); // a quick job often ends before the next submit, whose result announces it
  }
  // The CLI waits in its own process: the session hears of these jobs only through its own results.
  for (const id of ids) bench.cli(["wait", id, "--timeout", "60"]);
  const drainStart = performance.now();
  let lastNews = drainStart;
  // Until all are announced, or 2 s without news (a build without finished_jobs announces none).
  while (performance.now() - lastNews < 2_000 && announced < JOBS) {
    if (count(await conn.client.callTool({ name: "list_queues", arguments: {} })) === 0) await Bun.sleep(10);
    else lastNews = performance.now();
  }
  const drainMs = performance.now() - drainStart;
  const time = async (name: string, args: Record<string, unknown>) => {
    const xs: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t = performance.now();
      await conn.client.callTool({ name, arguments: args });
      xs.push(performance.now() - t);
    }
    return median(xs);
  };
  const status = await time("get_job_status", { job_id: ids[0] });
  const queues = await time("list_queues", {});
  console.log(`binary: ${BINARY}`);
  console.log(
    `jobs in the store (this session's, all finished): ${JOBS}; announced: ${announced} in ${announcing} results (drain ${drainMs.toFixed(0)} ms)`,
  );
  console.log(`tools/call get_job_status round trip, median of ${SAMPLES}: ${status.toFixed(2)} ms`);
  console.log(`tools/call list_queues round trip, median of ${SAMPLES}: ${queues.toFixed(2)} ms`);
} finally {
  await bench.close();
}
