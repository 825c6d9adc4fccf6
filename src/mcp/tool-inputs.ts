// Input schemas of the MCP tools (valibot; the argument names of docs/mcp.md) and their mapping onto service requests.
import * as v from "valibot";
import { invalid } from "../core/model/errors.ts";
import { JOB_STATES } from "../core/model/job.ts";
import type { LaunchRequest, ListRequest, LogsRequest } from "../core/model/service-api.ts";
import { nearestName } from "../core/util/nearest-name.ts";
import { NOT_TEXT } from "../core/util/utf8-text.ts";
import { illFormedArgument } from "./text-args.ts";

const positive = (what: string) =>
  v.pipe(v.number(`${what} must be a number of seconds`), v.minValue(0, `${what} must be ≥ 0`));
const count = (what: string, max: number) =>
  v.pipe(
    v.number(`${what} must be an integer`),
    v.integer(`${what} must be an integer`),
    v.minValue(1, `${what} must be ≥ 1`),
    v.maxValue(max, `${what} must be ≤ ${max}`),
  );
const jobId = v.pipe(
  v.string("job_id must be a string such as job_01J…"),
  v.minLength(1, "job_id must not be empty"),
  v.description("The job_… ID."),
);
const stringMap = (what: string) => v.record(v.string(), v.string(`${what} values must be strings`));

export const launchEntries = {
  command: v.pipe(
    v.union(
      [
        v.pipe(
          v.string(),
          v.minLength(1, "command must not be empty"),
          v.regex(/\S/, "command must not be blank"),
        ),
        v.pipe(
          v.array(v.string("each command element must be a string")),
          v.minLength(1, "command must name a program"),
        ),
      ],
      'command must be a shell string such as "make test && make lint", or an argv array of strings such as ["make","test"]',
    ),
    v.description("Argv or sh -c string."),
  ),
  cwd: v.optional(v.pipe(v.string(), v.description("Work dir."))),
  env: v.optional(v.pipe(stringMap("env"), v.description("Extra env vars."))),
  secret_env: v.optional(v.pipe(v.array(v.string()), v.description("Env names, redacted."))),
  backend: v.optional(
    v.pipe(
      v.picklist(["local", "ssh", "slurm"], "backend must be local, ssh or slurm"),
      v.description("Default: by host."),
    ),
  ),
  host: v.optional(v.pipe(v.string(), v.description("ssh/slurm host or alias."))),
  timeout_seconds: v.optional(
    v.pipe(positive("timeout_seconds"), v.description("Runtime limit (timed_out).")),
  ),
  stall_timeout_seconds: v.optional(
    v.pipe(positive("stall_timeout_seconds"), v.description("Quiet before stalled.")),
  ),
  artifacts: v.optional(v.pipe(v.array(v.string()), v.description("Paths/globs."))),
  name: v.optional(v.pipe(v.string(), v.description("Job label."))),
  queue: v.optional(v.pipe(v.string(), v.description("A create_queue queue."))),
  resources: v.optional(
    v.pipe(
      v.array(v.string("each resource must be a NAME=VALUE string")),
      v.description('Locks, e.g. ["gpu=0"].'),
    ),
  ),
  after: v.optional(
    v.pipe(
      v.array(v.string('each after entry must be a string "JOB_ID" or "JOB_ID:ok|any|failed"')),
      v.description("IDs[:ok|any|failed]"),
    ),
  ),
  array: v.optional(
    v.pipe(v.string('array must be a string such as "0-99%8"'), v.description("e.g. 0-99%8")),
  ),
  retries: v.optional(v.pipe(v.number("retries must be a whole number"), v.description("More tries."))),
  retry_on: v.optional(
    v.pipe(
      v.array(v.string("each retry_on entry must be a string")),
      v.description("lost|infrastructure|exit"),
    ),
  ),
  client_request_id: v.optional(v.pipe(v.string(), v.description("Same key, same job."))),
  slurm_options: v.optional(v.pipe(stringMap("slurm_options"), v.description("Allowed sbatch options."))),
  allow_duplicate: v.optional(v.pipe(v.boolean(), v.description("Even if already active."))),
  // what the command leaves running is kept (cancel_job stops it); described in few bytes: tools/list's budget
  keep_leftovers: v.optional(
    v.pipe(v.boolean("keep_leftovers must be true or false"), v.description("Keep leftovers.")),
  ),
};

export const submitInput = v.object(launchEntries);
export const runInput = v.object({
  ...launchEntries,
  inline_timeout_seconds: v.optional(
    v.pipe(positive("inline_timeout_seconds"), v.description("Detach after (10 s).")),
  ),
});
export const runJobInput = v.object({
  ...launchEntries,
  client_request_id: v.pipe(
    v.string('run_job needs client_request_id: a key you reuse when retrying, e.g. "tests-after-fix-1"'),
    v.minLength(1, "client_request_id must not be empty"),
    v.description("Same key, same task."),
  ),
});
export const waitInput = v.object({
  job_id: jobId,
  timeout_seconds: v.optional(v.pipe(positive("timeout_seconds"), v.description("Longest wait (≤ hold)."))),
});
export const completionsInput = v.object({
  job_ids: v.pipe(
    v.array(v.string(), "job_ids must be an array of job IDs"),
    v.minLength(1, "job_ids needs at least one job ID"),
    v.maxLength(500, "job_ids takes at most 500 job IDs"),
    v.description("Job IDs."),
  ),
  after_cursor: v.optional(v.pipe(v.string(), v.description("The last next_cursor."))),
  timeout_seconds: v.optional(v.pipe(positive("timeout_seconds"), v.description("Longest wait."))),
  limit: v.optional(v.pipe(count("limit", 500), v.description("Default 50."))),
});
export const statusInput = v.object({ job_id: jobId });
const lineNumber = (what: string) =>
  v.pipe(
    v.number(`${what} must be a line number`),
    v.integer(`${what} must be a whole line number`),
    v.minValue(1, `${what} must be ≥ 1 (lines count from 1)`),
  );
export const logsInput = v.object({
  job_id: jobId,
  stream: v.optional(
    v.pipe(
      v.picklist(["stdout", "stderr", "both"], "stream must be stdout, stderr or both"),
      v.description("Default both."),
    ),
  ),
  tail_lines: v.optional(v.pipe(count("tail_lines", 100_000), v.description("Last N lines/matches."))),
  head: v.optional(v.pipe(count("head", 100_000), v.description("First N lines/matches."))),
  from_line: v.optional(v.pipe(lineNumber("from_line"), v.description("First line (1-based)."))),
  to_line: v.optional(v.pipe(lineNumber("to_line"), v.description("Last line to read."))),
  grep: v.optional(v.pipe(v.string(), v.description("grep -E over the whole log."))),
  max_bytes: v.optional(v.pipe(count("max_bytes", 1_048_576), v.description("Byte budget."))),
});
export const cancelInput = v.object({
  job_id: jobId,
  grace_period_seconds: v.optional(
    v.pipe(positive("grace_period_seconds"), v.description("TERM→KILL delay.")),
  ),
});
export const createQueueInput = v.object({
  name: v.pipe(v.string("name must be a string"), v.description("1–64 of A-Z a-z 0-9 . _ -")),
  concurrency: v.pipe(count("concurrency", 10_000), v.description("Run at once.")),
  host: v.optional(v.pipe(v.string(), v.description("Default: local."))),
});
export const listQueuesInput = v.object({
  host: v.optional(v.pipe(v.string(), v.description("Host filter."))),
});
const listStates = [...JOB_STATES, "active", "terminal", "pending"] as const;
export const listInput = v.object({
  state: v.optional(
    v.pipe(
      v.picklist(listStates, `state must be one of: ${listStates.join(", ")}`),
      v.description("State, active or terminal."),
    ),
  ),
  host: v.optional(v.pipe(v.string(), v.description("Host filter."))),
  queue: v.optional(v.pipe(v.string(), v.description("Queue filter."))),
  name: v.optional(v.pipe(v.string(), v.description("Name filter."))),
  limit: v.optional(v.pipe(count("limit", 1_000), v.description("Default 20."))),
});

export type LaunchArgs = v.InferOutput<typeof submitInput>;
export type RunArgs = v.InferOutput<typeof runInput>;

// A lone surrogate (a JSON escape such as \ud800 with no pair) has no UTF-8 form: written out it would become U+FFFD.
function refuseLoneSurrogates(args: LaunchArgs): void {
  const texts: [string, string][] = [
    ...(typeof args.command === "string"
      ? [["command", args.command] as [string, string]]
      : args.command.map((s, i): [string, string] => [`command[${i}]`, s])),
    ...Object.entries(args.env ?? {}).map(([k, val]): [string, string] => [`env.${k}`, `${k}=${val}`]),
  ];
  for (const [where, text] of texts) {
    if (!text.isWellFormed()) {
      throw invalid(
        `${where} holds a lone UTF-16 surrogate (an unpaired \\uD800–\\uDFFF escape), which has no UTF-8 form`,
        'Send the text as valid Unicode; for raw bytes, have the command produce them, e.g. with printf inside ["sh","-c",…].',
      );
    }
  }
}

/** Tool arguments → LaunchRequest (`command` becomes `argv`, a shell string `sh -c` it; absent stays absent). */
export function toLaunchRequest(args: LaunchArgs): LaunchRequest {
  refuseLoneSurrogates(args);
  const { command, ...rest } = args;
  const req: LaunchRequest = { argv: typeof command === "string" ? ["sh", "-c", command] : command };
  for (const [key, value] of Object.entries(rest)) {
    if (value !== undefined && key !== "inline_timeout_seconds")
      (req as unknown as Record<string, unknown>)[key] = value;
  }
  return req;
}

export function toLogsRequest(args: v.InferOutput<typeof logsInput>, maxReturnBytes: number): LogsRequest {
  return { ...args, max_bytes: Math.min(args.max_bytes ?? maxReturnBytes, maxReturnBytes) };
}

export function toListRequest(args: v.InferOutput<typeof listInput>): ListRequest {
  return args as ListRequest;
}

/** The schema a tool validates and advertises: its entries, with any other argument refused (not dropped). */
export function strictInput<E extends v.ObjectEntries>(schema: v.ObjectSchema<E, undefined>) {
  return v.strictObject(schema.entries);
}

export interface ArgsProblem {
  message: string;
  hint: string;
  details: Record<string, unknown>;
}

/** Validate tool arguments; an unknown argument is named with the nearest known one, other issues by argument. */
export function parseArgs<S extends v.GenericSchema>(
  schema: S,
  args: unknown,
): { ok: true; value: v.InferOutput<S> } | ({ ok: false } & ArgsProblem) {
  const notText = illFormedArgument(args);
  if (notText !== undefined)
    return {
      ok: false,
      message: `${notText} ${NOT_TEXT}; nothing was run or changed`,
      hint: 'Send the text as valid UTF-8; for bytes that are not text, have the command make them, e.g. printf inside ["sh","-c",…].',
      details: { argument: notText },
    };
  const result = v.safeParse(schema, args ?? {});
  if (result.success) return { ok: true, value: result.output };
  // Every unknown argument is named (valibot's strict object reports only the first one).
  const known = Object.keys((schema as unknown as { entries?: v.ObjectEntries }).entries ?? {});
  const given = typeof args === "object" && args !== null && !Array.isArray(args) ? Object.keys(args) : [];
  const unknown = given.filter((key) => !known.includes(key));
  if (unknown.length > 0) return unknownArguments(unknown, known);
  const message = result.issues
    .slice(0, 3)
    .map((issue) => {
      const path = v.getDotPath(issue);
      if (path && issue.input === undefined && issue.message.startsWith("Invalid key"))
        return `${path} is required`;
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join("; ");
  return {
    ok: false,
    message,
    hint: "Fix the named argument and call again; tools/list shows each tool's input schema.",
    details: {},
  };
}

function unknownArguments(names: string[], known: string[]): { ok: false } & ArgsProblem {
  const near = names.map((name) => nearestName(name, known));
  const listed = names.map((name, i) => `\`${name}\`${near[i] ? ` (did you mean \`${near[i]}\`?)` : ""}`);
  const renames = names.flatMap((name, i) => (near[i] ? [`${name} → ${near[i]}`] : []));
  const removals = names.filter((_, i) => near[i] === undefined);
  const fix = [
    ...(renames.length > 0 ? [`Rename ${renames.join(", ")}`] : []),
    ...(removals.length > 0 ? [`${renames.length > 0 ? "remove" : "Remove"} ${removals.join(", ")}`] : []),
  ].join(", ");
  return {
    ok: false,
    message: `unknown argument${names.length > 1 ? "s" : ""} ${listed.join(", ")}: nothing was run or changed`,
    hint: `${fix} and call again; this tool takes only: ${known.join(", ")}.`,
    details: {
      unknown_arguments: names,
      did_you_mean: Object.fromEntries(names.map((n, i) => [n, near[i] ?? null])),
    },
  };
}
