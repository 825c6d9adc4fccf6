// Awaitless 0.8 configs read unchanged: its key names become ours (one notice per file says which), keys with
// no meaning here are explained and dropped, and 0.8's per-host execution profile is kept aside so that a launch
// on that host is refused instead of running without it. Runs on the raw TOML before validation.
import { AwaitlessError } from "../core/model/errors.ts";

/** [defaults] keys of 0.8 and the key of ours that means the same (same unit: seconds). */
export const RENAMED_DEFAULTS: Readonly<Record<string, string>> = {
  poll_interval: "poll_interval_seconds",
  adaptive_inline_timeout_seconds: "inline_timeout_seconds",
  mcp_task_ttl_seconds: "task_ttl_seconds",
  mcp_task_poll_interval_seconds: "task_poll_interval_seconds",
};

/** [hosts.NAME] keys of 0.8 that this version does not read, with why; the config is still accepted. */
const DROPPED_HOST_KEYS: Readonly<Record<string, string>> = {
  remote_queue_dir:
    "has no effect here: queues live in <remote_job_dir>/queues (0.8's queue files are not shared with this version)",
};

/** 0.8's execution profile of an SSH host: applied to every job there, so a job without it would run differently. */
const PROFILE_KEYS = ["user_group", "sources", "env"] as const;

export interface LegacyReading {
  /** The config with our names. */
  raw: Record<string, unknown>;
  /** One line per key read under a 0.8 name or dropped (empty for a config of ours). */
  notes: string[];
  /** Host → the 0.8 profile keys it sets (user_group, sources, env): launches there are refused. */
  profiles: Record<string, string[]>;
}

const isTable = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x) && !(x instanceof Date);

function toml(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : isTable(value) ? "{…}" : String(value);
}

export function readLegacyKeys(input: unknown, path: string): LegacyReading {
  const notes: string[] = [];
  const profiles: Record<string, string[]> = {};
  if (!isTable(input)) return { raw: {}, notes, profiles };
  const raw: Record<string, unknown> = { ...input };
  if (isTable(raw.defaults)) raw.defaults = renameDefaults({ ...raw.defaults }, path, notes);
  if (isTable(raw.hosts)) {
    const hosts: Record<string, unknown> = {};
    for (const [name, entry] of Object.entries(raw.hosts)) {
      hosts[name] = isTable(entry) ? readHost(name, { ...entry }, path, notes, profiles) : entry;
    }
    raw.hosts = hosts;
  }
  return { raw, notes, profiles };
}

function renameDefaults(d: Record<string, unknown>, path: string, notes: string[]): Record<string, unknown> {
  // 0.8: mcp_task_poll_interval_seconds defaults to poll_interval
  const taskPollFollows =
    "poll_interval" in d && !("mcp_task_poll_interval_seconds" in d) && !("task_poll_interval_seconds" in d);
  for (const [old, ours] of Object.entries(RENAMED_DEFAULTS)) {
    if (!(old in d)) continue;
    const value = d[old];
    if (ours in d && d[ours] !== value) {
      throw new AwaitlessError(
        "config_invalid",
        `${path}: [defaults] sets both ${old} = ${toml(value)} (the Awaitless 0.8 name) and ${ours} = ${toml(d[ours])}`,
        `keep one: remove ${old} (${ours} is its name in this version)`,
        { file: path, key: `defaults.${old}`, table: "defaults" },
      );
    }
    delete d[old];
    d[ours] = value;
    const also =
      old === "poll_interval" && taskPollFollows
        ? ` and, as in 0.8, task_poll_interval_seconds = ${toml(value)}`
        : "";
    if (also) d.task_poll_interval_seconds = value;
    notes.push(`[defaults] ${old} = ${toml(value)} is read as ${ours} = ${toml(value)}${also}`);
  }
  return d;
}

function readHost(
  name: string,
  h: Record<string, unknown>,
  path: string,
  notes: string[],
  profiles: Record<string, string[]>,
): Record<string, unknown> {
  const table = `[hosts.${name}]`;
  for (const [key, why] of Object.entries(DROPPED_HOST_KEYS)) {
    if (!(key in h)) continue;
    notes.push(`${table} ${key} = ${toml(h[key])} ${why}; remove it`);
    delete h[key];
  }
  const profile = PROFILE_KEYS.filter((k) => k in h);
  if (profile.length > 0) {
    profiles[name] = profile;
    for (const k of profile) delete h[k];
    notes.push(
      `${table} ${profile.join(", ")} (0.8's execution profile) is not applied by this version: jobs on ${name} that 0.8 applied it to are refused until the keys are removed (put them in the command instead, see docs/migrating.md)`,
    );
  }
  if (h.gssapi_authentication === true && h.transport === undefined) {
    h.transport = "openssh";
    notes.push(
      `${table} gssapi_authentication = true: ${name} is reached with the system ssh client (transport = "openssh" with GSSAPIAuthentication=yes), as 0.8 did; write transport = "openssh" to say so`,
    );
  } else if (h.gssapi_authentication === true && h.transport === "ssh2") {
    throw new AwaitlessError(
      "config_invalid",
      `${path}: ${table} sets gssapi_authentication = true and transport = "ssh2", but the built-in SSH client has no GSSAPI/Kerberos`,
      'write transport = "openssh" (the system ssh client does GSSAPI), or remove gssapi_authentication',
      { file: path, key: `hosts.${name}.gssapi_authentication`, table: `hosts.${name}` },
    );
  }
  return h;
}

/** The profile keys 0.8 applied to a job of this backend: all of them over SSH, only `env` on Slurm. */
export function profileKeysFor(keys: readonly string[], backend: string): string[] {
  return keys.filter((k) => backend === "ssh" || (backend === "slurm" && k === "env"));
}

/** The refusal for a launch on a host whose 0.8 profile keys this version does not apply. */
export function profileRefusal(host: string, keys: readonly string[], path: string): AwaitlessError {
  return new AwaitlessError(
    "invalid_argument",
    `[hosts.${host}] in ${path} sets ${keys.join(", ")}, Awaitless 0.8's execution profile, which this version does not apply: the job would run without it`,
    {
      cli: `put it in the command (e.g. -- sg GROUP -c '. ./env.sh && ./run.sh', and --env NAME=VALUE), then remove ${keys.join(", ")} from [hosts.${host}]`,
      mcp: `Put it in the command (e.g. command ["sg", "GROUP", "-c", ". ./env.sh && ./run.sh"] and the env argument), and ask the user to remove ${keys.join(", ")} from [hosts.${host}] in the config.`,
    },
    { host, keys: [...keys] },
  );
}

/** The one notice (stderr) for a config read with 0.8 names; "" when there is nothing to say. */
export function legacyNotice(path: string | null, notes: readonly string[]): string {
  if (notes.length === 0) return "";
  const lines = notes.map((n) => `  ${n}\n`).join("");
  return `note: ${path} uses Awaitless 0.8 settings:\n${lines}  rename or remove them to silence this note (docs/migrating.md)\n`;
}
