// Agent-misuse guards: bare sleeps here; duplicates are refused by the service (its MCP hint names wait_for_job).
import path from "node:path";
import { invalid } from "../core/errors.ts";

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ash", "ksh"]);
const SLEEP_SCRIPT = /^\s*(?:exec\s+)?sleep(?:\s+(?:[\d.]+[smhd]?|infinity))+\s*;?\s*$/;
const DURATION = /^(?:[\d.]+[smhd]?|infinity)$/;

/** A command whose only effect is to sleep: `sleep 30`, `sh -c "sleep 30"`. */
export function isBareSleep(argv: string[]): boolean {
  const [program, ...args] = argv;
  if (program === undefined) return false;
  const name = path.basename(program);
  if (name === "sleep") return args.length > 0 && args.every((arg) => DURATION.test(arg));
  if (SHELLS.has(name) && args.length === 2 && args[0] === "-c") return SLEEP_SCRIPT.test(args[1] ?? "");
  return false;
}

export function assertNotBareSleep(argv: string[]): void {
  if (!isBareSleep(argv)) return;
  throw invalid(
    `command ${JSON.stringify(argv)} only sleeps; a job that sleeps does not wait for anything.`,
    "To wait for a job, use wait_for_job with its job_id (it returns the moment the job finishes); " +
      "for several jobs use wait_for_completions. No sleeping or polling is needed.",
    { argv },
  );
}
