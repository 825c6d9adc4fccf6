// Human lines for what a job's processes left when the command ended (leftovers) and what the job cost (resources).
import type { Leftovers, Resources } from "../core/model/job.ts";
import { humanBytes } from "../core/util/text.ts";
import { paint, type Style } from "./render.ts";
import { shown } from "./terminal-safe.ts";

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * "left 2 processes running: stopped (TERM, then KILL after the grace period)" and one line per process; nothing
 * when the command left none. `jobId` names the job in the hint to stop what it kept.
 */
export function leftoverLines(l: Leftovers | undefined, jobId: string, style: Style): string[] {
  if (!l?.count) return [];
  const what = `the command left ${plural(l.count, "process", "processes")} running`;
  const how =
    l.action === "kept"
      ? paint(style, "yellow", `kept running (awaitless cancel ${jobId} stops them)`)
      : "stopped (TERM, then KILL after the grace period)";
  const lines = [`${what}: ${how}`];
  for (const p of l.processes) lines.push(`  ${shown(p)}`);
  if (l.processes.length < l.count) lines.push(`  … ${l.count - l.processes.length} more`);
  if (l.tracking === "environment")
    lines.push(
      paint(
        style,
        "dim",
        "  (found by AWAITLESS_JOB_ID in their environment: a process that cleared it and left the command's session is not seen)",
      ),
    );
  return lines;
}

/** "cpu 1.02s user + 0.10s system, peak memory 201 MiB (cgroup)"; null when nothing is known. */
export function resourcesText(r: Resources | undefined): string | null {
  if (!r || r.source === null) return null;
  const parts: string[] = [];
  if (r.cpu_user_seconds !== null || r.cpu_system_seconds !== null)
    parts.push(`cpu ${seconds(r.cpu_user_seconds)} user + ${seconds(r.cpu_system_seconds)} system`);
  if (r.max_rss_bytes !== null) parts.push(`peak memory ${humanBytes(r.max_rss_bytes)}`);
  if (r.oom_kills) parts.push(`${plural(r.oom_kills, "process", "processes")} killed out of memory`);
  if (parts.length === 0) return null;
  const from = r.source === "rusage" ? "the command's reaped processes" : r.source;
  return `${parts.join(", ")} (${from})`;
}

function seconds(s: number | null): string {
  return s === null ? "?" : `${s < 10 ? s.toFixed(2) : s.toFixed(1)}s`;
}
