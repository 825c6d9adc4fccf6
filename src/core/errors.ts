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

export class AwaitlessError extends Error {
  readonly code: ErrorCode;
  readonly hint: string;
  readonly details: Record<string, unknown>;
  constructor(
    code: ErrorCode,
    message: string,
    hint: string,
    details: Record<string, unknown> = {},
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "AwaitlessError";
    this.code = code;
    this.hint = hint;
    this.details = details;
  }
  get exitCode(): number {
    return EXIT_BY_CODE[this.code];
  }
  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, hint: this.hint, ...this.details };
  }
}

export function invalid(message: string, hint: string, details?: Record<string, unknown>): AwaitlessError {
  return new AwaitlessError("invalid_argument", message, hint, details);
}
