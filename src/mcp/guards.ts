// Agent-misuse guards at launch: bare waits (also inside shells, env, nohup, timeout, ssh) and commands that
// never finish (watch, top, tail -f, pagers, REPLs). Duplicates are refused by the service (its hint names wait_for_job).
import path from "node:path";
import { invalid } from "../core/model/errors.ts";
import { type ShellCommand, shellCommands } from "./shell-words.ts";

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ash", "ksh", "fish"]);
const DURATION = /^(?:[\d.]+[smhd]?|infinity)$/;
const REPLS =
  /^(?:python[\d.]*|ipython\d*|pypy\d*|node|nodejs|deno|irb|ruby|perl|lua[\d.]*|R|julia|ghci|erl|iex)$/;
/** ssh options that take a value (OpenSSH's getopt string). */
const SSH_VALUE_OPTS = new Set("BbcDEeFIiJLlmOoPpQRSWw".split(""));

export interface Refusal {
  message: string;
  hint: string;
}

const WAIT_HINT =
  "To wait for a job, use wait_for_job with its job_id (it returns the moment the job finishes); for several " +
  "jobs use wait_for_completions. To run something after a delay, run it now; to wait for a condition, loop " +
  'on it, e.g. "until curl -fs localhost:8080; do sleep 2; done".';

/** Why `argv` must not be launched, or undefined when it may. */
export function refusalFor(argv: string[], depth = 0): Refusal | undefined {
  const inner = unwrap(argv);
  const [program, ...args] = inner;
  if (program === undefined || depth > 8) return undefined;
  const name = path.basename(program);
  if (name === "sleep" && args.length > 0 && args.every((a) => DURATION.test(a)))
    return { message: "only sleeps; a job that sleeps does not wait for anything", hint: WAIT_HINT };
  if (SHELLS.has(name)) {
    const script = shellScript(args);
    if (script !== undefined) return scriptRefusal(script, depth);
    if (isInteractiveShell(args)) return repl(name, `["${name}","-c","…"] or ["${name}","script.sh"]`);
    return undefined;
  }
  if (name === "ssh") {
    const remote = sshRemoteCommand(args);
    return remote === undefined ? undefined : scriptRefusal(remote, depth);
  }
  return neverEnds(name, args);
}

export function assertLaunchable(argv: string[]): void {
  const refusal = refusalFor(argv);
  if (refusal === undefined) return;
  throw invalid(`command ${JSON.stringify(argv)} ${refusal.message}.`, refusal.hint, { argv });
}

/** The first command of a script must not be a bare wait; no command in it may be one that never ends. */
function scriptRefusal(script: string, depth: number): Refusal | undefined {
  const commands = shellCommands(script);
  if (commands === undefined) return undefined;
  const first = commands[0];
  if (first !== undefined && !first.inCompound) {
    const r = refusalFor(first.words, depth + 1);
    if (r !== undefined) return r;
  }
  for (const c of commands.slice(1)) {
    const r = c.inCompound ? neverEndsOf(c) : refusalForNonLeading(c.words, depth);
    if (r !== undefined) return r;
  }
  return first?.inCompound ? neverEndsOf(first) : undefined;
}

/** A later command of a script may sleep (e.g. `server & sleep 2; curl …`), but not run forever. */
function refusalForNonLeading(words: string[], depth: number): Refusal | undefined {
  const r = refusalFor(words, depth + 1);
  return r?.hint === WAIT_HINT ? undefined : r;
}

function neverEndsOf(c: ShellCommand): Refusal | undefined {
  const [program, ...args] = unwrap(c.words);
  return program === undefined ? undefined : neverEnds(path.basename(program), args);
}

function neverEnds(name: string, args: string[]): Refusal | undefined {
  if (name === "watch")
    return {
      message: "repeats its command until it is stopped, so the job would never finish",
      hint: "Run the command itself once (it becomes a job), then wait_for_job for its result or get_job_logs for its output so far.",
    };
  if (name === "top" && !args.some((a) => /^-[^-]*b/.test(a) || a === "--batch"))
    return {
      message: "runs until it is stopped, so the job would never finish",
      hint: 'Take one snapshot instead: ["top","-b","-n","1"], or ["ps","aux"].',
    };
  if (
    name === "tail" &&
    args.some((a) => /^-[^-]*[fF]/.test(a) || a.startsWith("--follow") || a === "--retry")
  )
    return {
      message: "follows its file forever, so the job would never finish",
      hint:
        "To follow a job's output, call get_job_logs (or wait_for_job for its result); " +
        'to read a file\'s end, use ["tail","-n","100","FILE"].',
    };
  if (name === "less" || name === "more" || name === "most")
    return {
      message: `is a pager that waits for keys, so the job would never finish`,
      hint: 'Read the text with ["cat","FILE"], ["head","-n","100","FILE"] or ["tail","-n","100","FILE"]; a job\'s output with get_job_logs.',
    };
  if (REPLS.test(name) && isRepl(args)) return repl(name, `["${name}","script"] or a one-liner with -c/-e`);
  return undefined;
}

function repl(name: string, example: string): Refusal {
  return {
    message: `starts an interactive ${name} with no script, which waits for input that never comes`,
    hint: `Pass a script or the code to run: ${example}.`,
  };
}

/** A REPL: no argument that names a script or code to run (only flags such as -u, -q, -i). */
function isRepl(args: string[]): boolean {
  if (args.some((a) => a === "-i" || a === "--interactive")) return true;
  return args.every((a) => /^-[uqBEsOIWX]+$/.test(a));
}

function isInteractiveShell(args: string[]): boolean {
  if (args.some((a) => a === "-i" || a === "--interactive")) return true;
  // `-s` reads the script from stdin; `-c` is handled by the caller.
  return args.every((a) => /^-[a-z]+$/.test(a) && !a.includes("c") && !a.includes("s"));
}

/** The script of `sh -c SCRIPT`, `bash -lc SCRIPT`, `bash -e -o pipefail -c SCRIPT`. */
function shellScript(args: string[]): string | undefined {
  let wantsScript = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-o" || a === "+o") {
      i++;
      continue;
    }
    if (/^[-+][a-zA-Z]+$/.test(a)) {
      if (a.startsWith("-") && a.includes("c")) wantsScript = true;
      continue;
    }
    if (a === "--login" || a === "--norc" || a === "--noprofile") continue;
    return wantsScript ? a : undefined;
  }
  return undefined;
}

/** The command ssh runs on the far side (its words joined, as ssh does), or undefined for a login. */
function sshRemoteCommand(args: string[]): string | undefined {
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      i++;
      break;
    }
    if (!a.startsWith("-") || a === "-") break;
    const last = a[a.length - 1]!;
    if (a.length === 2 && SSH_VALUE_OPTS.has(last)) i++;
  }
  const rest = args.slice(i + 1);
  return rest.length === 0 ? undefined : rest.join(" ");
}

/** Strips `env`, `nohup`, `timeout`, `nice`, `exec`, `command`, `time` and `stdbuf` prefixes. */
export function unwrap(argv: string[]): string[] {
  let words = argv;
  for (let guard = 0; guard < 16 && words.length > 0; guard++) {
    const name = path.basename(words[0]!);
    let i = 1;
    if (name === "env") {
      while (i < words.length && (words[i]!.startsWith("-") || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!))) {
        if (words[i] === "-u" || words[i] === "-C" || words[i] === "-S") i++;
        i++;
      }
    } else if (name === "timeout") {
      while (i < words.length && words[i]!.startsWith("-")) {
        if (words[i] === "-s" || words[i] === "-k") i++;
        i++;
      }
      i++; // the duration
    } else if (name === "nice" || name === "stdbuf") {
      while (i < words.length && words[i]!.startsWith("-")) {
        if (words[i] === "-n" || /^-[ioe]$/.test(words[i]!)) i++;
        i++;
      }
    } else if (name === "nohup" || name === "exec" || name === "command" || name === "time") {
      while (i < words.length && words[i]!.startsWith("-")) i++;
    } else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) {
      // A shell assignment before the command (`FOO=1 sleep 5` inside a script).
    } else return words;
    words = words.slice(i);
  }
  return words;
}
