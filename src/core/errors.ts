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

/** A hint for both surfaces: one surface-neutral sentence, or one per surface when it names what to call. */
export type Hint = string | Readonly<Record<Surface, string>>;

export class AwaitlessError extends Error {
  readonly code: ErrorCode;
  /** The CLI's hint (the same sentence as the MCP one when the hint is surface-neutral). */
  readonly hint: string;
  /** The hint the MCP surface shows: tool and argument names, never CLI commands or flags. */
  readonly mcpHint: string;
  readonly details: Record<string, unknown>;
  constructor(
    code: ErrorCode,
    message: string,
    hint: Hint,
    details: Record<string, unknown> = {},
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "AwaitlessError";
    this.code = code;
    this.hint = typeof hint === "string" ? hint : hint.cli;
    this.mcpHint = typeof hint === "string" ? hint : hint.mcp;
    this.details = details;
  }
  hintFor(surface: Surface): string {
    return surface === "mcp" ? this.mcpHint : this.hint;
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
