// Parsing of CLI option values: durations, NAME=VALUE pairs, repeatable flags. Errors name the flag and the fix.
import { invalid } from "../core/model/errors.ts";
import type { LaunchRequest } from "../core/model/service-api.ts";

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400 };

/** "90" (seconds), "90s", "10m", "2h", "1h30m", "1.5h", "250ms" → seconds. */
export function parseDuration(text: string | number, flag: string): number {
  const s = String(text).trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
  let total = 0;
  let pos = 0;
  let m: RegExpExecArray | null = re.exec(s);
  while (m) {
    total += Number(m[1]) * UNIT_SECONDS[m[2]!]!;
    pos = re.lastIndex;
    m = re.exec(s);
  }
  if (pos === 0 || pos !== s.length) {
    throw invalid(`${flag}: bad duration ${JSON.stringify(s)}`, "write it like 30, 90s, 10m, 2h or 1h30m");
  }
  return total;
}

const UNIT_BYTES: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1000 ** 4,
  tib: 1024 ** 4,
};

/** "1048576", "500M", "10GiB", "1.5GB" → bytes (K/M/G/T and KiB… are powers of 1024, KB/MB/GB/TB of 1000). */
export function parseSize(text: string | number, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(String(text).trim());
  const unit = m ? UNIT_BYTES[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw invalid(
      `${flag}: bad size ${JSON.stringify(String(text))}`,
      "write it like 1048576, 500M, 10GiB or 2GB",
    );
  }
  const bytes = Math.floor(Number(m[1]) * unit);
  if (bytes === 0 && Number(m[1]) > 0) {
    throw invalid(
      `${flag}: ${JSON.stringify(String(text))} is less than one byte`,
      "give at least 1, or 0 for no limit",
    );
  }
  return bytes;
}

export function asList(v: unknown): string[] {
  if (v === undefined || v === null || v === false) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

/** NAME=VALUE pairs (the value may contain '=' and anything else). */
export function parsePairs(values: string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf("=");
    if (eq <= 0)
      throw invalid(
        `${flag} ${JSON.stringify(v)}: expected NAME=VALUE`,
        `write ${flag} NAME=VALUE (e.g. ${flag} MODE=fast)`,
      );
    out[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return out;
}

export function parseIntOption(v: unknown, flag: string, min: number, max: number): number {
  // a value as typed (typed-values.ts) is read only when it is written as a whole number: not "", "0x10" or "1e3"
  const n = typeof v === "string" && !/^\s*-?\d+\s*$/.test(v) ? Number.NaN : Number(v);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw invalid(`${flag}: bad number ${JSON.stringify(v)}`, `give a whole number from ${min} to ${max}`);
  }
  return n;
}

export interface RawLaunchOptions {
  backend?: string;
  host?: string;
  cwd?: string;
  env?: unknown;
  secretEnv?: unknown;
  timeout?: string;
  stallTimeout?: string;
  artifact?: unknown;
  name?: string;
  queue?: string;
  resource?: unknown;
  after?: unknown;
  retries?: unknown;
  retryOn?: unknown;
  retryBackoff?: unknown;
  clientRequestId?: string;
  logDir?: unknown;
  keepLeftovers?: unknown;
  slurmOption?: unknown;
  allowDuplicate?: boolean;
}

export function launchRequest(argv: string[], o: RawLaunchOptions): LaunchRequest {
  if (argv.length === 0) {
    throw invalid("no command given", "put the command after `--`: awaitless run -- make test");
  }
  const req: LaunchRequest = { argv, allow_duplicate: o.allowDuplicate ?? true };
  if (o.backend !== undefined) {
    if (!["local", "ssh", "slurm"].includes(o.backend)) {
      throw invalid(`--backend ${o.backend}: unknown backend`, "use --backend local, ssh or slurm");
    }
    req.backend = o.backend as LaunchRequest["backend"];
  }
  if (o.host !== undefined) req.host = String(o.host);
  if (o.cwd !== undefined) req.cwd = String(o.cwd);
  const env = parsePairs(asList(o.env), "--env");
  if (Object.keys(env).length) req.env = env;
  const secrets = asList(o.secretEnv);
  if (secrets.length) req.secret_env = secrets;
  if (o.timeout !== undefined) req.timeout_seconds = parseDuration(o.timeout, "--timeout");
  if (o.stallTimeout !== undefined)
    req.stall_timeout_seconds = parseDuration(o.stallTimeout, "--stall-timeout");
  const artifacts = asList(o.artifact);
  if (artifacts.length) req.artifacts = artifacts;
  if (o.name !== undefined) req.name = String(o.name);
  if (o.queue !== undefined) req.queue = String(o.queue);
  const resources = asList(o.resource);
  if (resources.length) req.resources = resources;
  const after = asList(o.after);
  if (after.length) req.after = after;
  if (o.retries !== undefined) req.retries = parseIntOption(o.retries, "--retries", 0, 100);
  const retryOn = asList(o.retryOn).flatMap((v) => v.split(","));
  if (retryOn.length) req.retry_on = retryOn;
  if (o.retryBackoff !== undefined)
    req.retry_backoff_seconds = parseDuration(String(o.retryBackoff), "--retry-backoff");
  if (o.clientRequestId !== undefined) req.client_request_id = String(o.clientRequestId);
  if (o.logDir !== undefined) {
    // cac turns a repeated flag into an array, and a bare `--log-dir` into true.
    if (typeof o.logDir !== "string")
      throw invalid("--log-dir takes one directory", "write --log-dir DIR once, e.g. --log-dir ./logs");
    req.log_dir = o.logDir;
  }
  if (o.keepLeftovers !== undefined) {
    if (typeof o.keepLeftovers !== "boolean")
      throw invalid(
        "--keep-leftovers takes no value",
        "write --keep-leftovers alone (or --no-keep-leftovers)",
      );
    req.keep_leftovers = o.keepLeftovers;
  }
  const slurm = parsePairs(asList(o.slurmOption), "--slurm-option");
  if (Object.keys(slurm).length) req.slurm_options = slurm;
  return req;
}

/** `--array` given once, as text (cac turns a repeated flag into a list). */
export function arrayText(v: unknown): string {
  if (Array.isArray(v))
    throw invalid("--array was given more than once", "give one --array, e.g. --array 0-99%8");
  if (typeof v !== "string" && typeof v !== "number")
    throw invalid("--array needs indices", "e.g. --array 0-99%8");
  return String(v);
}
