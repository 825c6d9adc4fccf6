// A client's terminal UI in a private tmux session (its own socket), inside `unshare -n`: keys in, screen out.
import { join } from "node:path";
import { stopTree } from "./processes.ts";
import { type ClientSpec, type Launch, type Prepared, prepare, type RunOptions } from "./run-client.ts";
import { stopJobs } from "./wiring.ts";

export interface TuiRun extends Prepared {
  type(text: string): void;
  key(...keys: string[]): void;
  screen(): string;
  stop(): Promise<void>;
}

export function startTui(client: ClientSpec, opts: RunOptions, launch: Partial<Launch>): TuiRun {
  const p = prepare(client, opts, { ...launch, interactive: true });
  const socket = join(p.dirs.root, "tmux.sock");
  const tmux = (...args: string[]) => Bun.spawnSync(["tmux", "-S", socket, ...args], { stdin: "ignore" });
  const started = tmux(
    "new-session",
    "-d",
    "-s",
    "client",
    "-x",
    "160",
    "-y",
    "45",
    `unshare -n -- sh ${p.script}`,
  );
  if (started.exitCode !== 0) {
    p.dispose();
    throw new Error(`tmux new-session failed: ${started.stderr.toString()}`);
  }
  const serverPid = Number(tmux("display-message", "-p", "#{pid}").stdout.toString().trim());
  return {
    ...p,
    type: (text) => void tmux("send-keys", "-t", "client", "-l", text),
    key: (...keys) => void tmux("send-keys", "-t", "client", ...keys),
    screen: () => tmux("capture-pane", "-p", "-t", "client").stdout.toString(),
    async stop() {
      if (serverPid > 0) await stopTree(serverPid);
      await stopJobs(p.dirs);
      p.dispose();
    },
  };
}
