// The real job service with the local backend over a temp data directory, for MCP tests in process; and gated
// jobs: real commands whose output and end the test releases (files the command's shell loop picks up).
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createContext } from "../../src/context.ts";
import { isTerminal } from "../../src/core/model/job.ts";
import type { JobServiceApi } from "../../src/core/model/service-api.ts";
import { waitFor } from "./harness.ts";

/** Prints what appears in $1/out (then removes it) and exits with the code written to $1/end. */
const GATE = [
  'd=$1; n=0; while [ "$n" -lt 6000 ]; do',
  '  if [ -e "$d/out" ]; then cat "$d/out"; rm -f "$d/out"; fi',
  '  if [ -e "$d/end" ]; then exit "$(cat "$d/end")"; fi',
  "  n=$((n + 1)); sleep 0.05",
  "done; exit 99",
].join("\n");

export interface Gate {
  /** The command to launch (it runs at most 5 minutes). */
  command: string[];
  /** Releases `text` to the job's stdout and resolves once the job's log holds it. */
  write(jobId: string, text: string): Promise<void>;
  /** Lets the job exit with `code` (at once, or as soon as it starts when it has not yet). */
  end(code: number): void;
  /** Lets the job exit with `code` and resolves once the service has recorded its end. */
  finish(jobId: string, code: number): Promise<void>;
}

export interface RealService {
  service: JobServiceApi;
  /** The service methods called so far, in order (the server's calls and the gates' own reads). */
  calls: string[];
  root: string;
  /** A new gated job's command and its controls. */
  gate(): Gate;
  /** Cancels what still runs and removes the data directory. */
  dispose(): Promise<void>;
}

export function realService(): RealService {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "awl-mcp-real-")));
  writeFileSync(join(root, "config.toml"), "[defaults]\npoll_interval_seconds = 0.1\n");
  const { service: inner } = createContext({
    ...process.env,
    HOME: root,
    AWAITLESS_DATA_DIR: join(root, "data"),
    AWAITLESS_CONFIG: join(root, "config.toml"),
  });
  const calls: string[] = [];
  const service = new Proxy(inner, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(key));
        return value.apply(target, args);
      };
    },
  });
  let gates = 0;
  const put = (dir: string, name: string, text: string) => {
    writeFileSync(join(dir, `.${name}`), text);
    renameSync(join(dir, `.${name}`), join(dir, name));
  };
  return {
    service,
    calls,
    root,
    gate() {
      const dir = join(root, `gate-${++gates}`);
      mkdirSync(dir);
      return {
        command: ["sh", "-c", GATE, "gate", dir],
        async write(jobId, text) {
          const before = (await service.logs({ job_id: jobId, stream: "stdout" })).stdout ?? "";
          put(dir, "out", text);
          await waitFor(
            async () =>
              (await service.logs({ job_id: jobId, stream: "stdout" })).stdout === before + text
                ? true
                : undefined,
            10_000,
            `${JSON.stringify(text)} in the log of ${jobId}`,
          );
        },
        end(code) {
          put(dir, "end", String(code));
        },
        async finish(jobId, code) {
          put(dir, "end", String(code));
          await waitFor(
            async () => (isTerminal((await service.status(jobId)).state) ? true : undefined),
            10_000,
            `the end of ${jobId}`,
          );
        },
      };
    },
    async dispose() {
      for (const job of await service.list({ state: "active", limit: 10_000 }))
        await service.cancel(job.job_id, 0).catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
