// The launch arguments run, submit_job and run_job share, their mapping onto a LaunchRequest, and its checks.
import type { CallToolResult } from "@modelcontextprotocol/server";
import * as v from "valibot";
import type { LaunchRequest } from "../../core/model/service-api.ts";
import { assertLaunchable } from "../guards.ts";
import { seconds, stringMap } from "./args.ts";

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
    v.pipe(seconds("timeout_seconds"), v.description("Runtime limit (timed_out).")),
  ),
  stall_timeout_seconds: v.optional(
    v.pipe(seconds("stall_timeout_seconds"), v.description("Quiet before stalled.")),
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

type LaunchArgs = v.InferOutput<v.ObjectSchema<typeof launchEntries, undefined>>;

/**
 * Tool arguments (their text checked by parseArgs) → LaunchRequest: `command` becomes `argv`, a shell string
 * `sh -c` it, absent stays absent; then the misuse guards (duplicate active commands are refused by the service).
 */
export function launchRequestOf(args: LaunchArgs): LaunchRequest {
  const { command, ...rest } = args;
  const req: LaunchRequest = { argv: typeof command === "string" ? ["sh", "-c", command] : command };
  for (const [key, value] of Object.entries(rest)) {
    if (value !== undefined && key !== "inline_timeout_seconds")
      (req as unknown as Record<string, unknown>)[key] = value;
  }
  assertLaunchable(req.argv);
  return req;
}

/** A launch given a shell-string `command` ran as `sh -c STRING`: its result says so (`command_form: "shell"`). */
export function markShellForm(result: CallToolResult, args: LaunchArgs): CallToolResult {
  const structured = result.structuredContent as Record<string, unknown> | undefined;
  // Only a launch's answer (it names its job); a refusal is `{error}` alone.
  if (typeof args.command !== "string" || typeof structured?.job_id !== "string") return result;
  result.structuredContent = { ...structured, command_form: "shell" };
  return result;
}
