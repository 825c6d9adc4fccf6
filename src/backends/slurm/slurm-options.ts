// Owns the Slurm resource allowlist: which keys a job may set, each value's format, and merging host defaults with per-job overrides.
import { AwaitlessError } from "../../core/model/errors.ts";
import { didYouMean } from "../../core/util/nearest-name.ts";

export const SLURM_OPTION_KEYS = [
  "account",
  "constraint",
  "cpus_per_task",
  "exclusive",
  "gpus",
  "gpus_per_node",
  "gpus_per_task",
  "gres",
  "licenses",
  "mem",
  "mem_per_cpu",
  "nodes",
  "ntasks",
  "partition",
  "qos",
  "reservation",
  "time",
] as const;
export type SlurmOptionKey = (typeof SLURM_OPTION_KEYS)[number];
/** Validated options, keys in canonical (underscore) form, values as they go on the `--key=value` line. */
export type SlurmOptions = Partial<Record<SlurmOptionKey, string>>;

const NAME = "[A-Za-z0-9._-]+";
const COUNT = /^[1-9][0-9]{0,5}$/;
const GPU_COUNT = /^([A-Za-z0-9._-]+:)?[1-9][0-9]{0,5}$/;
const MEM = "^[0-9]+[KMGT]?$";
/** Keys that ask for memory in mutually exclusive ways (sbatch refuses more than one). */
const MEMORY_KEYS: readonly SlurmOptionKey[] = ["mem", "mem_per_cpu"];
const EXCLUSIVE: Record<string, string | undefined> = {
  yes: "--exclusive",
  true: "--exclusive",
  user: "--exclusive=user",
  mcs: "--exclusive=mcs",
  no: undefined,
  false: undefined,
};
const TIME_FORMATS = "MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (e.g. 90, 1:30:00, 2-00)";

interface KeyRule {
  flag: string;
  accepts: string;
  check: (value: string) => boolean;
  /** The sbatch argument for a valid value, or undefined for none; default `flag=value`. */
  render?: (value: string) => string | undefined;
}

const RULES: Record<SlurmOptionKey, KeyRule> = {
  account: {
    flag: "--account",
    accepts: "an account name of letters, digits, '.', '_', '-'",
    check: matches(`^${NAME}$`),
  },
  constraint: {
    flag: "--constraint",
    accepts:
      "node features joined by '&', '|' or ',', optionally grouped in [...] with feature*count (e.g. a100&ib)",
    check: isConstraint,
  },
  cpus_per_task: {
    flag: "--cpus-per-task",
    accepts: "a positive integer (e.g. 4)",
    check: (v) => COUNT.test(v),
  },
  exclusive: {
    flag: "--exclusive",
    accepts:
      "yes (or true: no other job on the allocated nodes), user, mcs, or no (or false: no --exclusive, e.g. to override a host default)",
    check: (v) => Object.hasOwn(EXCLUSIVE, v),
    render: (v) => EXCLUSIVE[v],
  },
  gpus: {
    flag: "--gpus",
    accepts: "a GPU count for the job, optionally with a type: [type:]count (e.g. 2 or a100:2)",
    check: (v) => GPU_COUNT.test(v),
  },
  gpus_per_node: {
    flag: "--gpus-per-node",
    accepts: "a GPU count per node, optionally with a type: [type:]count (e.g. 4 or a100:4)",
    check: (v) => GPU_COUNT.test(v),
  },
  gpus_per_task: {
    flag: "--gpus-per-task",
    accepts: "a GPU count per task, optionally with a type: [type:]count (e.g. 1 or a100:1)",
    check: (v) => GPU_COUNT.test(v),
  },
  gres: {
    flag: "--gres",
    accepts: "a comma-separated list of name[:type][:count] (e.g. gpu:2 or gpu:a100:1)",
    check: matches(`^${NAME}(:${NAME})?(:[0-9]+)?(,${NAME}(:${NAME})?(:[0-9]+)?)*$`),
  },
  licenses: {
    flag: "--licenses",
    accepts: "a comma-separated list of name[@server][:count] (e.g. matlab:2 or ansys@flex:1,comsol)",
    check: matches(`^${NAME}(@${NAME})?(:[1-9][0-9]{0,5})?(,${NAME}(@${NAME})?(:[1-9][0-9]{0,5})?)*$`),
  },
  mem: {
    flag: "--mem",
    accepts: "memory per node: an integer with an optional K, M, G or T suffix (e.g. 16G or 500M)",
    check: matches(MEM),
  },
  mem_per_cpu: {
    flag: "--mem-per-cpu",
    accepts: "memory per CPU: an integer with an optional K, M, G or T suffix (e.g. 4G or 500M)",
    check: matches(MEM),
  },
  nodes: { flag: "--nodes", accepts: "a node count N or a range N-M (e.g. 2 or 1-4)", check: isNodeCount },
  ntasks: { flag: "--ntasks", accepts: "a positive integer (e.g. 8)", check: (v) => COUNT.test(v) },
  partition: {
    flag: "--partition",
    accepts: "a partition name, or several separated by ',' (e.g. gpu or gpu,cpu)",
    check: matches(`^${NAME}(,${NAME})*$`),
  },
  qos: {
    flag: "--qos",
    accepts: "a QOS name of letters, digits, '.', '_', '-'",
    check: matches(`^${NAME}$`),
  },
  reservation: {
    flag: "--reservation",
    accepts:
      "a reservation name of letters, digits, '.', '_', '-' (several separated by ',' need Slurm 23.02+)",
    check: matches(`^${NAME}(,${NAME})*$`),
  },
  time: {
    flag: "--time",
    accepts: `a time limit of at least one minute: ${TIME_FORMATS}`,
    check: (v) => slurmTimeToSeconds(v) !== undefined,
  },
};

function matches(pattern: string): (value: string) => boolean {
  const re = new RegExp(pattern);
  return (value) => re.test(value);
}

function isNodeCount(value: string): boolean {
  const m = /^([1-9][0-9]{0,5})(?:-([1-9][0-9]{0,5}))?$/.exec(value);
  return m !== null && (m[2] === undefined || Number(m[2]) >= Number(m[1]));
}

/** Slurm's constraint grammar, subset: feature[*count] operands, & | , operators, one level of [...] grouping. */
function isConstraint(value: string): boolean {
  const tokens = value.match(/[A-Za-z0-9._-]+(\*[1-9][0-9]*)?|[&|,[\]]|[\s\S]/g) ?? [];
  let expectOperand = true;
  let depth = 0;
  for (const t of tokens) {
    if (t === "[") {
      if (!expectOperand || depth > 0) return false;
      depth++;
    } else if (t === "]") {
      if (expectOperand || depth === 0) return false;
      depth--;
    } else if (t === "&" || t === "|" || t === ",") {
      if (expectOperand) return false;
      expectOperand = true;
    } else if (/^[A-Za-z0-9._-]/.test(t)) {
      if (!expectOperand) return false;
      expectOperand = false;
    } else return false;
  }
  return tokens.length > 0 && !expectOperand && depth === 0;
}

/** Seconds in a Slurm time limit, or undefined when the text is not one of the accepted formats or is zero. */
export function slurmTimeToSeconds(value: string): number | undefined {
  const m = /^(?:([0-9]{1,4})-)?([0-9]{1,6})(?::([0-9]{1,2}))?(?::([0-9]{1,2}))?$/.exec(value);
  if (m === null) return undefined;
  const [, days, a, b, c] = m;
  let seconds: number;
  if (days !== undefined) {
    // D-HH[:MM[:SS]]
    if (Number(a) > 23 || (b !== undefined && Number(b) > 59) || (c !== undefined && Number(c) > 59))
      return undefined;
    seconds = Number(days) * 86400 + Number(a) * 3600 + Number(b ?? 0) * 60 + Number(c ?? 0);
  } else if (c !== undefined) {
    // HH:MM:SS
    if (Number(b) > 59 || Number(c) > 59) return undefined;
    seconds = Number(a) * 3600 + Number(b) * 60 + Number(c);
  } else if (b !== undefined) {
    // MM:SS
    if (Number(b) > 59) return undefined;
    seconds = Number(a) * 60 + Number(b);
  } else seconds = Number(a) * 60; // MM
  return seconds > 0 ? seconds : undefined;
}

/** A Slurm time limit (D-HH:MM:SS) covering `seconds`, rounded up to whole minutes (Slurm's granularity). */
export function formatSlurmTime(seconds: number): string {
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d}-${two(h)}:${two(m)}:00`;
}

/** The sbatch flag for a key: cpus_per_task → --cpus-per-task. */
export function slurmOptionFlag(key: SlurmOptionKey): string {
  return RULES[key].flag;
}

function isKey(key: string): key is SlurmOptionKey {
  return (SLURM_OPTION_KEYS as readonly string[]).includes(key);
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * Validates raw options (from --slurm-option, MCP slurm_options or [hosts.NAME.slurm]); `origin` names where they
 * came from in error messages. Keys may use '-' or '_'; values may be strings or non-negative integers.
 */
export function validateSlurmOptions(raw: Record<string, unknown>, origin = "slurm option"): SlurmOptions {
  const out: SlurmOptions = {};
  for (const [rawKey, rawValue] of Object.entries(raw)) {
    const key = rawKey.trim().replaceAll("-", "_");
    if (!isKey(key)) {
      throw new AwaitlessError(
        "invalid_argument",
        `Unknown ${origin} ${show(rawKey)}${didYouMean(key, SLURM_OPTION_KEYS)}.`,
        `Allowed keys: ${SLURM_OPTION_KEYS.join(", ")} (e.g. cpus_per_task=4). Other sbatch flags cannot be set through Awaitless.`,
        { key: rawKey },
      );
    }
    if (out[key] !== undefined) {
      throw new AwaitlessError("invalid_argument", `${origin} ${key} is given twice.`, `Give ${key} once.`, {
        key,
      });
    }
    const rule = RULES[key];
    const value =
      typeof rawValue === "number" && Number.isSafeInteger(rawValue) && rawValue >= 0
        ? String(rawValue)
        : rawValue;
    if (typeof value !== "string" || !rule.check(value)) {
      throw new AwaitlessError(
        "invalid_argument",
        `Invalid value ${show(rawValue)} for ${origin} ${key}.`,
        `${key} takes ${rule.accepts}; no spaces, quotes, newlines or shell characters.`,
        { key, value: show(rawValue) },
      );
    }
    out[key] = value;
  }
  const memory = MEMORY_KEYS.filter((k) => out[k] !== undefined);
  if (memory.length > 1) {
    throw new AwaitlessError(
      "invalid_argument",
      `${origin}s ${memory.join(" and ")} are both given; sbatch accepts only one way to ask for memory.`,
      "Give mem (per node) or mem_per_cpu (per CPU), not both.",
      { keys: memory.join(",") },
    );
  }
  return out;
}

/**
 * Host defaults overlaid by per-job overrides (override wins per key); both validated. A per-job memory request
 * (mem or mem_per_cpu) replaces the host's default memory request in either form, since sbatch takes only one.
 */
export function mergeSlurmOptions(
  hostDefaults: Record<string, unknown>,
  overrides: Record<string, unknown>,
  hostOrigin = "host default slurm option",
): SlurmOptions {
  const defaults = validateSlurmOptions(hostDefaults, hostOrigin);
  const job = validateSlurmOptions(overrides);
  if (MEMORY_KEYS.some((k) => job[k] !== undefined)) for (const k of MEMORY_KEYS) delete defaults[k];
  return { ...defaults, ...job };
}

/** `--key=value` arguments in allowlist order (stable, so rendered scripts and fingerprints are reproducible). */
export function slurmOptionArgs(options: SlurmOptions): string[] {
  const args: string[] = [];
  for (const key of SLURM_OPTION_KEYS) {
    const value = options[key];
    if (value === undefined) continue;
    const rule = RULES[key];
    const arg = rule.render ? rule.render(value) : `${rule.flag}=${value}`;
    if (arg !== undefined) args.push(arg);
  }
  return args;
}
