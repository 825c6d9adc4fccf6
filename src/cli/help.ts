// `awaitless [COMMAND] --help` and `awaitless help [COMMAND]`: the command's one-line description, its usage and
// options, and examples that run as printed; with --json the same as one object. Loaded only when help is asked.
import type { CAC, Command } from "cac";
import type { CliIo } from "./cli-io.ts";

/** Examples each command's help ends with (they run as printed, on a machine with such jobs and hosts). */
export const EXAMPLES: Record<string, string[]> = {
  "": [
    "awaitless run -- make test",
    "awaitless submit --name nightly -- ./bench.sh --full",
    "awaitless wait --last",
    "awaitless help run",
  ],
  run: [
    "awaitless run -- make test && ./deploy.sh",
    "awaitless run --detach-after 30s --json -- ./bench.sh | jq .exit_code",
  ],
  submit: ["id=$(awaitless submit --name nightly -- ./bench.sh --full)", 'awaitless wait "$id"'],
  wait: ["awaitless wait --last --timeout 5m", "awaitless wait job_01JD… --json | jq .exit_code"],
  results: ["awaitless results job_A job_B --drain", "awaitless results job_A job_B --json --after cmp_…"],
  status: ["awaitless status --last", "awaitless status job_01JD… --json | jq .state"],
  logs: [
    "awaitless logs --last --tail 50 --grep 'fail|error' -i",
    "awaitless logs job_01JD… --all > build.log",
    "awaitless logs job_01JD… --follow",
  ],
  cancel: ["awaitless cancel --last --grace-period 30s"],
  list: ["awaitless list --state active", "awaitless list --tasks --name sweep"],
  inspect: ["awaitless inspect --last", "awaitless inspect job_01JD… --json | jq .history"],
  doctor: ["awaitless doctor", "awaitless doctor --host gpu"],
  demo: ["awaitless demo"],
  gc: ["awaitless gc --older-than 7d --dry-run", "awaitless gc --max-bytes 5GiB"],
  queue: [
    "awaitless queue create gpu --concurrency 1",
    "awaitless queue set gpu --concurrency 2",
    "awaitless queue list",
    "awaitless queue delete gpu",
  ],
  import: ["awaitless import", "awaitless import --from ~/old-awaitless-data --json"],
  mcp: ["awaitless mcp-config claude --write   # writes the entry that starts `awaitless mcp`"],
  ui: ["awaitless ui --open"],
  version: ["awaitless version --json"],
  help: ["awaitless help logs", "awaitless logs --help"],
  "mcp-config": ["awaitless mcp-config claude --write", "awaitless mcp-config codex"],
  completion: [
    "awaitless completion bash > ~/.local/share/bash-completion/completions/awaitless",
    "awaitless completion --list jobs",
  ],
};

const nameOf = (c: Command): string => c.name.split(" ")[0] ?? "";

/** What help shows for the command asked about (the global one: the command list). */
function commandAsked(cli: CAC): Command {
  return cli.matchedCommand ?? cli.globalCommand;
}

/** Prints the help of the command asked about (as text, or with `json` as one object) on stdout. */
export function printHelp(cli: CAC, io: CliIo, json: boolean): void {
  const c = commandAsked(cli);
  const name = c === cli.globalCommand ? "" : nameOf(c);
  const examples = EXAMPLES[name] ?? [];
  if (json) {
    io.stdout.write(`${JSON.stringify(helpJson(cli, c, name, examples))}\n`);
    return;
  }
  const description =
    name === ""
      ? "awaitless: a long command as a durable job with a stable ID, on this machine, SSH hosts and Slurm"
      : `awaitless ${name}: ${c.description}`;
  for (const e of examples) c.example(`  $ ${e}`);
  cli.globalCommand.helpCallback = (sections) => [{ body: description }, ...sections.slice(1)];
  // cac prints help with console.info; it goes through our writer (whole, to a pipe or `| head`, as all output)
  const info = console.info;
  console.info = (text: string) => io.stdout.write(`${text}\n`);
  try {
    c.outputHelp();
  } finally {
    console.info = info;
  }
}

function helpJson(cli: CAC, c: Command, name: string, examples: string[]) {
  const options = (cmd: Command) =>
    cmd.options.map((o) => ({ flags: o.rawName, description: o.description }));
  if (name === "")
    return {
      commands: cli.commands.map((x) => ({
        name: nameOf(x),
        usage: `awaitless ${x.usageText || x.rawName}`,
        description: x.description,
        ...(x.aliasNames.length ? { aliases: x.aliasNames } : {}),
      })),
      options: options(cli.globalCommand),
      examples,
    };
  return {
    command: name,
    usage: `awaitless ${c.usageText || c.rawName}`,
    description: c.description,
    ...(c.aliasNames.length ? { aliases: c.aliasNames } : {}),
    options: [...options(c), ...options(cli.globalCommand)],
    examples,
  };
}
