// One SSH host as this process sees it: the single shared connection (made on demand, replaced when it dies),
// the prepared remote job root with the wrapper uploaded once per version, scripts run over it, batched observes.
import { AwaitlessError } from "../../core/model/errors.ts";
import { OpensshTransport } from "../../ssh/openssh-transport.ts";
import { SshSession } from "../../ssh/ssh-session.ts";
import type { ExecResult, SshTransport } from "../../ssh/ssh-transport.ts";
import { keyValues, OBSERVE, PREPARE, REMOTE_SHELL_COMMAND, script } from "../../wrapper/host-scripts.ts";
import { WRAPPER_SHA256, WRAPPER_TEXT } from "../../wrapper/scripts.ts";
import { onceUntilFailure } from "../host/job-host.ts";
import { type ObserveReport, parseObserveReport } from "./ssh-observe.ts";
import type { SshHostSettings } from "./ssh-target.ts";

export const WRAPPER_FILE = `wrapper-${WRAPPER_SHA256.slice(0, 16)}.sh`;

export interface PreparedRoot {
  /** Absolute remote_job_dir on the host. */
  root: string;
  wrapperPath: string;
}

/** How long a batched observe report may answer for other jobs of the same host. */
const SNAPSHOT_TTL_MS = 300;

export class SshHost {
  private sessionP: Promise<SshTransport> | null = null;
  private wrapperUploaded = false;
  private pending: { dir: string; resolve: (r: ObserveReport) => void; reject: (e: unknown) => void }[] = [];
  private flushScheduled = false;
  private snapshot: { atMs: number; report: ObserveReport } | null = null;

  constructor(readonly settings: SshHostSettings) {}

  get name(): string {
    return this.settings.name;
  }

  /** The open connection, or a new one (one connect at a time; a failed connect is not cached). */
  session(): Promise<SshTransport> {
    if (this.sessionP) return this.sessionP;
    const s = this.settings;
    const connecting: Promise<SshTransport> =
      s.transport === "openssh" ? OpensshTransport.connect(s.openssh) : SshSession.connect(s.target);
    const p = connecting.then((t) => {
      t.onClose(() => {
        if (this.sessionP === p) this.sessionP = null;
      });
      return t;
    });
    this.sessionP = p;
    p.catch(() => {
      if (this.sessionP === p) this.sessionP = null;
    });
    return p;
  }

  /** Closes the connection now (tests, and a process about to exit). */
  close(): void {
    const p = this.sessionP;
    this.sessionP = null;
    p?.then((s) => s.destroy()).catch(() => undefined);
  }

  /** Runs one of the host programs (wrapper/host-scripts.ts) with `sh -s`. */
  async run(
    body: string,
    args: readonly string[],
    timeoutMs = this.settings.operationTimeoutMs,
  ): Promise<ExecResult> {
    const session = await this.session();
    return session.exec(REMOTE_SHELL_COMMAND, script(body, args), timeoutMs);
  }

  /** Creates the remote root (0700) and uploads the wrapper if this version is not there yet. */
  readonly prepare: () => Promise<PreparedRoot> = onceUntilFailure(() => this.doPrepare());

  private async doPrepare(): Promise<PreparedRoot> {
    const r = await this.run(PREPARE, [this.settings.remoteJobDir, WRAPPER_FILE]);
    const kv = keyValues(r.stdout.toString());
    if (kv.untrusted === "1") {
      throw new AwaitlessError(
        "launch_failed",
        `refusing remote_job_dir ${this.settings.remoteJobDir} on ${this.name}: ${kv.error ?? "it is not a directory only you control"}`,
        `${kv.fix ?? "choose a directory you own"} (remote_job_dir in [hosts.${this.name}])`,
        { host: this.name, wrapper_stage: "prepare" },
      );
    }
    if (r.code !== 0 || !kv.root) {
      throw new AwaitlessError(
        "launch_failed",
        `could not prepare ${this.settings.remoteJobDir} on ${this.name}: ${kv.error ?? (r.stderr.toString().trim() || `exit ${r.code}`)}`,
        "check that the remote home is writable, or set remote_job_dir in [hosts.NAME] to a writable directory",
        { host: this.name, wrapper_stage: "prepare", remote_stderr: r.stderr.toString().slice(0, 2000) },
      );
    }
    const wrapperPath = `${kv.root}/bin/${WRAPPER_FILE}`;
    if (kv.wrapper !== "present") await this.uploadWrapper(wrapperPath);
    this.wrapperUploaded = true;
    return { root: kv.root, wrapperPath };
  }

  /** Writes the wrapper (temp file, then rename: a changed or foreign file is replaced, not written through). */
  async uploadWrapper(wrapperPath: string): Promise<void> {
    const session = await this.session();
    await session.writeFileAtomic(wrapperPath, WRAPPER_TEXT, 0o600);
  }

  get hasWrapper(): boolean {
    return this.wrapperUploaded;
  }

  /** The report for `dir`, from one OBSERVE run shared by every caller in the same tick (and a fresh snapshot). */
  observe(dir: string, scanRoot: string | null): Promise<ObserveReport> {
    const snap = this.snapshot;
    if (snap && Date.now() - snap.atMs < SNAPSHOT_TTL_MS && snap.report.jobs.has(dir)) {
      const cached = snap.report.jobs.get(dir);
      // Only active jobs come from the scan; a finished one is always re-read.
      if (cached && cached.files.exit === undefined) return Promise.resolve(snap.report);
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ dir, resolve, reject });
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setTimeout(() => void this.flush(scanRoot), 0);
    });
  }

  /** Forget the snapshot (a watch saw a change). */
  invalidate(): void {
    this.snapshot = null;
  }

  private async flush(scanRoot: string | null): Promise<void> {
    const batch = this.pending.splice(0);
    this.flushScheduled = false;
    try {
      const dirs = [...new Set(batch.map((b) => b.dir))];
      const r = await this.run(OBSERVE, [scanRoot ?? "", ...dirs]);
      if (r.code !== 0) {
        throw new AwaitlessError(
          "connection_failed",
          `could not read job status on ${this.name} (exit ${r.code}): ${r.stderr.toString().trim().slice(0, 500)}`,
          "check that the host has a POSIX sh and that remote_job_dir is readable",
          { host: this.name, remote_stderr: r.stderr.toString().slice(0, 2000) },
        );
      }
      const report = parseObserveReport(r.stdout.toString());
      this.snapshot = { atMs: Date.now(), report };
      for (const b of batch) b.resolve(report);
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
  }
}
