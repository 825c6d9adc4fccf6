// Renders a job's spec.sh (the client → wrapper half of the on-disk protocol); pure, validates its input.

import { AwaitlessError } from "../core/errors.ts";

/** What the wrapper needs to run one job. Durations in whole seconds; see SPEC_DEFAULTS for omitted fields. */
export interface SpecInput {
  jobId: string;
  /** Absolute, or relative to the directory the wrapper is started in. */
  cwd: string;
  /** argv[0] is looked up in the command's PATH (after env is applied); passed byte-for-byte. */
  argv: readonly string[];
  /** Exported only to the command; names must match [A-Za-z_][A-Za-z0-9_]*. */
  env: Readonly<Record<string, string>>;
  /** 0 = no runtime timeout. */
  timeoutSeconds?: number;
  /** TERM → KILL delay on timeout (a cancel file carries its own). */
  graceSeconds?: number;
  /** Monitor period: heartbeat, log cap, timeout and cancel checks happen once per tick. */
  tickSeconds?: number;
  /** Time between heartbeat rewrites. */
  heartbeatSeconds?: number;
  /** Per-stream disk cap (head + rolling tail); 0 = unlimited. */
  logCapBytes?: number;
}

export const SPEC_DEFAULTS = {
  timeoutSeconds: 0,
  graceSeconds: 10,
  tickSeconds: 1,
  heartbeatSeconds: 5,
  logCapBytes: 0,
} as const;

/** Smallest non-zero log cap: below this the head and tail would hold too little to be useful. */
export const MIN_LOG_CAP_BYTES = 1024;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Quote a string for POSIX sh: one single-quoted word; `'` becomes `'\''`. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

function invalid(what: string, hint: string): never {
  throw new AwaitlessError("invalid_argument", `Cannot render the job spec: ${what}.`, hint);
}

function checkText(field: string, value: string): void {
  if (value.includes("\0")) invalid(`${field} contains a NUL byte`, `Remove the NUL byte from ${field}.`);
  if (!value.isWellFormed()) {
    invalid(`${field} is not valid Unicode (lone surrogate)`, `Pass ${field} as well-formed text.`);
  }
}

function checkSeconds(field: string, value: number, minimum: number): number {
  if (!Number.isSafeInteger(value) || value < minimum) {
    invalid(`${field} is ${value}`, `Use a whole number of seconds ≥ ${minimum} for ${field}.`);
  }
  return value;
}

/** The text of spec.sh for `input`. Throws AwaitlessError(invalid_argument) on input the wrapper cannot honour. */
export function renderSpec(input: SpecInput): string {
  const timeoutSeconds = checkSeconds(
    "timeoutSeconds",
    input.timeoutSeconds ?? SPEC_DEFAULTS.timeoutSeconds,
    0,
  );
  const graceSeconds = checkSeconds("graceSeconds", input.graceSeconds ?? SPEC_DEFAULTS.graceSeconds, 0);
  const tickSeconds = checkSeconds("tickSeconds", input.tickSeconds ?? SPEC_DEFAULTS.tickSeconds, 1);
  const heartbeatSeconds = checkSeconds(
    "heartbeatSeconds",
    input.heartbeatSeconds ?? SPEC_DEFAULTS.heartbeatSeconds,
    1,
  );
  const logCapBytes = input.logCapBytes ?? SPEC_DEFAULTS.logCapBytes;
  if (
    !Number.isSafeInteger(logCapBytes) ||
    logCapBytes < 0 ||
    (logCapBytes > 0 && logCapBytes < MIN_LOG_CAP_BYTES)
  ) {
    invalid(
      `logCapBytes is ${logCapBytes}`,
      `Use 0 (unlimited) or a whole number of bytes ≥ ${MIN_LOG_CAP_BYTES}.`,
    );
  }
  if (input.jobId === "") invalid("jobId is empty", "Pass the job's ID (job_…).");
  checkText("jobId", input.jobId);
  if (input.cwd === "") invalid("cwd is empty", "Pass the directory the command should run in.");
  checkText("cwd", input.cwd);
  if (input.argv.length === 0 || input.argv[0] === "") {
    invalid("argv has no command", 'Pass the command and its arguments, e.g. argv: ["make", "test"].');
  }
  for (const [index, arg] of input.argv.entries()) checkText(`argv[${index}]`, arg);
  const exports: string[] = [];
  for (const [name, value] of Object.entries(input.env)) {
    if (!ENV_NAME.test(name)) {
      invalid(
        `environment variable name ${JSON.stringify(name)} is not a valid shell name`,
        "Use names made of letters, digits and _ that do not start with a digit.",
      );
    }
    checkText(`env.${name}`, value);
    // `command` keeps a readonly name (bash's PPID, UID…) from aborting the launch: the shell reports it on the
    // job's stderr and goes on.
    exports.push(`  command export ${shellQuote(`${name}=${value}`)}`);
  }
  return [
    "# Awaitless job spec (protocol 1), rendered by renderSpec(); sourced by wrapper.sh. Do not edit.",
    `AWL_JOB_ID=${shellQuote(input.jobId)}`,
    `AWL_CWD=${shellQuote(input.cwd)}`,
    `AWL_TIMEOUT=${timeoutSeconds}`,
    `AWL_GRACE=${graceSeconds}`,
    `AWL_TICK=${tickSeconds}`,
    `AWL_HEARTBEAT=${heartbeatSeconds}`,
    `AWL_LOG_CAP=${logCapBytes}`,
    `set -- ${input.argv.map(shellQuote).join(" ")}`,
    "awl_env() {",
    ...exports,
    "  :",
    "}",
    "",
  ].join("\n");
}
