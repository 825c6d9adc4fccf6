// The one long-lived watch channel per host: a remote loop reports changes of the watched jobs' lifecycle files
// (and output sizes for followers); waiters resolve on the next change of their job. No per-job polling.

import type { StreamHandle } from "../../ssh/ssh-transport.ts";
import { REMOTE_SHELL_COMMAND, script, WATCH } from "../../wrapper/host-scripts.ts";
import type { SshHost } from "./ssh-host.ts";

/** Remote check period (seconds, decimal): completion is seen within about this plus one round trip. */
export const WATCH_INTERVAL = "0.25";
/** The remote loop ends by itself after this long (the next waiter starts a new one). */
const WATCH_LIFETIME_S = 3600;
/** A job stays watched this long after its last waiter, so back-to-back waits do not restart the channel. */
const LINGER_MS = 60_000;
const RESTART_BACKOFF_MS = 500;

interface Entry {
  any: boolean;
  sig?: string;
  lastWantedMs: number;
  waiters: Set<Waiter>;
}

interface Waiter {
  anyFile: boolean;
  done: () => void;
}

export class SshWatch {
  private readonly entries = new Map<string, Entry>();
  /**
   * What the running channel last reported per directory (it reports a directory again only when that changes):
   * an entry made again while the channel runs starts from it, so a wait on a job whose exit the channel already
   * reported ends at once instead of waiting for a change that will not come.
   */
  private readonly reported = new Map<string, string>();
  private handle: StreamHandle | null = null;
  private channelKey = "";
  private generation = 0;
  private restarting = false;
  private restartAgain = false;
  private restartTimer: ReturnType<typeof setTimeout> | null = null;
  private buffer = "";

  constructor(private readonly host: SshHost) {}

  /** Resolves on the next change of `dir` (lifecycle files, or output too when anyFile), the timeout, or abort. */
  wait(dir: string, timeoutMs: number, signal?: AbortSignal, anyFile = false): Promise<void> {
    return new Promise<void>((resolve) => {
      let entry = this.entries.get(dir);
      if (!entry) {
        const sig = this.reported.get(dir);
        entry = {
          any: false,
          lastWantedMs: Date.now(),
          waiters: new Set(),
          ...(sig === undefined ? {} : { sig }),
        };
        this.entries.set(dir, entry);
      }
      const e = entry;
      e.lastWantedMs = Date.now();
      if (anyFile) e.any = true;
      const waiter: Waiter = {
        anyFile,
        done: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", waiter.done);
          e.waiters.delete(waiter);
          e.lastWantedMs = Date.now();
          resolve();
        },
      };
      const timer = setTimeout(waiter.done, Math.max(0, timeoutMs));
      if (signal?.aborted) return waiter.done();
      signal?.addEventListener("abort", waiter.done, { once: true });
      // An exit already seen by the channel: let the caller re-read at once.
      if (!anyFile && e.sig?.includes("x")) return waiter.done();
      e.waiters.add(waiter);
      this.scheduleRestart(0);
    });
  }

  /** True once the channel reported `dir`'s exit record. */
  sawExit(dir: string): boolean {
    return this.entries.get(dir)?.sig?.includes("x") === true;
  }

  private wanted(): string[] {
    const now = Date.now();
    for (const [dir, e] of this.entries) {
      const idle = e.waiters.size === 0;
      if (idle && (now - e.lastWantedMs > LINGER_MS || e.sig?.includes("x"))) this.entries.delete(dir);
    }
    return [...this.entries.keys()];
  }

  private scheduleRestart(delayMs: number): void {
    if (this.restartTimer) return;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      void this.restart();
    }, delayMs);
  }

  private async restart(): Promise<void> {
    if (this.restarting) {
      this.restartAgain = true;
      return;
    }
    this.restarting = true;
    try {
      await this.restartOnce();
    } finally {
      this.restarting = false;
      if (this.restartAgain) {
        this.restartAgain = false;
        this.scheduleRestart(0);
      }
    }
  }

  private async restartOnce(): Promise<void> {
    const dirs = this.wanted();
    const key = dirs.map((d) => (this.entries.get(d)?.any ? `+${d}` : d)).join("\n");
    if (this.handle && key === this.channelKey) return;
    this.generation++; // the old channel's end is not a failure
    this.handle?.close();
    this.handle = null;
    this.channelKey = "";
    this.reported.clear();
    if (dirs.length === 0) return;
    const generation = ++this.generation;
    this.buffer = "";
    try {
      const session = await this.host.session();
      this.handle = await session.stream(
        REMOTE_SHELL_COMMAND,
        script(WATCH, [WATCH_INTERVAL, String(WATCH_LIFETIME_S), ...key.split("\n")]),
        (chunk) => {
          if (this.generation === generation) this.onData(chunk.toString(), dirs);
        },
        () => {
          if (this.generation !== generation) return;
          this.generation++;
          this.handle = null;
          this.channelKey = "";
          if (this.hasWaiters()) this.scheduleRestart(RESTART_BACKOFF_MS);
        },
      );
      this.channelKey = key;
    } catch {
      // Unreachable: waiters fall back to their timeouts; the next wait tries again.
      if (this.hasWaiters()) this.scheduleRestart(RESTART_BACKOFF_MS * 4);
    }
  }

  private hasWaiters(): boolean {
    for (const e of this.entries.values()) if (e.waiters.size > 0) return true;
    return false;
  }

  private onData(text: string, dirs: string[]): void {
    this.buffer += text;
    const lines = this.buffer.split("\n");
    this.buffer = lines.pop() ?? "";
    for (const line of lines) {
      const m = /^c (\d+) ?(.*)$/.exec(line);
      if (!m) continue;
      const dir = dirs[Number(m[1]) - 1];
      if (dir !== undefined) this.reported.set(dir, m[2] ?? "");
      const entry = dir === undefined ? undefined : this.entries.get(dir);
      if (!entry) continue;
      const sig = m[2] ?? "";
      const before = entry.sig;
      entry.sig = sig;
      if (before === sig) continue;
      this.host.invalidate();
      const lifecycle = (s: string | undefined) => (s ?? "").split(" ")[0];
      const lifecycleChanged =
        before === undefined ? sig.includes("x") : lifecycle(before) !== lifecycle(sig);
      for (const w of [...entry.waiters]) {
        if (w.anyFile ? before !== undefined || sig.includes("x") : lifecycleChanged) w.done();
      }
    }
    // A changed set (a new job, or a follower) takes effect on the next restart.
    if (this.wanted().length !== dirs.length) this.scheduleRestart(0);
  }

  /** Stops the channel (tests; process exit). */
  close(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.generation++;
    this.handle?.close();
    this.handle = null;
    this.channelKey = "";
  }
}
