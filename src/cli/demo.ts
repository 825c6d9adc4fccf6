// `awaitless demo`: the recovery story on the local backend with nothing configured. Two jobs are
// submitted, a waiting client is killed, and a brand-new client process collects both results.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXIT } from "../core/model/errors.ts";
import { selfArgv } from "../self.ts";
import type { CliIo } from "./cli-io.ts";
import { invokedName } from "./invoked-as.ts";
import { paint, styleFor } from "./render.ts";

interface Step {
  step: string;
  detail: string;
}

function runSelf(args: string[], cwd: string): { code: number; stdout: string; stderr: string } {
  const [cmd, ...pre] = selfArgv();
  const r = spawnSync(cmd!, [...pre, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

export async function demo(opts: { json?: boolean }, io: CliIo): Promise<number> {
  const style = styleFor(io.stdout, io.env);
  const steps: Step[] = [];
  const say = (step: string, detail: string) => {
    steps.push({ step, detail });
    if (!opts.json)
      io.stdout.write(`${paint(style, "cyan", "▸")} ${paint(style, "bold", step)}  ${detail}\n`);
  };
  const work = mkdtempSync(join(tmpdir(), "awaitless-demo-"));
  try {
    const build = submit(work, [
      "--name",
      "demo-tests",
      "--artifact",
      "report.json",
      "--",
      "sh",
      "-c",
      'for i in 1 2 3; do echo "test batch $i passed"; sleep 1; done; printf \'{"passed": 42, "failed": 0}\' > report.json',
    ]);
    say("submitted", `${build} runs a 3-second test suite that writes report.json`);
    const lint = submit(work, [
      "--name",
      "demo-lint",
      "--",
      "sh",
      "-c",
      "echo 'checking 12 files'; sleep 2; echo 'error: src/app.ts:3: unused variable x' >&2; exit 3",
    ]);
    say("submitted", `${lint} runs a linter that will fail with exit code 3`);

    const [cmd, ...pre] = selfArgv();
    const waiter = spawn(cmd!, [...pre, "wait", build], { cwd: work, stdio: "ignore", env: process.env });
    await new Promise<void>((resolve, reject) => {
      waiter.once("spawn", resolve);
      waiter.once("error", reject);
    });
    say("waiting", `a client (pid ${waiter.pid}) is waiting for ${build}`);
    const status = JSON.parse(runSelf(["status", build, "--json"], work).stdout) as { state: string };
    const exited = new Promise<void>((resolve) => waiter.once("exit", () => resolve()));
    waiter.kill("SIGKILL");
    await exited;
    say("killed", `the waiting client was killed with SIGKILL while the job was ${status.state}`);

    say("recovering", "a brand-new client process asks for both results by ID…");
    const feed = runSelf(["completions", build, lint, "--drain", "--json", "--timeout", "60s"], work);
    const results = feed.stdout
      .trim()
      .split("\n")
      .flatMap(
        (l) =>
          (JSON.parse(l) as { completions: { job_id: string; result: Record<string, unknown> }[] })
            .completions,
      )
      .map((c) => c.result);
    const b = results.find((r) => r.job_id === build);
    const l = results.find((r) => r.job_id === lint);
    if (!b || !l) throw new Error(`the new client did not get both results: ${feed.stdout}${feed.stderr}`);
    const artifacts = b.artifacts as { path: string; content?: unknown }[];
    say(
      "recovered",
      `${build}: ${b.state} (exit ${b.exit_code}), report.json parsed → ${JSON.stringify(artifacts[0]?.content)}`,
    );
    say(
      "recovered",
      `${lint}: ${l.state} (exit ${l.exit_code}), digest: ${JSON.stringify((l.digest as string[])[0] ?? "")}`,
    );
    const ok = b.state === "succeeded" && l.state === "failed" && l.exit_code === 3;
    if (opts.json) {
      io.stdout.write(JSON.stringify({ ok, jobs: [build, lint], steps, results: [b, l] }) + "\n");
    } else {
      const me = invokedName(io.env);
      io.stdout.write(
        `\nBoth jobs outlived the client that was waiting for them. Try:\n  ${me} status ${build}\n  ${me} logs ${lint}\n  ${me} inspect ${build}\n`,
      );
    }
    return ok ? EXIT.ok : EXIT.jobFailed;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function submit(cwd: string, args: string[]): string {
  const r = runSelf(["submit", "--json", ...args], cwd);
  if (r.code !== 0) throw new Error(`submit failed: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { job_id: string }).job_id;
}
