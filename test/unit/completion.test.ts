// Shell completions: generated from the CLI's cac table, then exercised in real bash, fish and zsh.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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

function script(shell: (typeof SHELLS)[number]): string {
  const file = join(scratch, `awaitless.${shell}`);
  writeFileSync(file, completionScript(shell, buildCli()));
  return file;
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

  test(
    "job IDs come from `awaitless list` (the binary on PATH)",
    () => {
      const box = new Sandbox();
      try {
        const sub = box.run(["submit", "--name", "compl", "--", "true"]);
        expect(sub.code, sub.stderr).toBe(0);
        const jobId = sub.stdout.trim();
        const bin = join(scratch, "bin");
        mkdirSync(bin, { recursive: true });
        symlinkSync(join(import.meta.dir, "..", "..", "dist", "awaitless"), join(bin, "awaitless"));
        const env = { ...box.env, PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` };
        expect(bashComplete(["awaitless", "status", jobId.slice(0, 6)], env)).toEqual([jobId]);
        expect(bashComplete(["awaitless", "wait", ""], env)).toEqual([jobId]);
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
});
