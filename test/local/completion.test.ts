// Shell completions: generated from the CLI's cac table, then exercised in real bash, fish and zsh.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCli } from "../../src/cli/cli.ts";
import { commandTable, completionScript, SHELLS } from "../../src/cli/completion.ts";
import { Sandbox } from "../helpers/cli.ts";

const scratch = mkdtempSync(join(tmpdir(), "awl-compl-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const T = 30_000;

function has(shell: string): boolean {
  const ok = Bun.spawnSync(["sh", "-c", `command -v ${shell}`]).exitCode === 0;
  if (!ok && process.env.AWAITLESS_REQUIRE_ALL === "1") throw new Error(`${shell} is not installed`);
  if (!ok) console.warn(`[skip] ${shell} is not installed (apt-get install ${shell})`);
  return ok;
}

const BINARY = join(import.meta.dir, "..", "..", "dist", "awaitless");

/** The script as a user gets it: printed by the compiled binary, which it then calls for job IDs and hosts. */
function script(shell: (typeof SHELLS)[number]): string {
  const file = join(scratch, `awaitless.${shell}`);
  writeFileSync(file, Bun.spawnSync([BINARY, "completion", shell], { stdout: "pipe" }).stdout);
  return file;
}

/** A sandbox with one job, a queue, an ssh_config (with an Include) and a [hosts] entry; PATH has no awaitless. */
function populated() {
  const box = new Sandbox();
  const sub = box.run(["submit", "--name", "compl", "--", "true"]);
  if (sub.code !== 0) throw new Error(sub.stderr);
  expect(box.run(["queue", "create", "gpuq", "--concurrency", "1"]).code).toBe(0);
  mkdirSync(join(box.root, ".ssh", "conf.d"), { recursive: true });
  writeFileSync(
    join(box.root, ".ssh", "config"),
    "Host gpu box1\n  HostName 127.0.0.1\nHost *.lan !nope\nInclude conf.d/*\n",
  );
  writeFileSync(join(box.root, ".ssh", "conf.d", "extra"), "Host included\n");
  box.writeConfig('[hosts.cluster]\nhostname = "127.0.0.1"\n');
  const env = { ...box.env, PATH: "/usr/bin:/bin" };
  return { box, env, jobId: sub.stdout.trim() };
}

function sh(argv: string[], env: Record<string, string> = {}): string {
  const r = Bun.spawnSync(argv, {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: scratch, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** COMPREPLY for the words typed so far (the last word is the one being completed). */
function bashComplete(words: string[], env: Record<string, string> = {}): string[] {
  const quoted = words.map((w) => `'${w}'`).join(" ");
  const out = sh(
    [
      "bash",
      "-c",
      `source '${script("bash")}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _awaitless; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    env,
  );
  return out.split("\n").filter(Boolean);
}

describe("command table", () => {
  test("comes from the CLI's own cac registration, so a new command shows up everywhere", () => {
    const cli = buildCli();
    const names = commandTable(cli).commands.map((c) => c.name);
    expect(names).toEqual(
      expect.arrayContaining(["run", "submit", "wait", "logs", "mcp-config", "completion"]),
    );
    cli.command("zz-new <job_id>", "a command added later").option("--zz-flag <n>", "its flag");
    for (const shell of SHELLS) {
      const s = completionScript(shell, cli);
      expect(s).toContain("zz-new");
      expect(s).toContain("zz-flag");
    }
    const run = commandTable(buildCli()).commands.find((c) => c.name === "run")!;
    expect(run.options.find((o) => o.flags[0] === "--backend")?.takesValue).toBe(true);
    expect(commandTable(buildCli()).commands.find((c) => c.name === "status")?.positional).toBe("job_id");
  });
});

describe("bash", () => {
  test("commands, per-command options, option values, and arguments", () => {
    expect(bashComplete(["awaitless", "ru"])).toEqual(["run"]);
    expect(bashComplete(["awaitless", "run", "--back"])).toEqual(["--backend"]);
    expect(bashComplete(["awaitless", "--config", "x.toml", "run", "--backend", "s"])).toEqual([
      "ssh",
      "slurm",
    ]);
    expect(bashComplete(["awaitless", "logs", "j1", "--stream", ""])).toEqual(["stdout", "stderr", "both"]);
    expect(bashComplete(["awaitless", "completion", ""])).toEqual(["bash", "zsh", "fish"]);
    expect(bashComplete(["awaitless", "mcp-config", "c"])).toEqual(["claude", "codex", "cursor"]);
    expect(bashComplete(["awaitless", "status", "--"])).toContain("--json");
    // After `--` the words belong to the user's command: no Awaitless completions.
    expect(bashComplete(["awaitless", "run", "--", "ma"])).toEqual([]);
  });

  test("sourcing registers _awaitless for awaitless (complete -p)", () => {
    const out = sh(["bash", "-c", `source '${script("bash")}'; complete -p awaitless`]);
    expect(out.trim()).toBe("complete -o bashdefault -o default -F _awaitless awaitless");
  });

  test("every state, queue actions (first word only), help topics", () => {
    expect(bashComplete(["awaitless", "list", "--state", ""])).toEqual([
      "active",
      "terminal",
      "queued",
      "starting",
      "running",
      "stalled",
      "succeeded",
      "failed",
      "cancelled",
      "timed_out",
      "lost",
    ]);
    expect(bashComplete(["awaitless", "queue", ""])).toEqual(["create", "set", "delete", "list"]);
    expect(bashComplete(["awaitless", "queue", "create", ""])).toEqual([]);
    expect(bashComplete(["awaitless", "help", "lo"])).toEqual(["logs"]);
    expect(bashComplete(["awaitless", "-"])).toEqual(expect.arrayContaining(["--version", "-V", "--help"]));
  });

  test(
    "job IDs, hosts and queues through the binary that wrote the script (awaitless is not on PATH)",
    () => {
      const { box, env, jobId } = populated();
      try {
        expect(bashComplete(["awaitless", "status", jobId.slice(0, 6)], env)).toEqual([jobId]);
        expect(bashComplete(["awaitless", "wait", ""], env)).toEqual([jobId]);
        expect(bashComplete(["awaitless", "completions", jobId, ""], env)).toEqual([jobId]);
        expect(bashComplete(["awaitless", "results", jobId, ""], env)).toEqual([jobId]);
        // --after of a launch takes a job; --after of `results` a cursor, which nothing here knows
        expect(bashComplete(["awaitless", "submit", "--after", ""], env)).toEqual([jobId]);
        expect(bashComplete(["awaitless", "results", "--after", ""], env)).toEqual([]);
        expect(bashComplete(["awaitless", "run", "--retry-on", ""], env)).toEqual([
          "infrastructure",
          "lost",
          "exit",
        ]);
        // an array and its tasks' addresses; a task's own job ID is not offered
        const arr = box.run(["submit", "--array", "0-2", "--", "true"]).stdout.trim();
        box.run(["wait", arr]);
        const words = bashComplete(["awaitless", "logs", ""], env);
        expect(words).toEqual([arr, jobId, `${arr}.0`, `${arr}.1`, `${arr}.2`]);
        expect(JSON.parse(box.run(["completion", "--list", "jobs", "--json"]).stdout)).toEqual({
          list: "jobs",
          words,
        });
        expect(bashComplete(["awaitless", "submit", "--host", ""], env).sort()).toEqual(
          ["box1", "cluster", "gpu", "included"].sort(),
        );
        expect(bashComplete(["awaitless", "doctor", "--host", "g"], env)).toEqual(["gpu"]);
        expect(bashComplete(["awaitless", "run", "--queue", ""], env)).toEqual(["gpuq"]);
        const listed = box.run(["completion", "--list", "hosts"]);
        expect(listed.stdout).toBe("cluster\ngpu\nbox1\nincluded\n");
        expect(box.run(["completion", "--list", "nope"]).stderr).toContain("use --list jobs, --list hosts");
      } finally {
        box.cleanup();
      }
    },
    T,
  );
});

describe.if(has("fish"))("fish", () => {
  test("parses, and completes commands, option values and clients", () => {
    const file = script("fish");
    sh(["fish", "--no-execute", file]);
    const q = (line: string) => sh(["fish", "-c", `source '${file}'; complete -C'${line}'`]);
    expect(q("awaitless ru")).toStartWith("run\t");
    const words = (line: string) =>
      q(line)
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("\t")[0])
        .sort();
    expect(words("awaitless run --backend ")).toEqual(["local", "slurm", "ssh"]);
    expect(q("awaitless mcp-config ")).toContain("gemini");
  });

  test(
    "job IDs, hosts, queues and queue actions",
    () => {
      const file = script("fish");
      const { box, env, jobId } = populated();
      try {
        const words = (line: string) =>
          sh(["fish", "-c", `source '${file}'; complete -C'${line}'`], env)
            .split("\n")
            .filter(Boolean)
            .map((l) => l.split("\t")[0])
            .sort();
        expect(words(`awaitless status ${jobId.slice(0, 8)}`)).toEqual([jobId]);
        expect(words("awaitless submit --host ")).toEqual(["box1", "cluster", "gpu", "included"]);
        expect(words("awaitless submit --queue ")).toEqual(["gpuq"]);
        expect(words("awaitless queue ")).toEqual(["create", "delete", "list", "set"]);
        expect(words("awaitless queue create ")).toEqual([]);
      } finally {
        box.cleanup();
      }
    },
    T,
  );
});

describe.if(has("zsh"))("zsh", () => {
  test("parses and registers _awaitless for awaitless with compinit", () => {
    const file = script("zsh");
    sh(["zsh", "-n", file]);
    const out = sh([
      "zsh",
      "-f",
      "-c",
      `autoload -U compinit; compinit -u -D; source '${file}'; print -r -- $_comps[awaitless]`,
    ]);
    expect(out.trim()).toBe("_awaitless");
  });

  test(
    "its dynamic lists call the binary that wrote the script",
    () => {
      const file = script("zsh");
      const { box, env, jobId } = populated();
      try {
        // compadd stubbed to print what it was given: the words zsh would offer.
        const list = (kind: string) =>
          sh(
            [
              "zsh",
              "-f",
              "-c",
              `autoload -U compinit; compinit -u -D; source '${file}'; compadd() { [[ $1 == -a ]] && print -l -- \${(P)2} }; _awaitless_list ${kind}`,
            ],
            env,
          )
            .split("\n")
            .filter(Boolean);
        expect(list("jobs")).toEqual([jobId]);
        expect(list("hosts").sort()).toEqual(["box1", "cluster", "gpu", "included"]);
        expect(list("queues")).toEqual(["gpuq"]);
      } finally {
        box.cleanup();
      }
    },
    T,
  );
});

describe("install lines", () => {
  test("docs/install.md's completion block works as written on a fresh HOME", () => {
    const doc = readFileSync(join(import.meta.dir, "..", "..", "docs", "install.md"), "utf8");
    const section = doc.split("## Shell completions")[1]!;
    const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
    const home = mkdtempSync(join(scratch, "fresh-home-"));
    const bin = join(home, "bin");
    mkdirSync(bin);
    symlinkSync(BINARY, join(bin, "awaitless"));
    const r = Bun.spawnSync(["sh", "-e", "-c", block], {
      cwd: home,
      env: { HOME: home, PATH: `${bin}:/usr/bin:/bin`, AWAITLESS_DATA_DIR: join(home, "data") },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(r.exitCode, r.stderr.toString()).toBe(0);
    for (const [file, marker] of [
      [".local/share/bash-completion/completions/awaitless", "complete -o bashdefault"],
      [".zfunc/_awaitless", "#compdef awaitless"],
      [".config/fish/completions/awaitless.fish", "complete -c awaitless"],
    ] as const)
      expect(readFileSync(join(home, file), "utf8")).toContain(marker);
  });
});
