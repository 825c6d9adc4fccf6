// The config file's schema (valibot): every key, its type and its range, by table. Loaded by config.ts only when a
// file has keys to check; the defaults themselves are in config.ts.
import * as v from "valibot";
import { configError, type KnownKeys } from "./config-errors.ts";
import { RENAMED_DEFAULTS } from "./config-legacy.ts";

const seconds = (max: number) => v.pipe(v.number(), v.minValue(0), v.maxValue(max));
const positiveInt = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(max));

const pollSeconds = v.pipe(v.number(), v.minValue(0.1), v.maxValue(3600));

const DefaultsSchema = v.strictObject({
  /** The data directory (absolute or ~/…); AWAITLESS_DATA_DIR wins over it. */
  data_dir: v.optional(
    v.pipe(v.string(), v.regex(/^(\/|~\/|~$)/, "an absolute path or one starting with ~/")),
  ),
  /** Backend for jobs that name none. */
  backend: v.optional(v.picklist(["local", "ssh", "slurm"])),
  host: v.optional(v.string()),
  queue: v.optional(v.string()),
  /** Seconds `run` waits inline before detaching. */
  inline_timeout_seconds: v.optional(seconds(3600)),
  /** Bytes of stdout+stderr tails returned in one result (shared budget). */
  max_return_bytes: v.optional(positiveInt(10 * 1024 * 1024)),
  /** Lines `logs` shows by default. */
  log_tail_lines: v.optional(positiveInt(1_000_000)),
  /** Seconds between liveness checks while waiting (fallback to file-system events). */
  poll_interval_seconds: v.optional(v.pipe(v.number(), v.minValue(0.05), v.maxValue(3600))),
  /** Slurm: seconds between scheduler rounds (one squeue + one sacct for every job of a cluster on this machine). */
  slurm_poll_interval_seconds: v.optional(pollSeconds),
  /** Slurm: the floor no scheduler round goes below (a new job's first round, every wait, status and hold included). */
  slurm_min_poll_interval_seconds: v.optional(pollSeconds),
  /** Seconds between SIGTERM and SIGKILL on cancel and timeout, and for what a command left running when it ended. */
  grace_period_seconds: v.optional(seconds(3600)),
  /** Local and SSH jobs keep what their command leaves running (a later cancel stops it); default false. */
  keep_leftovers: v.optional(v.boolean()),
  /** Bytes kept on disk per log stream (head + rolling tail); 0 = unlimited. */
  log_cap_bytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /** Seconds a launch may take before a job still `starting` with no wrapper is declared lost. */
  launch_grace_seconds: v.optional(seconds(3600)),
  /** gc: finished jobs older than this many days are removed. */
  retention_days: v.optional(v.pipe(v.number(), v.minValue(0))),
  /** gc: at most this many finished jobs are kept. */
  retention_max_jobs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /** gc: finished jobs are removed, oldest first, while all job directories together exceed this; 0 = no limit. */
  store_quota_bytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /** Hours between automatic gc runs (started in the background by run, submit and the MCP server); 0 = never. */
  auto_gc_interval_hours: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(8760))),
  /** MCP: seconds a held call may last before answering `client_timeout`. */
  hold_budget_seconds: v.optional(seconds(86_400)),
  /** MCP: per-client hold budgets in seconds, keyed by a prefix of the client's name (clientInfo.name). */
  hold_budget_by_client_seconds: v.optional(v.record(v.string(), seconds(86_400))),
  /** MCP: seconds between progress notifications on held calls (at most 10). */
  progress_interval_seconds: v.optional(v.pipe(v.number(), v.minValue(0.1), v.maxValue(10))),
  /** MCP: seconds a task handle stays visible after creation (never cancels work). */
  task_ttl_seconds: v.optional(seconds(30 * 86_400)),
  /** MCP: seconds suggested to Tasks clients between tasks/get calls. */
  task_poll_interval_seconds: v.optional(seconds(3600)),
});

const HostSchema = v.strictObject({
  hostname: v.optional(v.string()),
  port: v.optional(positiveInt(65535)),
  user: v.optional(v.string()),
  identity_file: v.optional(v.string()),
  /** openssh transport: GSSAPIAuthentication yes/no; true with no transport selects openssh (as 0.8 did). */
  gssapi_authentication: v.optional(v.boolean()),
  backend: v.optional(v.picklist(["ssh", "slurm"])),
  /** How the host's commands are run: ssh2 (built-in), openssh (system client), local (Slurm: this is the login node). */
  transport: v.optional(v.picklist(["ssh2", "openssh", "local"])),
  remote_job_dir: v.optional(v.string()),
  connect_timeout: v.optional(seconds(600)),
  operation_timeout: v.optional(seconds(3600)),
  queue: v.optional(v.string()),
  /** Jobs on this host keep what their command leaves running (wins over [defaults]); not for Slurm hosts. */
  keep_leftovers: v.optional(v.boolean()),
  slurm_job_dir: v.optional(v.string()),
  slurm_accounting_grace: v.optional(seconds(86_400)),
  slurm_poll_interval_seconds: v.optional(pollSeconds),
  slurm_min_poll_interval_seconds: v.optional(pollSeconds),
  /** false: completion only by polling (no watch of slurm_job_dir from the login side). Default true. */
  slurm_watch: v.optional(v.boolean()),
  slurm: v.optional(v.record(v.string(), v.union([v.string(), v.number()]))),
});

const ConfigSchema = v.strictObject({
  defaults: v.optional(DefaultsSchema),
  hosts: v.optional(v.record(v.string(), HostSchema)),
});

export type ConfigFile = v.InferOutput<typeof ConfigSchema>;
export type HostConfig = v.InferOutput<typeof HostSchema>;

const KNOWN_KEYS: KnownKeys = {
  "": Object.keys(ConfigSchema.entries),
  defaults: Object.keys(DefaultsSchema.entries),
  "hosts.NAME": Object.keys(HostSchema.entries),
};

/** `raw` (the TOML's tables, 0.8 names read as ours) checked against the schema; a config_invalid error naming the
 * first problem otherwise. */
export function validateConfig(raw: unknown, path: string): ConfigFile {
  const res = v.safeParse(ConfigSchema, raw);
  if (res.success) return res.output;
  throw configError(path, res.issues[0], KNOWN_KEYS, { defaults: RENAMED_DEFAULTS });
}
