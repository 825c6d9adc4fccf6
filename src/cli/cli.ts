// The CLI (cac): declares commands and options, then hands each to its action in commands.ts.
import { type CAC, type Command, cac } from "cac";
import type { Ctx } from "../context.ts";
import { AwaitlessError, EXIT, invalid } from "../core/model/errors.ts";
import { didYouMean, nearestName } from "../core/util/nearest-name.ts";
import type { CliIo } from "./cli-io.ts";
import { type Action, COMMANDS } from "./commands.ts";
import { paint, shellWord, styleFor } from "./render.ts";
import { cliSession, reportError } from "./session.ts";
import { keepTypedValues } from "./typed-values.ts";

const LAUNCH_OPTIONS: [string, string][] = [
  ["--backend <name>", "local (default), ssh or slurm"],
  ["--host <name>", "target host ([hosts.NAME] or ~/.ssh/config alias)"],
  ["--cwd <dir>", "working directory (default: the current one)"],
  ["--env <NAME=VALUE>", "environment variable for the command (repeatable)"],
  ["--secret-env <NAME>", "pass NAME from this environment; its value is redacted everywhere (repeatable)"],
  ["--timeout <duration>", "runtime limit, e.g. 30m (the job is timed_out after it)"],
  ["--stall-timeout <duration>", "report `stalled` after this long without output"],
  ["--artifact <path>", "file, directory or glob to collect (repeatable)"],
  ["--name <name>", "a label for the job"],
  ["--queue <name>", "named FIFO queue (create it first: awaitless queue create NAME --concurrency N)"],
  ["--resource <NAME=VALUE>", "resource lock, e.g. gpu=0: waits until no other job holds it (repeatable)"],
  [
    "--after <JOB[:ok|:any|:failed]>",
    "start after JOB succeeded (ok, default), ended (any) or failed, on the same target (repeatable)",
  ],
  [
    "--array <indices[%N]>",
    "a job array: one task per index (0-99, 1,3,5, 0-20:2), at most N at once; AWAITLESS_ARRAY_INDEX names each",
  ],
  ["--retries <n>", "retry up to N more times after an end --retry-on names (one job ID, attempts numbered)"],
  [
    "--retry-on <class>",
    "lost, infrastructure (default: lost, failed launch, node failure) or exit (repeatable)",
  ],
  ["--retry-backoff <duration>", "wait before the first retry (default 10s), doubling for each later one"],
  ["--client-request-id <id>", "idempotency key: a retry with the same key never launches twice"],
  [
    "--log-dir <dir>",
    "local jobs: keep this job's logs and records in DIR/<job-id> (default: the data directory)",
  ],
  [
    "--keep-leftovers",
    "keep what the command leaves running when it ends (local, ssh; a later cancel stops it)",
  ],
  ["--slurm-option <KEY=VALUE>", "Slurm resource (allowlisted keys; slurm backend)"],
];

/** `completion` reads the command table itself, so it is bound here, beside the table (commands.ts never loads cli.ts). */
const ACTIONS: Record<string, Action> = {
  ...COMMANDS,
  async completion(args, io, makeCtx) {
    const { completionCommand } = await import("./completion.ts");
    const shell = args[0] === undefined ? undefined : String(args[0]);
    const opts = (args[args.length - 1] ?? {}) as Record<string, unknown>;
    return completionCommand(shell, opts, buildCli(), io, makeCtx);
  },
};

type Bind = (name: string) => (...args: unknown[]) => void;

const LAST = "the newest job or job array, instead of an ID";

/**
 * The command table (cac): used to parse argv, and read by `completion` to generate shell completions. With
 * `optionsOf`, only that command gets its options (every command keeps its name and description): making and
 * matching every option of every command is most of what cac costs at start, and a run uses one command.
 */
export function buildCli(bind: Bind = () => () => {}, optionsOf?: string): CAC {
  const cli = cac("awaitless");
  if (optionsOf !== undefined) onlyCommand(cli, optionsOf);
  const launch = (c: ReturnType<typeof cli.command>) => {
    for (const [flag, desc] of LAUNCH_OPTIONS) c.option(flag, desc);
    return c;
  };

  cli.option("--json", "machine-readable output (one JSON object)");
  cli.option("--config <file>", "config file (default: $XDG_CONFIG_HOME/awaitless/config.toml)");

  launch(
    cli.command(
      "run",
      "run a command as a durable job and wait for its end; Ctrl-C detaches, the job keeps running",
    ),
  )
    .option(
      "--detach-after <duration>",
      "wait at most this long, then print the job ID and detach (exit 4; the job keeps running)",
    )
    .option("--inline-timeout <duration>", "Awaitless 0.8's name for --detach-after")
    .usage("run [options] -- <command> [args...]")
    .action(bind("run"));
  launch(cli.command("submit", "start a command as a durable job and return its ID at once"))
    .usage("submit [options] -- <command> [args...]")
    .action(bind("submit"));
  cli
    .command("wait [job_id]", "wait for a job to finish and show its result")
    .option("--last", LAST)
    .option("--timeout <duration>", "give up waiting after this long (the job keeps running; exit 4)")
    .action(bind("wait"));
  cli
    .command(
      "results [...job_ids]",
      "each job's result as soon as it ends, for several jobs (the completion feed; formerly `completions`)",
    )
    .alias("completions")
    .option("--last", LAST)
    .option("--after <cursor>", "only completions after this cursor (next_cursor of the previous call)")
    .option("--drain", "keep reading until every listed job has completed")
    .option("--timeout <duration>", "how long to block when nothing has completed yet (default: no limit)")
    .option("--limit <n>", "items per page (1–500, default 50)")
    .action(bind("results"));
  cli.command("status [job_id]", "current state of a job").option("--last", LAST).action(bind("status"));
  cli
    .command("logs [job_id]", "the job's output (bounded; full logs stay on disk)")
    .option("--last", LAST)
    .option("--tail <lines>", "only the last N lines (with --grep: the last N matching lines)")
    .option("--head <lines>", "only the first N lines (with --grep: the first N matching lines)")
    .option(
      "--lines <range>",
      "only lines A:B (also A: or :B), numbered from 1; paging cursors are such ranges",
    )
    .option(
      "--grep <regex>",
      "only lines matching this POSIX extended regex (as grep -E), searched over the whole log",
    )
    .option("-i, --ignore-case", "--grep matches either case of each letter (as grep -i)")
    .option("--all", "every line (or every --grep match), not only the last 1 MiB")
    .option("--follow", "keep printing new output until the job ends")
    .option("--stream <name>", "stdout, stderr or both (default both)")
    .action(bind("logs"));
  cli
    .command(
      "cancel [job_id]",
      "stop a job and every process it started: SIGTERM, SIGKILL after the grace period (an ended job: what it kept)",
    )
    .option("--last", LAST)
    .option("--grace-period <duration>", "time between SIGTERM and SIGKILL (default 10s)")
    .action(bind("cancel"));
  cli
    .command("list", "recent jobs, newest first")
    .option("--state <state>", "a state, or active / terminal (pending = queued)")
    .option("--name <name>", "jobs with this name")
    .option("--host <name>", "jobs on this host")
    .option("--queue <name>", "jobs in this queue")
    .option("--limit <n>", "how many (default 20)")
    .option("--tasks", "list job arrays' tasks as rows (by default each array is one row)")
    .action(bind("list"));
  cli
    .command("inspect [job_id]", "everything about a job: spec, backend identity, state history")
    .option("--last", LAST)
    .action(bind("inspect"));
  cli
    .command("doctor", "check that this machine can run jobs, and show where things live")
    .option(
      "--host <name>",
      "also check an SSH/Slurm host: resolution, reachability, host key, auth, remote shell and directory",
    )
    .action(bind("doctor"));
  cli
    .command("demo", "watch a job survive its client: submit, kill the waiter, recover from a new client")
    .action(bind("demo"));
  cli
    .command("gc", "remove finished jobs' files and rows (never an active job)")
    .option("--older-than <duration>", "finished longer ago than this (default: retention_days)")
    .option("--keep <n>", "keep at most this many finished jobs (default: retention_max_jobs)")
    .option(
      "--max-bytes <size>",
      "then remove the oldest finished jobs while all jobs' files exceed this, e.g. 5GiB; 0 = no limit (default: store_quota_bytes)",
    )
    .option("--dry-run", "only show what would be removed")
    .option(
      "--forget-unreachable",
      "also drop finished jobs whose SSH/Slurm host cannot be reached (their copy on the host stays)",
    )
    .action(bind("gc"));
  cli
    .command("queue <action> [name]", "named queues: create, set (change the concurrency), delete, list")
    .option("--concurrency <n>", "create, set: jobs of the queue that run at once")
    .option("--host <name>", "the queue's host (default: this machine)")
    .option("--all", "list: also the private queues of active job arrays (array.ARRAY_ID)")
    .action(bind("queue"));
  cli
    .command("import", "bring in the finished jobs of an Awaitless 0.8 store (never changes it)")
    .option("--from <dir>", "0.8's data directory (default: the one 0.8 used here)")
    .action(bind("import"));
  cli
    .command("mcp", "serve the MCP protocol on stdio (for agents)")
    .option(
      "--hold-seconds <s>",
      "longest a held call stays open, for every client of this server (mcp-config writes it to match the client's limit)",
    )
    .action(bind("mcp"));
  cli
    .command(
      "ui",
      "a live dashboard in the browser: every job and queue, logs, cancel (prints a URL with a token)",
    )
    .option("--port <n>", "port to listen on (default: a free one)")
    .option(
      "--host <address>",
      "address to bind (default 127.0.0.1; anything else is reachable from elsewhere)",
    )
    .option("--open", "open the URL in the browser (xdg-open / open)")
    .action(bind("ui"));
  cli.command("version", "print the version (also --version, -V)").action(bind("version"));
  cli.command("help [command]", "show help for all commands, or for one").action(() => {});
  cli
    .command(
      "mcp-config [client]",
      "print the MCP server entry for claude, codex, cursor, gemini, opencode, qwen or json",
    )
    .option("--write", "merge it into that client's config file (keeps what is there, writes a backup)")
    .option("--file <path>", "config file to merge into instead of the client's default")
    .option(
      "--npx",
      "an entry that starts the server with npx -y awaitless (the npm package), not this binary's path",
    )
    .action(bind("mcpConfig"));
  cli
    .command("completion [shell]", "print shell completions for bash, zsh or fish")
    .option("--list <kind>", "print the words the scripts complete: jobs, hosts or queues (one a line)")
    .action(bind("completion"));
  // help is printed by runCli (help.ts: description, examples, --json), not by cac while it parses
  cli.help();
  (cli as unknown as { showHelpOnExit: boolean }).showHelpOnExit = false;
  return cli;
}

/**
 * Only the commands whose first word is `name` are made (runCli parses against those alone), and only `name` itself
 * takes options: declaring another command returns a stand-in whose methods do nothing (see buildCli).
 */
function onlyCommand(cli: CAC, name: string): void {
  const command = cli.command.bind(cli);
  const unmade: Command = new Proxy({} as Command, { get: () => () => unmade });
  cli.command = (rawName, description, config) => {
    if (rawName.split(" ")[0] !== name) return unmade;
    const c = command(rawName, description, config);
    if (c.name !== name) c.option = () => c;
    return c;
  };
}

/**
 * The command the (aliased) words name, as cac finds it: the first word that is neither an option nor the value
 * of `--config` (the one global option taking a value). A guess that cac's own parse confirms (runCli).
 */
function commandWord(words: string[]): string | undefined {
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === "--") return undefined;
    if (word === "--config") i++;
    else if (!word.startsWith("-")) return word;
  }
  return undefined;
}

export async function runCli(argv: string[], io: CliIo, makeCtx: () => Promise<Ctx>): Promise<number> {
  let exitCode = EXIT.ok as number;
  let action: Promise<number> | null = null;
  let named: string | undefined;
  // One context per invocation (job-ID prefixes are resolved with it before the action; session.ts)
  const session = cliSession(() => named ?? "", io, makeCtx);
  let cli: CAC;
  const bind: Bind =
    (name) =>
    (...args: unknown[]) => {
      named = name;
      action = withFullJobIds(name, cli.matchedCommand?.args[0], args, session.ctx).then((a) =>
        ACTIONS[name]!(a, io, session.ctx),
      );
    };
  // The table with only the named command's options, parsed against that command alone; when cac's parse does
  // not confirm it (no command, a typo, an option's value taken for the command), the whole table decides.
  const word = commandWord(aliasedWords(argv));
  const shortcut = word !== undefined && !asksHelp(aliasedWords(argv));
  cli = buildCli(bind, shortcut ? word : undefined);
  keepTypedValues(cli);
  const style = styleFor(io.stderr, io.env);
  try {
    // the table's command names, for `help TOPIC` and an unknown command (neither is parsed against a shortcut table)
    const names = () => cli.commands.map((c) => c.name.split(" ")[0]!).filter(Boolean);
    const words = [
      "awaitless",
      "awaitless",
      ...aliased(argv, () => [...names(), ...cli.commands.flatMap((c) => c.aliasNames)]),
    ];
    const all = cli.commands;
    if (shortcut) cli.commands = all.filter((c) => c.name.split(" ")[0] === word);
    try {
      cli.parse(words, { run: false });
    } finally {
      cli.commands = all;
    }
    if (shortcut && cli.matchedCommand?.name.split(" ")[0] !== word) {
      cli = buildCli(bind);
      keepTypedValues(cli);
      cli.parse(words, { run: false });
    }
    const matched = cli.matchedCommand;
    // `awaitless` alone, with only global options (`awaitless --json`), `--help` or `help`: the help asked for
    const bare = !matched && cli.args.length === 0 && argv.every((w) => w !== "--");
    if (argv.length === 0 || cli.options.help || (bare && globalOnly(argv, cli))) {
      const { printHelp } = await import("./help.ts");
      printHelp(cli, io, Boolean(cli.options.json));
      return EXIT.ok;
    }
    if (matched?.name.startsWith("results") && argv.includes("completions"))
      io.stderr.write(
        `${paint(style, "dim", "note: `completions` is now called `results` (the old name keeps working)")}\n`,
      );
    if (!matched) {
      const first = argv[0] ?? "";
      const flags = ["--version", "--help", ...cli.globalCommand.options.map((o) => `--${o.name}`)];
      throw new AwaitlessError(
        "invalid_argument",
        first.startsWith("-")
          ? `unknown option ${JSON.stringify(first)} before any command${didYouMean(first, flags)}`
          : `unknown command ${JSON.stringify(first)}${didYouMean(first, names())}`,
        "run `awaitless --help` to list commands",
      );
    }
    if ((matched.name === "run" || matched.name === "submit") && cli.args.length > 0) {
      const words = cli.args.map((w) => shellWord(String(w))).join(" ");
      const options = argv.length - 1 > cli.args.length ? " [options]" : "";
      throw new AwaitlessError(
        "invalid_argument",
        `${matched.name} got ${JSON.stringify(cli.args.join(" "))} before \`--\`: the command to run goes after it`,
        `put the command after --: awaitless ${matched.name}${options} -- ${words}`,
      );
    }
    cli.runMatchedCommand();
    exitCode = action ? await action : EXIT.ok;
  } catch (e) {
    exitCode = reportError(withNearestOption(e, cli), io, Boolean(cli.options.json), style);
  }
  session.notices(style);
  return exitCode;
}

/** Is every word a global option (`--json`, `--config FILE`)? Then no command was asked for. */
function globalOnly(argv: string[], cli: ReturnType<typeof buildCli>): boolean {
  const flags = cli.globalCommand.options.flatMap((o) =>
    o.rawName.split(/[\s,]+/).filter((w) => w.startsWith("-")),
  );
  return argv.every((w, i) => flags.includes(w.split("=")[0]!) || (i > 0 && argv[i - 1] === "--config"));
}

/**
 * A command's job-ID argument(s): `--last` made the newest job (or array), and each unique prefix (or task address)
 * replaced by its full ID. A command that takes IDs and got none (and no --last) is refused with both forms.
 */
async function withFullJobIds(
  command: string,
  arg: { value: string; required: boolean } | undefined,
  args: unknown[],
  makeCtx: () => Promise<Ctx>,
): Promise<unknown[]> {
  if (!arg?.value.includes("job_id")) return args;
  const opts = (args.at(-1) ?? {}) as { last?: boolean };
  const given = args[0];
  const none = given === undefined || given === null || (Array.isArray(given) && given.length === 0);
  if (opts.last) {
    if (!none) throw invalid("give either a job ID or --last, not both", "drop one of them");
    const { listing } = await import("../core/model/listing.ts");
    const newest = await listing((await makeCtx()).service, { limit: 1 });
    const last = newest.jobs[0]?.job_id ?? newest.arrays[0]?.job_id;
    if (last === undefined)
      throw invalid("there are no jobs yet", "submit one: awaitless submit -- <command>");
    return [Array.isArray(given) ? [last] : last, ...args.slice(1)];
  }
  const shown = command === "results" ? "JOB_ID…" : "JOB_ID";
  if (none)
    throw invalid(
      `${command} needs ${command === "results" ? "job IDs" : "a job ID"}`,
      `awaitless ${command} ${shown}, or awaitless ${command} --last (the newest job)`,
    );
  const { arrays } = await makeCtx();
  // arrays.resolve: an array's ID or prefix, a task address ARRAY.7 (its job), else the job service's prefix
  const full = (id: unknown) => arrays.resolve(String(id)).id;
  return [Array.isArray(given) ? given.map(full) : full(given), ...args.slice(1)];
}

/** `--version`/`-V` → `version`; `help` → `--help`; `help CMD` → `CMD --help` (an unknown CMD is reported as one). */
function aliased(argv: string[], namesOf: () => string[]): string[] {
  const topic = argv[0] === "help" ? argv[1] : undefined;
  const names = topic === undefined ? [] : namesOf();
  if (topic !== undefined && !topic.startsWith("-") && topic !== "help" && !names.includes(topic)) {
    throw new AwaitlessError(
      "invalid_argument",
      `no help for ${JSON.stringify(topic)}: it is not a command${didYouMean(topic, names)}`,
      "run `awaitless help` to list commands",
    );
  }
  return aliasedWords(argv);
}

/** The words cac parses: aliases spelled out (the topic of `help CMD` is not checked here). */
function aliasedWords(argv: string[]): string[] {
  const [first, ...rest] = argv;
  if (first === "--version" || first === "-V") return ["version", ...rest];
  if (first !== "help") return argv;
  const topic = rest[0];
  if (topic === undefined) return ["--help"];
  // `help --help` (and -h): help's own help; `help --json`: the command list as JSON
  if (topic === "--help" || topic === "-h" || topic === "help") return ["help", "--help", ...rest.slice(1)];
  if (topic.startsWith("-")) return ["--help", ...rest];
  return [topic, "--help", ...rest.slice(1)];
}

/** The words ask for help (cac prints it while it parses, so the table must be whole for that parse). */
function asksHelp(words: string[]): boolean {
  for (const word of words) {
    if (word === "--") return false;
    if (word.startsWith("--help") || /^-[^-]*h/.test(word)) return true;
  }
  return false;
}

/** cac's "Unknown option `--cwdd`" with the nearest option of the command appended ("did you mean `--cwd`?"). */
function withNearestOption(e: unknown, cli: ReturnType<typeof buildCli>): unknown {
  const unknown = /^Unknown option `(-{1,2}[^`]+)`$/.exec((e as Error)?.message ?? "")?.[1];
  if ((e as { name?: string })?.name !== "CACError" || unknown === undefined) return e;
  if (/^-\d/.test(unknown)) {
    // `--retries -1`: cac reads the value as an option; what was meant is a negative number, which none takes
    const err = new Error(`${(e as Error).message} (a negative number? option values here are 0 or more)`);
    err.name = "CACError";
    return err;
  }
  const options = [...(cli.matchedCommand?.options ?? []), ...cli.globalCommand.options];
  const flags = options.flatMap((o) => o.rawName.split(/[\s,]+/).filter((w) => w.startsWith("--")));
  const near = nearestName(
    unknown.replace(/^-+/, ""),
    flags.map((f) => f.slice(2)),
  );
  if (near === undefined) return e;
  const err = new Error(`${(e as Error).message} (did you mean \`--${near}\`?)`);
  err.name = "CACError";
  return err;
}
