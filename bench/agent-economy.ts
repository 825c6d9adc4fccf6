// Agent-economy bench: calls and bytes an agent spends per result, per client profile, against the ceiling
// 1 + ceil(duration / hold) and a naive poller. `bun bench/agent-economy.ts [--scale N | --quick]`.
import { requireBinary } from "../test/mcp/stdio-client.ts";
import { type Outcome, runEconomy } from "./agent-economy-core.ts";
import { JOBS, POLL_EVERY_SECONDS, PROFILES } from "./agent-economy-profiles.ts";

const DEFAULT_SCALE = 20;
const QUICK_SCALE = 100;

function parseScale(argv: string[]): number {
  if (argv.includes("--quick")) return QUICK_SCALE;
  const at = argv.indexOf("--scale");
  if (at < 0) return DEFAULT_SCALE;
  const scale = Number(argv[at + 1]);
  if (!Number.isFinite(scale) || scale < 1 || scale > 500) {
    console.error(
      "--scale N: time runs N times faster than real, N from 1 to 500 (default 20; --quick = 100)",
    );
    process.exit(2);
  }
  return scale;
}

const fmtSeconds = (s: number) =>
  s >= 60 ? `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s` : `${s.toFixed(0)}s`;

function table(outcomes: Outcome[]): string {
  const header = [
    "client profile",
    "hold",
    "tasks",
    "job (measured)",
    "calls per result",
    "ceiling",
    "requests on the wire",
    "bytes to the client",
    "cut by the client",
    "longest hold (server) / client limit",
  ];
  const rows = outcomes.map((o) => {
    const p = o.profile;
    const over = o.ceiling !== null && o.calls > o.ceiling ? " (over!)" : "";
    return [
      p.label,
      p.tasks === "none" ? `${p.holdSeconds}s` : `${p.holdSeconds}s (not used)`,
      p.tasks,
      `${o.job} (${fmtSeconds(o.measuredSeconds)})`,
      `${o.calls}${over}`,
      o.ceiling === null ? "—" : String(o.ceiling),
      String(o.requests),
      `${o.bytes.toLocaleString("en-US")} (${o.notifications} notif.)`,
      String(o.cut),
      o.longestHoldSeconds === null
        ? "—"
        : `${fmtSeconds(o.longestHoldSeconds)} / ${p.limitSeconds === null ? "none" : fmtSeconds(p.limitSeconds)}` +
          (o.overLimit > 0 ? ` (${o.overLimit} over!)` : ""),
    ];
  });
  return [header, header.map(() => "---"), ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n");
}

requireBinary();
const scale = parseScale(process.argv.slice(2));
const started = Date.now();
console.log(
  `Time runs ${scale}× faster: each job sleeps duration/${scale}, and every hold, the inline window (10 s), ` +
    `the progress interval (5 s, at least 0.1 s) and the task poll interval (2 s, at least 0.05 s) are divided ` +
    `by ${scale}, so duration/hold ratios are the real ones. Figures below are in real (unscaled) seconds.\n`,
);
const outcomes = await runEconomy({ scale });
console.log(table(outcomes));
const failed = outcomes.filter((o) => o.state !== "succeeded");
console.log(
  `\nceiling = 1 + ceil(duration / hold). Jobs: ${JOBS.map((j) => j.label).join(", ")}; ` +
    "A Tasks client's model makes one call; its requester polls tasks/get (requests on the wire). " +
    `${PROFILES.length} profiles + a naive poller (submit_job, get_job_status every ${POLL_EVERY_SECONDS}s, ` +
    `get_job_logs at the end; the sleeps between its polls are not counted). ` +
    `Bench took ${((Date.now() - started) / 1000).toFixed(0)} s.`,
);
if (
  failed.length > 0 ||
  outcomes.some((o) => (o.ceiling !== null && o.calls > (o.measuredCeiling ?? 0)) || o.overLimit > 0)
) {
  console.error(
    "a job did not succeed, an agent needed more calls than the ceiling, or a hold passed a limit",
  );
  process.exit(1);
}
