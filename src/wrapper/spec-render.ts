// Renders a job's spec.sh (the client → wrapper half of the on-disk protocol); pure, validates its input.

import { AwaitlessError } from "../core/model/errors.ts";
import { QUEUE_NAME_RE, RESOURCE_RE } from "../core/model/queue-names.ts";

export { QUEUE_NAME_RE, RESOURCE_RE };

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
  /** Shortest gap between the monitor's size checks (used while output grows), and its pace during a kill. */
  tickSeconds?: number;
  /** Time between heartbeat rewrites while the command is quiet. */
  heartbeatSeconds?: number;
  /** Longest gap between size checks while nothing changes (the checks back off from tickSeconds to this). */
  checkMaxSeconds?: number;
  /** Per-stream disk cap (head + rolling tail); 0 = unlimited. */
  logCapBytes?: number;
  /** Wait for a turn before starting (named queue and/or resource locks); absent = start at once. */
  admission?: SpecAdmission;
  /** Hold until parents ended (wrapper.sh "Dependencies"); absent = no dependencies. */
  after?: SpecAfter;
  /** The job has retries: which attempt this is and what a client would retry (wrapper.sh awl_final_of). */
  retry?: SpecRetry;
  /** The wrapper runs as a Slurm batch script: Slurm's TERM is the cancel (wrapper.sh "Cancel"). */
  scheduler?: "slurm";
  /** What the command leaves running when it ends by itself is kept, not stopped (wrapper.sh "The whole job"). */
  keepLeftovers?: boolean;
}

/** Dependencies (wrapper.sh "Dependencies"): parents' job directories on this machine, or a condition that failed. */
export interface SpecAfter {
  /** `final`: the parent has retries; `dir` is its first attempt's directory, where its `final` record appears. */
  waits: readonly { job_id: string; on: "ok" | "any" | "failed"; dir: string; final?: boolean }[];
  /** JOB_ID:ON found impossible by the client: the job ends dependency_failed at once. */
  failed: string | null;
}

/** A retried job's attempt (wrapper.sh "Dependencies"): its number, the retries left after it, the classes retried. */
export interface SpecRetry {
  attempt: number;
  left: number;
  on: readonly ("lost" | "infrastructure" | "exit")[];
}

/** Queue admission settings (wrapper.sh "Queue admission"). */
export interface SpecAdmission {
  /** Named queue, or null for resource locks only. */
  queue: string | null;
  /** Jobs of the queue that may run at once (≥ 1). */
  concurrency: number;
  /** Resource locks, each NAME=VALUE; held all together while the command runs. */
  resources: readonly string[];
  /** Shared directory of the machine's queues (absolute, or relative to where the wrapper starts). */
  dir: string;
  /** Lock mechanism when `dir` is first used: auto (flock when installed, else mkdir) or mkdir. */
  lock?: "auto" | "mkdir";
}

export const SPEC_DEFAULTS = {
  timeoutSeconds: 0,
  graceSeconds: 10,
  tickSeconds: 1,
  heartbeatSeconds: 30, // core/model/liveness.ts HEARTBEAT_SECONDS (a test checks they agree)
  checkMaxSeconds: 15, // core/model/liveness.ts CHECK_MAX_SECONDS
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
  const checkMaxSeconds = checkSeconds(
    "checkMaxSeconds",
    input.checkMaxSeconds ?? Math.max(tickSeconds, SPEC_DEFAULTS.checkMaxSeconds),
    tickSeconds,
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
    ...admissionLines(input.admission),
    ...afterLines(input.after),
    ...retryLines(input.retry),
    `AWL_JOB_ID=${shellQuote(input.jobId)}`,
    `AWL_CWD=${shellQuote(input.cwd)}`,
    `AWL_TIMEOUT=${timeoutSeconds}`,
    `AWL_GRACE=${graceSeconds}`,
    `AWL_TICK=${tickSeconds}`,
    `AWL_HEARTBEAT=${heartbeatSeconds}`,
    `AWL_CHECK_MAX=${checkMaxSeconds}`,
    `AWL_LOG_CAP=${logCapBytes}`,
    ...(input.scheduler === "slurm" ? ["AWL_SCHEDULER=slurm"] : []),
    ...(input.keepLeftovers ? ["AWL_KEEP_LEFTOVERS=1"] : []),
    `set -- ${input.argv.map(shellQuote).join(" ")}`,
    "awl_env() {",
    ...exports,
    "  :",
    "}",
    "",
  ].join("\n");
}

function afterLines(a: SpecAfter | undefined): string[] {
  if (a === undefined) return [];
  const lines = [`AWL_AFTER_N=${a.waits.length}`];
  if (a.failed !== null) {
    checkText("after.failed", a.failed);
    lines.push(`AWL_AFTER_FAILED=${shellQuote(a.failed)}`);
  }
  for (const [i, w] of a.waits.entries()) {
    if (!/^job_[0-9A-Za-z]+$/.test(w.job_id) || !["ok", "any", "failed"].includes(w.on) || w.dir === "") {
      invalid(
        `dependency ${JSON.stringify(w)} is not valid`,
        "Pass a job ID, ok|any|failed and its job directory.",
      );
    }
    checkText(`after[${i}].dir`, w.dir);
    const n = i + 1;
    lines.push(
      `AWL_AFTER_${n}_ID=${w.job_id}`,
      `AWL_AFTER_${n}_ON=${w.on}`,
      `AWL_AFTER_${n}_DIR=${shellQuote(w.dir)}`,
      ...(w.final ? [`AWL_AFTER_${n}_FINAL=1`] : []),
    );
  }
  return lines;
}

function retryLines(r: SpecRetry | undefined): string[] {
  if (r === undefined) return [];
  const ok = (n: number) => Number.isInteger(n) && n >= 0;
  if (!ok(r.attempt) || r.attempt < 1 || !ok(r.left) || r.on.some((c) => !/^[a-z]+$/.test(c))) {
    invalid(
      `retry ${JSON.stringify(r)} is not valid`,
      "Pass an attempt ≥ 1, the retries left and the classes.",
    );
  }
  return [
    `AWL_ATTEMPT=${r.attempt}`,
    `AWL_RETRY_LEFT=${r.left}`,
    `AWL_RETRY_ON=${shellQuote(r.on.join(" "))}`,
  ];
}

function admissionLines(a: SpecAdmission | undefined): string[] {
  if (a === undefined) return [];
  if (a.queue === null && a.resources.length === 0) {
    invalid(
      "admission names neither a queue nor resources",
      "Pass a queue name, resources, or no admission.",
    );
  }
  if (a.queue !== null && !QUEUE_NAME_RE.test(a.queue)) {
    invalid(
      `queue name ${JSON.stringify(a.queue)} is not valid`,
      "Use 1–64 characters from A-Z a-z 0-9 . _ -.",
    );
  }
  if (!Number.isSafeInteger(a.concurrency) || a.concurrency < 1) {
    invalid(`queue concurrency is ${a.concurrency}`, "Use a whole number ≥ 1.");
  }
  for (const r of a.resources) {
    if (!RESOURCE_RE.test(r)) {
      invalid(
        `resource ${JSON.stringify(r)} is not NAME=VALUE`,
        "Use NAME=VALUE, each 1–64 of A-Z a-z 0-9 . _ -.",
      );
    }
  }
  if (a.dir === "")
    invalid("the queue directory is empty", "Pass the directory that holds the machine's queues.");
  checkText("admission.dir", a.dir);
  return [
    `AWL_QUEUE=${shellQuote(a.queue ?? "")}`,
    `AWL_QUEUE_CONCURRENCY=${a.concurrency}`,
    `AWL_RESOURCES=${shellQuote([...new Set(a.resources)].sort().join(" "))}`,
    `AWL_QUEUE_DIR=${shellQuote(a.dir)}`,
    `AWL_QUEUE_LOCK=${a.lock ?? "auto"}`,
  ];
}
