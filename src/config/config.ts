// Configuration: where files live (XDG + overrides) and the TOML config, validated with valibot.
// Every default is documented here with its unit; docs/configuration.md mirrors this file.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { AwaitlessError } from "../core/model/errors.ts";
import { configError, type KnownKeys } from "./config-errors.ts";
import { RENAMED_DEFAULTS, readLegacyKeys } from "./config-legacy.ts";

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

export type HostConfig = v.InferOutput<typeof HostSchema>;

export interface Defaults {
  backend: "local" | "ssh" | "slurm";
  host: string | null;
  queue: string | null;
  inline_timeout_seconds: number;
  max_return_bytes: number;
  log_tail_lines: number;
  poll_interval_seconds: number;
  slurm_poll_interval_seconds: number;
  slurm_min_poll_interval_seconds: number;
  grace_period_seconds: number;
  keep_leftovers: boolean;
  log_cap_bytes: number;
  launch_grace_seconds: number;
  retention_days: number;
  retention_max_jobs: number;
  store_quota_bytes: number;
  auto_gc_interval_hours: number;
  hold_budget_seconds: number;
  hold_budget_by_client_seconds: Record<string, number>;
  progress_interval_seconds: number;
  task_ttl_seconds: number;
  task_poll_interval_seconds: number;
}

export const DEFAULTS: Defaults = {
  backend: "local",
  host: null,
  queue: null,
  inline_timeout_seconds: 10,
  max_return_bytes: 16_384,
  log_tail_lines: 50,
  poll_interval_seconds: 2,
  // one round per 15 s per cluster for the whole machine (8 calls/min) keeps a finished job's result at most ~15 s
  // late while completion is observed by polling; the floor lets a new job's first round come within 5 s
  slurm_poll_interval_seconds: 15,
  slurm_min_poll_interval_seconds: 5,
  grace_period_seconds: 10,
  keep_leftovers: false,
  log_cap_bytes: 64 * 1024 * 1024,
  launch_grace_seconds: 30,
  retention_days: 30,
  retention_max_jobs: 10_000,
  store_quota_bytes: 10 * 1024 ** 3,
  auto_gc_interval_hours: 24,
  hold_budget_seconds: 50,
  hold_budget_by_client_seconds: {},
  progress_interval_seconds: 5,
  task_ttl_seconds: 7 * 86_400,
  task_poll_interval_seconds: 5,
};

export interface Config {
  /** The file the config came from, or null when none exists (all defaults). */
  path: string | null;
  dataDir: string;
  defaults: Defaults;
  hosts: Record<string, HostConfig>;
  /** Lines of the one notice about 0.8 names read in this file (empty for a config of ours). */
  legacyNotes: string[];
  /** Hosts whose 0.8 execution profile keys (user_group, sources, env) are set: launches there are refused. */
  legacyProfiles: Record<string, string[]>;
}

export interface PathEnv {
  AWAITLESS_CONFIG?: string;
  AWAITLESS_DATA_DIR?: string;
  XDG_CONFIG_HOME?: string;
  XDG_DATA_HOME?: string;
  HOME?: string;
}

export function configPath(
  env: PathEnv | Record<string, string | undefined>,
  flag?: string,
): { path: string; explicit: boolean } {
  if (env.AWAITLESS_CONFIG) return { path: env.AWAITLESS_CONFIG, explicit: true };
  if (flag) return { path: flag, explicit: true };
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return { path: join(base, "awaitless", "config.toml"), explicit: false };
}

export function dataDir(env: PathEnv | Record<string, string | undefined>): string {
  if (env.AWAITLESS_DATA_DIR) return env.AWAITLESS_DATA_DIR;
  const base = env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share");
  return join(base, "awaitless");
}

/** Loads and validates the config. A missing default file means "all defaults"; a missing explicit one is an error. */
export function loadConfig(
  env: PathEnv | Record<string, string | undefined> = process.env,
  flag?: string,
): Config {
  const { path, explicit } = configPath(env, flag);
  let text: string | null = null;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" || explicit) {
      throw new AwaitlessError(
        "config_invalid",
        `cannot read the config file ${path}: ${(e as Error).message}`,
        explicit
          ? "fix the path in AWAITLESS_CONFIG / --config, or create the file"
          : "make the file readable",
      );
    }
  }
  const read = text === null ? null : readConfigText(text, path);
  const { data_dir, ...defaults } = read?.config.defaults ?? {};
  if (read) checkSlurmFloors(read.config, path);
  return {
    path: text === null ? null : path,
    dataDir: env.AWAITLESS_DATA_DIR || !data_dir ? dataDir(env) : expandHome(data_dir, env.HOME || homedir()),
    defaults: { ...DEFAULTS, ...stripUndefined(defaults) },
    hosts: read?.config.hosts ?? {},
    legacyNotes: read?.notes ?? [],
    legacyProfiles: read?.profiles ?? {},
  };
}

/**
 * An interval set below the floor that governs it is refused, never raised silently: in [hosts.NAME] against the
 * host's floor (its own, else [defaults]'s, else the default); in [defaults] against [defaults]'s floor. A host's own
 * floor above an interval from [defaults] raises it for that host (the floor is the cluster's rule).
 */
function checkSlurmFloors(config: v.InferOutput<typeof ConfigSchema>, path: string): void {
  const d = config.defaults ?? {};
  const defaultFloor = d.slurm_min_poll_interval_seconds ?? DEFAULTS.slurm_min_poll_interval_seconds;
  const tables: [string, number | undefined, number, string][] = [
    ["[defaults]", d.slurm_poll_interval_seconds, defaultFloor, "[defaults]"],
    ...Object.entries(config.hosts ?? {}).map(
      ([name, h]) =>
        [
          `[hosts.${name}]`,
          h.slurm_poll_interval_seconds,
          h.slurm_min_poll_interval_seconds ?? defaultFloor,
          h.slurm_min_poll_interval_seconds === undefined ? "[defaults]" : `[hosts.${name}]`,
        ] as [string, number | undefined, number, string],
    ),
  ];
  for (const [table, interval, floor, floorFrom] of tables) {
    if (interval === undefined || interval >= floor) continue;
    throw new AwaitlessError(
      "config_invalid",
      `${path}: ${table} slurm_poll_interval_seconds = ${interval} is below the floor slurm_min_poll_interval_seconds = ${floor}${floorFrom === table ? "" : ` (${floorFrom === "[defaults]" && d.slurm_min_poll_interval_seconds === undefined ? "the default" : `from ${floorFrom}`})`}`,
      `set slurm_poll_interval_seconds to ${floor} or more, or lower slurm_min_poll_interval_seconds in ${floorFrom} (the floor spares the cluster's scheduler: ask its admins first)`,
    );
  }
}

function expandHome(path: string, home: string): string {
  return path === "~" ? home : path.startsWith("~/") ? join(home, path.slice(2)) : path;
}

export function parseConfigText(text: string, path: string): v.InferOutput<typeof ConfigSchema> {
  return readConfigText(text, path).config;
}

/** The validated config, with 0.8 names read as ours (config-legacy.ts) and the notes saying which. */
function readConfigText(text: string, path: string) {
  let raw: unknown;
  try {
    raw = Bun.TOML.parse(text);
  } catch (e) {
    throw new AwaitlessError(
      "config_invalid",
      `${path} is not valid TOML: ${(e as Error).message}`,
      "fix the syntax at the position named (strings need quotes; tables are [name])",
    );
  }
  const legacy = readLegacyKeys(raw, path);
  const res = v.safeParse(ConfigSchema, legacy.raw);
  if (res.success) return { config: res.output, notes: legacy.notes, profiles: legacy.profiles };
  throw configError(path, res.issues[0], KNOWN_KEYS, { defaults: RENAMED_DEFAULTS });
}

const KNOWN_KEYS: KnownKeys = {
  "": Object.keys(ConfigSchema.entries),
  defaults: Object.keys(DefaultsSchema.entries),
  "hosts.NAME": Object.keys(HostSchema.entries),
};

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, val]) => val !== undefined)) as Partial<T>;
}
