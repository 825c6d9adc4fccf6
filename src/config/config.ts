// Configuration: where files live (XDG + overrides) and the TOML config, validated by config-schema.ts (valibot),
// which is loaded only when a config file has keys to check. Every default is documented here with its unit (the keys
// in config-schema.ts); docs/configuration.md mirrors both files.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AwaitlessError } from "../core/model/errors.ts";
import { nodeOs } from "../core/util/node-os.ts";
import { readLegacyKeys } from "./config-legacy.ts";
import type { ConfigFile, HostConfig } from "./config-schema.ts";

export type { HostConfig } from "./config-schema.ts";

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
  const base = env.XDG_CONFIG_HOME || join(homeOf(env), ".config");
  return { path: join(base, "awaitless", "config.toml"), explicit: false };
}

export function dataDir(env: PathEnv | Record<string, string | undefined>): string {
  if (env.AWAITLESS_DATA_DIR) return env.AWAITLESS_DATA_DIR;
  const base = env.XDG_DATA_HOME || join(homeOf(env), ".local", "share");
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
    dataDir: env.AWAITLESS_DATA_DIR || !data_dir ? dataDir(env) : expandHome(data_dir, homeOf(env)),
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
function checkSlurmFloors(config: ConfigFile, path: string): void {
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

/** $HOME, else the account's home (node:os, loaded only then). */
function homeOf(env: PathEnv | Record<string, string | undefined>): string {
  return env.HOME || nodeOs().homedir();
}

function expandHome(path: string, home: string): string {
  return path === "~" ? home : path.startsWith("~/") ? join(home, path.slice(2)) : path;
}

export function parseConfigText(text: string, path: string): ConfigFile {
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
  // a file with no keys (empty, or comments only) is all defaults: nothing for the schema to check
  const config: ConfigFile = isEmptyTable(legacy.raw) ? {} : schema().validateConfig(legacy.raw, path);
  return { config, notes: legacy.notes, profiles: legacy.profiles };
}

function isEmptyTable(raw: unknown): boolean {
  return typeof raw === "object" && raw !== null && !Array.isArray(raw) && Object.keys(raw).length === 0;
}

/** The schema when a config first has keys to check: valibot and the schema's construction cost every start. */
function schema(): typeof import("./config-schema.ts") {
  return require("./config-schema.ts") as typeof import("./config-schema.ts");
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, val]) => val !== undefined)) as Partial<T>;
}
