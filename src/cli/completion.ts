// `awaitless completion bash|zsh|fish`: shell completions generated from the CLI's own command table (cac).
import type { CAC } from "cac";
import type { Ctx } from "../context.ts";
import { EXIT, invalid } from "../core/model/errors.ts";
import { JOB_STATES } from "../core/model/job.ts";
import { didYouMean } from "../core/util/nearest-name.ts";
import { selfArgv } from "../self.ts";
import type { CliIo } from "./cli-io.ts";
import { MCP_CLIENTS } from "./mcp-config.ts";
import { QUEUE_ACTIONS } from "./queue-commands.ts";
import { shellWord } from "./render.ts";

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

export interface OptionInfo {
  /** "--backend", "-h" … */
  flags: string[];
  description: string;
  takesValue: boolean;
}

export interface CommandInfo {
  name: string;
  /** Other names it answers to (`completions` for `results`). */
  aliases: string[];
  description: string;
  options: OptionInfo[];
  /** What the positional arguments are: job IDs, command names, a fixed list, or anything. */
  positional: "job_id" | "command" | "none" | "any" | readonly string[];
  /** The first positional argument's name in the usage line (`shell`, `client`, `action` …). */
  argName: string;
}

/** The dynamic words: the script asks the binary that generated it (`completion --list KIND`). */
type Dynamic = { list: "jobs" | "hosts" | "queues" };
type Values = readonly string[] | "dir" | "file" | Dynamic;

/** Values worth offering for some options and arguments (the command names come from cac). */
const OPTION_VALUES: Record<string, Values> = {
  "--backend": ["local", "ssh", "slurm"],
  "--stream": ["stdout", "stderr", "both"],
  "--state": ["active", "terminal", ...JOB_STATES],
  "--host": { list: "hosts" },
  "--queue": { list: "queues" },
  "--cwd": "dir",
  "--log-dir": "dir",
  "--config": "file",
  "--file": "file",
  "--artifact": "file",
  "--list": ["jobs", "hosts", "queues"],
  "--after": { list: "jobs" },
  "--retry-on": ["infrastructure", "lost", "exit"],
};

/** Where one command's option takes other values than OPTION_VALUES says (`results --after` takes a cursor). */
const COMMAND_OPTION_VALUES: Record<string, Record<string, Values | null>> = {
  results: { "--after": null },
};

/** The values worth offering for `flag` of `command` (undefined: none). */
function valuesFor(command: string | null, flag: string): Values | undefined {
  const own = command === null ? undefined : COMMAND_OPTION_VALUES[command]?.[flag];
  return own === null ? undefined : (own ?? OPTION_VALUES[flag]);
}
const ARG_VALUES: Record<string, readonly string[]> = {
  shell: SHELLS,
  client: MCP_CLIENTS,
  action: QUEUE_ACTIONS,
};

function optionInfo(o: { rawName: string; description: string }): OptionInfo {
  const flags = o.rawName
    .split(/[ ,]+/)
    .filter((t) => t.startsWith("-"))
    .map((t) => t.replace(/[<[].*$/, ""));
  return { flags, description: o.description, takesValue: /[<[]/.test(o.rawName) };
}

export function commandTable(cli: CAC): { commands: CommandInfo[]; global: OptionInfo[] } {
  const commands = cli.commands
    .filter((c) => c.name !== "")
    .map((c): CommandInfo => {
      const arg = c.args[0]?.value;
      const positional =
        arg === undefined
          ? "none"
          : /job_id/.test(arg)
            ? "job_id"
            : arg === "command"
              ? "command"
              : (ARG_VALUES[arg] ?? "any");
      return {
        name: c.name,
        aliases: c.aliasNames,
        description: c.description,
        options: c.options.map(optionInfo),
        positional,
        argName: arg ?? "",
      };
    });
  return { commands, global: cli.globalCommand.options.map(optionInfo) };
}

/** This binary as a shell word: the scripts list job IDs, hosts and queues through the binary that wrote them. */
function selfWord(): string {
  return selfArgv().map(shellWord).join(" ");
}

const listSh = (kind: Dynamic["list"]): string => `${selfWord()} completion --list ${kind} 2>/dev/null`;

function bashReply(v: Values | undefined): string {
  if (v === "dir") return 'COMPREPLY=($(compgen -d -- "$cur"))';
  if (v === "file") return 'COMPREPLY=($(compgen -f -- "$cur"))';
  if (v === undefined) return "COMPREPLY=()";
  const words = Array.isArray(v) ? v.join(" ") : `$(${listSh((v as Dynamic).list)})`;
  return `COMPREPLY=($(compgen -W "${words}" -- "$cur"))`;
}

/** The bash `case` pattern of a command: its name and its other names. */
const bashNames = (c: CommandInfo): string => [c.name, ...c.aliases].join("|");

/** What bash offers after `flag`: one answer, or one per command where commands differ (`results --after`). */
function bashPrevCase(t: ReturnType<typeof commandTable>, flag: string): string {
  const differ = t.commands.filter(
    (c) => c.options.some((o) => o.flags.includes(flag)) && valuesFor(c.name, flag) !== OPTION_VALUES[flag],
  );
  if (differ.length === 0) return `    ${flag}) ${bashReply(OPTION_VALUES[flag])}; return 0 ;;`;
  const own = differ.map((c) => `${bashNames(c)}) ${bashReply(valuesFor(c.name, flag))} ;;`).join(" ");
  return `    ${flag}) case "$cmd" in ${own} *) ${bashReply(OPTION_VALUES[flag])} ;; esac; return 0 ;;`;
}

function bash(t: ReturnType<typeof commandTable>): string {
  const all = [...t.global, ...t.commands.flatMap((c) => c.options)];
  const valued = [...new Set(all.filter((o) => o.takesValue).flatMap((o) => o.flags))];
  const prevCases = valued.map((f) => bashPrevCase(t, f));
  const names = t.commands.map((c) => c.name);
  const globalFlags = t.global.flatMap((o) => o.flags).join(" ");
  const optCases = t.commands.map(
    (c) => `    ${bashNames(c)}) opts="${c.options.flatMap((o) => o.flags).join(" ")}" ;;`,
  );
  const argCases = t.commands
    .filter((c) => c.positional !== "none" && c.positional !== "any")
    .map((c) => {
      const v =
        c.positional === "job_id"
          ? { list: "jobs" as const }
          : c.positional === "command"
            ? names
            : c.positional;
      // Only the first word after the command is an action, shell, client or command name.
      const guard = Array.isArray(v) ? '[[ "$cword" == "$cmd" ]] && ' : "";
      return `    ${bashNames(c)}) ${guard}${bashReply(v as Values)} ;;`;
    });
  return `# bash completion for awaitless (generated by \`awaitless completion bash\`)
_awaitless() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="" cword="" opts="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
    --) return 0 ;;
    ${valued.join("|")}) ((i++)) ;;
    -*) ;;
    *) cword="\${COMP_WORDS[i]}"; [[ -z "$cmd" ]] && cmd="$cword" ;;
    esac
  done
  case "$prev" in
${prevCases.join("\n")}
  esac
  if [[ -z "$cmd" ]]; then
    COMPREPLY=($(compgen -W "${names.join(" ")} --version -V ${globalFlags}" -- "$cur"))
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    case "$cmd" in
${optCases.join("\n")}
    esac
    COMPREPLY=($(compgen -W "$opts ${globalFlags}" -- "$cur"))
    return 0
  fi
  case "$cmd" in
${argCases.join("\n")}
  esac
}
complete -o bashdefault -o default -F _awaitless awaitless
`;
}

const zq = (s: string): string => s.replace(/\\/g, "\\\\").replace(/'/g, "'\\''");
const zdesc = (s: string): string => zq(s).replace(/([[\]:])/g, "\\$1");

function zshAction(v: Values | undefined, label: string): string {
  if (v === "dir") return `:${label}:_files -/`;
  if (v === "file") return `:${label}:_files`;
  if (v === undefined) return `:${label}: `;
  return Array.isArray(v) ? `:${label}:(${v.join(" ")})` : `:${label}:_awaitless_list ${(v as Dynamic).list}`;
}

function zshSpec(o: OptionInfo, command: string | null = null): string[] {
  return o.flags.map((f) => {
    const action = o.takesValue ? zshAction(valuesFor(command, f), "value") : "";
    return `'*${f}[${zdesc(o.description)}]${action}'`;
  });
}

function zsh(t: ReturnType<typeof commandTable>): string {
  const global = t.global.flatMap((o) => zshSpec(o)).join(" \\\n    ");
  const described = t.commands.map((c) => `    '${zq(c.name)}:${zq(c.description)}'`).join("\n");
  const cases = t.commands.map((c) => {
    const arg =
      c.positional === "job_id"
        ? " '*:job id:_awaitless_list jobs'"
        : c.positional === "command"
          ? ` '1${zshAction(
              t.commands.map((x) => x.name),
              "command",
            )}'`
          : Array.isArray(c.positional)
            ? ` '1${zshAction(c.positional, c.argName)}'`
            : c.positional === "any"
              ? " '*:argument:_files'"
              : "";
    const specs = c.options.flatMap((o) => zshSpec(o, c.name)).join(" ");
    return `    ${bashNames(c)}) _arguments -s ${specs}${arg} ${global.replace(/ \\\n {4}/g, " ")} ;;`;
  });
  return `#compdef awaitless
# zsh completion for awaitless (generated by \`awaitless completion zsh\`)
_awaitless_list() {
  local -a words
  words=(\${(f)"$(${selfWord()} completion --list $1 2>/dev/null)"})
  compadd -a words
}
_awaitless() {
  local -a commands
  commands=(
${described}
  )
  local curcontext="$curcontext" state line
  _arguments -C \\
    ${global} \\
    '1: :->command' '*:: :->args'
  case $state in
  command) _describe 'awaitless command' commands ;;
  args)
    case $line[1] in
${cases.join("\n")}
    esac ;;
  esac
}
if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then _awaitless "$@"; else compdef _awaitless awaitless; fi
`;
}

const fq = (s: string): string => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

function fishList(kind: Dynamic["list"]): string {
  const word = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : fq(w));
  return `${selfArgv().map(word).join(" ")} completion --list ${kind} 2>/dev/null`;
}

function fishOption(o: OptionInfo, cond: string, command: string | null = null): string {
  const parts = ["complete -c awaitless", cond];
  for (const f of o.flags) parts.push(f.startsWith("--") ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`);
  const v = valuesFor(command, o.flags.at(-1)!);
  if (o.takesValue && Array.isArray(v)) parts.push(`-x -a ${fq(v.join(" "))}`);
  else if (o.takesValue && typeof v === "object")
    parts.push(`-x -a ${fq(`(${fishList((v as Dynamic).list)})`)}`);
  else if (o.takesValue)
    parts.push(v === "dir" ? "-x -a '(__fish_complete_directories)'" : v === "file" ? "-r -F" : "-x");
  parts.push(`-d ${fq(o.description)}`);
  return parts.filter(Boolean).join(" ");
}

function fish(t: ReturnType<typeof commandTable>): string {
  const lines = [
    "# fish completion for awaitless (generated by `awaitless completion fish`)",
    "complete -c awaitless -f",
  ];
  for (const o of t.global) lines.push(fishOption(o, ""));
  for (const c of t.commands) {
    lines.push(`complete -c awaitless -n __fish_use_subcommand -a ${c.name} -d ${fq(c.description)}`);
    const seen = [c.name, ...c.aliases].join(" ");
    const cond = `-n '__fish_seen_subcommand_from ${seen}'`;
    for (const o of c.options) lines.push(fishOption(o, cond, c.name));
    const first = `-n '__fish_seen_subcommand_from ${seen}; and test (count (commandline -opc)) -le 2'`;
    if (c.positional === "job_id")
      lines.push(`complete -c awaitless ${cond} -a ${fq(`(${fishList("jobs")})`)}`);
    else if (c.positional === "command")
      lines.push(`complete -c awaitless ${first} -a ${fq(t.commands.map((x) => x.name).join(" "))}`);
    else if (Array.isArray(c.positional))
      lines.push(`complete -c awaitless ${first} -a ${fq(c.positional.join(" "))}`);
    else if (c.positional === "any") lines.push(`complete -c awaitless ${cond} -F`);
  }
  return `${lines.join("\n")}\n`;
}

export function completionScript(shell: Shell, cli: CAC): string {
  const table = commandTable(cli);
  return shell === "bash" ? bash(table) : shell === "zsh" ? zsh(table) : fish(table);
}

export async function completionCommand(
  shell: string | undefined,
  opts: Record<string, unknown>,
  cli: CAC,
  io: CliIo,
  makeCtx: () => Promise<Ctx>,
): Promise<number> {
  if (opts.list !== undefined) {
    const { completionList } = await import("./completion-lists.ts");
    return completionList(String(opts.list), io, makeCtx, opts.json === true);
  }
  if (shell === undefined)
    throw invalid("completion needs a shell", `awaitless completion ${SHELLS.join("|")}`);
  if (!(SHELLS as readonly string[]).includes(shell))
    throw invalid(
      `no completions for shell ${JSON.stringify(shell)}${didYouMean(shell, SHELLS)}`,
      `use one of: ${SHELLS.join(", ")}`,
    );
  const script = completionScript(shell as Shell, cli);
  io.stdout.write(opts.json ? `${JSON.stringify({ shell, script })}\n` : script);
  return EXIT.ok;
}
