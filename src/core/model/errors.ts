// The one error type users and models see: a code (CLI exit category), what failed, and what to do next.

export const EXIT = {
  ok: 0,
  internal: 1,
  usage: 2,
  jobFailed: 3,
  waitTimedOut: 4,
  cancelled: 5,
  lost: 6,
  connection: 7,
} as const;

export type ErrorCode =
  | "invalid_argument"
  | "not_found"
  | "idempotency_conflict"
  | "duplicate_active_job"
  | "config_invalid"
  | "store_unavailable"
  | "no_space"
  | "launch_failed"
  | "connection_failed"
  | "internal";

const EXIT_BY_CODE: Record<ErrorCode, number> = {
  invalid_argument: EXIT.usage,
  not_found: EXIT.usage,
  idempotency_conflict: EXIT.usage,
  duplicate_active_job: EXIT.usage,
  config_invalid: EXIT.usage,
  store_unavailable: EXIT.usage,
  no_space: EXIT.usage,
  launch_failed: EXIT.internal,
  connection_failed: EXIT.connection,
  internal: EXIT.internal,
};

/** Where an error is shown: the CLI names commands and flags, the MCP server names tools and arguments. */
export type Surface = "cli" | "mcp";

/** What to do next, named abstractly where each surface words it differently (src/hints.ts words every action). */
export type HintAction =
  | "find_job_id"
  | "find_job_id_prefix"
  | "job_id_shape"
  | "job_id_prefix_longer"
  | "job_id_prefix_ambiguous"
  | "import_08_store"
  | "pass_submitted_ids"
  | "new_client_request_id"
  | "wait_for_duplicate"
  | "backend_unavailable"
  | "queue_unsupported"
  | "queue_concurrency_range"
  | "queue_use_existing"
  | "queue_in_use"
  | "queue_create_first"
  | "array_queue_private"
  | "free_space_local"
  | "free_space_remote"
  | "give_command"
  | "env_name"
  | "env_value"
  | "secret_env_name"
  | "secret_env_once"
  | "secret_env_set"
  | "artifact_path"
  | "scheduler_no_queue"
  | "scheduler_keep_leftovers"
  | "scheduler_options_backend"
  | "scheduler_no_resources"
  | "host_name_empty"
  | "local_with_host"
  | "backend_needs_host"
  | "resource_form"
  | "positive_duration"
  | "cwd_missing"
  | "cwd_not_dir"
  | "cwd_unreadable"
  | "log_dir_remote"
  | "log_dir_path"
  | "after_fewer_parents"
  | "after_parent_once"
  | "after_form"
  | "after_parent_unknown"
  | "after_same_target"
  | "after_parent_launching"
  | "after_retried_slurm_array";

export interface ActionHint {
  action: HintAction;
  /** The values the wording names (a job ID, a queue name, a host). */
  args?: Readonly<Record<string, string | number>>;
}

/** A hint: one surface-neutral sentence, one per surface when it names what to call, or an action to word. */
export type Hint = string | Readonly<Record<Surface, string>> | ActionHint;

/** Every action's wording on each surface; installed once by the composition root (context.ts). */
export type HintTable = Readonly<
  Record<HintAction, (args: Readonly<Record<string, string | number>>) => Readonly<Record<Surface, string>>>
>;

let hintTable: HintTable | undefined;

export function useHintTable(table: HintTable): void {
  hintTable = table;
}

/** An action hint: each surface's sentence comes from the installed table when the error is shown. */
export function hint(action: HintAction, args: Readonly<Record<string, string | number>> = {}): ActionHint {
  return { action, args };
}

function worded(h: Hint, surface: Surface): string {
  if (typeof h === "string") return h;
  if ("action" in h) {
    const word = hintTable?.[h.action as HintAction];
    // no table installed (a test of core alone): the action's name says what to do
    return word ? word(h.args ?? {})[surface] : `(${h.action})`;
  }
  return h[surface];
}

/** The most of one text an error carries (its message, hint, each detail): what it quotes may be a 1 MB input. */
export const ERROR_TEXT_CHARS = 2000;

/**
 * `text` in at most about `max` characters: its start and its end (where a message says what was wrong with the
 * value it quotes), saying how many characters between them were left out.
 */
export function boundedText(text: string, max = ERROR_TEXT_CHARS): string {
  if (text.length <= max) return text;
  const head = Math.ceil((max * 2) / 3);
  const tail = max - head;
  return `${text.slice(0, head)}… [${text.length - max} more characters left out] …${text.slice(text.length - tail)}`;
}

/** Details with every text bounded and lists of more than 100 entries cut: they may quote what a client sent. */
function boundedDetail(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return boundedText(value);
  if (depth > 4 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const kept = value.slice(0, 100).map((v) => boundedDetail(v, depth + 1));
    return value.length > 100 ? [...kept, `… ${value.length - 100} more left out`] : kept;
  }
  const entries = Object.entries(value);
  const kept = entries.slice(0, 100).map(([k, v]) => [boundedText(k, 200), boundedDetail(v, depth + 1)]);
  return Object.fromEntries(entries.length > 100 ? [...kept, ["left_out", entries.length - 100]] : kept);
}

export class AwaitlessError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  private readonly given: Hint;
  constructor(
    code: ErrorCode,
    message: string,
    hint: Hint,
    details: Record<string, unknown> = {},
    cause?: unknown,
  ) {
    super(boundedText(message), cause === undefined ? undefined : { cause });
    this.name = "AwaitlessError";
    this.code = code;
    this.given = hint;
    this.details = boundedDetail(details) as Record<string, unknown>;
  }
  /** The CLI's hint (the same sentence as the MCP one when the hint is surface-neutral). */
  get hint(): string {
    return this.hintFor("cli");
  }
  /** The hint the MCP surface shows: tool and argument names, never CLI commands or flags. */
  get mcpHint(): string {
    return this.hintFor("mcp");
  }
  hintFor(surface: Surface): string {
    return boundedText(worded(this.given, surface));
  }
  get exitCode(): number {
    return EXIT_BY_CODE[this.code];
  }
  /** The error as a surface shows it in JSON: code, message, that surface's hint, details. */
  toWire(surface: Surface): Record<string, unknown> {
    return { code: this.code, message: this.message, hint: this.hintFor(surface), ...this.details };
  }
  toJSON(): Record<string, unknown> {
    return this.toWire("cli");
  }
}

export function invalid(message: string, hint: Hint, details?: Record<string, unknown>): AwaitlessError {
  return new AwaitlessError("invalid_argument", message, hint, details);
}
