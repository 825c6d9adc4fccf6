// The real agent CLIs (test/clients) on jobs of 5 s, 90 s and 240 s, in real time, each wired as
// `awaitless mcp-config` wires it (its real timeout, our hold for it), its scripted model calling `run` and
// then `wait_for_job` until the result: calls per result against 1 + ceil((duration − inline window) / hold),
// and the bytes the model received. `bun bench/real-clients.ts [--durations 5,90,240] [CLIENT...]`
// (about 5 minutes: every session at once; needs `npm install --prefix test/clients --no-save` and root).

import { clientAvailable } from "../test/clients/harness/available.ts";
import { claude } from "../test/clients/harness/clients/claude.ts";
import { codex } from "../test/clients/harness/clients/codex.ts";
import { gemini } from "../test/clients/harness/clients/gemini.ts";
import { opencode } from "../test/clients/harness/clients/opencode.ts";
import { qwen } from "../test/clients/harness/clients/qwen.ts";
import { type ClientSpec, runClient } from "../test/clients/harness/run-client.ts";
import { ours } from "../test/clients/harness/scenarios.ts";
import { call, type Step, say } from "../test/clients/harness/script.ts";

const ALL: Record<string, ClientSpec> = { claude, codex, gemini, opencode, qwen };
const INLINE_SECONDS = 10; // the built-in inline window, as users get it

function parse(argv: string[]): { durations: number[]; clients: ClientSpec[] } {
  const at = argv.indexOf("--durations");
  const durations = at < 0 ? [5, 90, 240] : (argv[at + 1] ?? "").split(",").map(Number);
  if (durations.length === 0 || durations.some((d) => !Number.isInteger(d) || d < 1 || d > 1800)) {
    console.error("--durations A,B,…: whole seconds from 1 to 1800 (default 5,90,240)");
    process.exit(2);
  }
  const names = argv.filter((a, i) => !a.startsWith("--") && argv[i - 1] !== "--durations");
  for (const n of names)
    if (!(n in ALL)) {
      console.error(`unknown client "${n}": one of ${Object.keys(ALL).join(", ")}`);
      process.exit(2);
    }
  return { durations, clients: (names.length > 0 ? names : Object.keys(ALL)).map((n) => ALL[n]!) };
}

/** run, then wait_for_job for as long as the answer is not the result (at most 40 calls). */
function steps(duration: number): Step[] {
  const command = `echo started; sleep ${duration}; echo done-$((6*7))`;
  const wait: Step = (ctx) =>
    /succeeded/.test(ctx.last?.text ?? "")
      ? say("The job is done.")(ctx)
      : call("wait_for_job", { job_id: ctx.jobId() })(ctx);
  return [call("run", { command }), ...Array.from({ length: 40 }, () => wait)];
}

interface Row {
  client: string;
  duration: number;
  hold: number | undefined;
  calls: number;
  ceiling: number | undefined;
  bytes: number;
  gotResult: boolean;
  wallSeconds: number;
}

async function measure(client: ClientSpec, duration: number): Promise<Row> {
  const run = await runClient(client, {
    prompt: "Run the slow check and wait for its result.",
    steps: steps(duration),
    timeoutMs: (duration + 300) * 1000,
  });
  try {
    const results = ours(run.results);
    const hold = run.mcp
      .filter((t) => t.dir === "err")
      .map((t) => /hold budget (\d+)s/.exec(t.line)?.[1])
      .find((h) => h !== undefined);
    const holdSeconds = hold === undefined ? undefined : Number(hold);
    const ceiling =
      holdSeconds === undefined
        ? undefined
        : 1 + Math.max(0, Math.ceil((duration - INLINE_SECONDS) / holdSeconds));
    return {
      client: client.label,
      duration,
      hold: holdSeconds,
      calls: results.length,
      ceiling,
      bytes: results.reduce((n, r) => n + r.bytes, 0),
      gotResult: /succeeded/.test(results.at(-1)?.text ?? ""),
      wallSeconds: run.durationMs / 1000,
    };
  } finally {
    run.dispose();
  }
}

const { durations, clients } = parse(process.argv.slice(2));
for (const c of clients) {
  const avail = clientAvailable(c.id);
  if (!avail.ok) {
    console.error(`${c.label}: ${avail.why}`);
    process.exit(1);
  }
}
const rows = await Promise.all(clients.flatMap((c) => durations.map((d) => measure(c, d))));
const header = [
  "client",
  "job",
  "hold",
  "calls per result",
  "ceiling",
  "bytes the model received",
  "result reached",
  "wall",
];
console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
for (const r of rows)
  console.log(
    `| ${[
      r.client,
      `${r.duration} s`,
      r.hold === undefined ? "?" : `${r.hold} s`,
      String(r.calls),
      r.ceiling === undefined ? "?" : String(r.ceiling),
      `${r.bytes} B`,
      r.gotResult ? "yes" : "no",
      `${r.wallSeconds.toFixed(0)} s`,
    ].join(" | ")} |`,
  );
console.log(
  `\nceiling = 1 + ceil((job − ${INLINE_SECONDS} s inline window) / hold); hold as the server logged it for the client; bytes: every tool result of ours as the client put it in its requests.`,
);
