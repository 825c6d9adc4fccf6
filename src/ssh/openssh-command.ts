// Driving the system OpenSSH client for `transport = "openssh"`: the argv for a host, `ssh -G` to learn its
// effective settings (ControlPath, keepalive), and the ControlMaster socket: checked, or opened in BatchMode.
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AwaitlessError } from "../core/model/errors.ts";
import { defaultControlDir } from "./control-dir.ts";

export interface OpensshTarget {
  /** The name the user gave (messages). */
  label: string;
  /** What is passed to `ssh` as the destination (an alias from ~/.ssh/config, or a host name). */
  destination: string;
  /** Options from [hosts.NAME] (and -F for a non-default $HOME), put before the destination. */
  args: string[];
  connectTimeoutMs: number;
  operationTimeoutMs: number;
  /** ControlPersist of a master we open (seconds idle). */
  persistSeconds: number;
}

/** What `ssh -G` says about the destination, plus the control socket we will use. */
export interface OpensshResolved {
  user: string;
  hostname: string;
  port: number;
  proxy: string | null;
  controlPath: string;
  /** Where the control path came from. */
  controlPathFrom: "ssh config" | "awaitless default";
  /** Extra options for the master we open (keepalive and connect timeout when the config sets none). */
  masterArgs: string[];
}

export const SSH_BINARY = "ssh";
export const DEFAULT_PERSIST_SECONDS = 600;

export function opensshError(
  label: string,
  message: string,
  hint: string,
  extra: Record<string, unknown> = {},
): AwaitlessError {
  return new AwaitlessError("connection_failed", message, hint, { host: label, ...extra });
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs ssh with stdin from /dev/null, stderr to a file (a master forked by -f keeps it open), killed at the deadline. */
export async function runSsh(label: string, argv: string[], timeoutMs: number): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), "awl-sshrun-"));
  const errPath = join(dir, "stderr");
  try {
    let proc: ReturnType<typeof Bun.spawn>;
    try {
      proc = Bun.spawn([SSH_BINARY, ...argv], {
        stdin: "ignore",
        stdout: "pipe",
        stderr: Bun.file(errPath),
      });
    } catch (e) {
      throw missingClient(label, e);
    }
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      proc.kill("SIGKILL");
    }, timeoutMs);
    const stdout = await new Response(proc.stdout as ReadableStream).text();
    const code = await proc.exited;
    clearTimeout(timer);
    let stderr = "";
    try {
      stderr = readFileSync(errPath, "utf8");
    } catch {
      // nothing written
    }
    return { code: timedOut ? null : code, stdout, stderr, timedOut };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function missingClient(label: string, e: unknown): AwaitlessError {
  return opensshError(
    label,
    `cannot run the OpenSSH client \`${SSH_BINARY}\` for ${label}: ${(e as Error).message}`,
    `install the OpenSSH client (e.g. \`apt-get install openssh-client\`), or remove transport = "openssh" from [hosts.${label}]`,
  );
}

function field(g: string, key: string): string | undefined {
  return new RegExp(`^${key} (.*)$`, "m").exec(g)?.[1]?.trim();
}

/** `ssh -G`: the effective settings, and the control path (the config's, else our private default). */
export async function resolveOpenssh(t: OpensshTarget): Promise<OpensshResolved> {
  const g = await runSsh(t.label, ["-G", ...t.args, "--", t.destination], 10_000);
  if (g.code !== 0) {
    throw new AwaitlessError(
      "config_invalid",
      `\`ssh -G ${t.destination}\` failed for ${t.label}: ${g.stderr.trim() || `exit ${g.code}`}`,
      "fix the ssh config (run `ssh -G HOST` to see the error), or the settings in [hosts.NAME]",
      { host: t.label },
    );
  }
  const out = g.stdout;
  let controlPath = field(out, "controlpath");
  let from: OpensshResolved["controlPathFrom"] = "ssh config";
  if (!controlPath || controlPath === "none") {
    const pattern = join(defaultControlDir(), "%C");
    const g2 = await runSsh(
      t.label,
      ["-G", ...t.args, "-o", `ControlPath=${pattern}`, "--", t.destination],
      10_000,
    );
    controlPath = field(g2.stdout, "controlpath") ?? pattern;
    from = "awaitless default";
  }
  const masterArgs: string[] = [];
  if ((field(out, "serveraliveinterval") ?? "0") === "0") masterArgs.push("-o", "ServerAliveInterval=5");
  if ((field(out, "connecttimeout") ?? "none") === "none")
    masterArgs.push("-o", `ConnectTimeout=${Math.ceil(t.connectTimeoutMs / 1000)}`);
  const jump = field(out, "proxyjump");
  const command = field(out, "proxycommand");
  return {
    user: field(out, "user") ?? "?",
    hostname: field(out, "hostname") ?? t.destination,
    port: Number(field(out, "port") ?? 22),
    proxy: jump ? `ProxyJump ${jump}` : command ? `ProxyCommand ${command}` : null,
    controlPath,
    controlPathFrom: from,
    masterArgs,
  };
}

/** The argv prefix that reaches the master: the target's options plus the control path. */
export function muxArgs(t: OpensshTarget, r: OpensshResolved): string[] {
  return [...t.args, "-o", `ControlPath=${r.controlPath.replaceAll("%", "%%")}`];
}

/** The pid of the running master, or null. */
export async function masterPid(t: OpensshTarget, r: OpensshResolved): Promise<number | null> {
  const c = await runSsh(t.label, [...muxArgs(t, r), "-O", "check", "--", t.destination], 10_000);
  if (c.code !== 0) return null;
  const m = /pid=(\d+)/.exec(c.stderr + c.stdout);
  return m ? Number(m[1]) : 0;
}

/** The command a user runs once in a terminal to open the master (for hosts that need a prompt or a touch). */
export function openMasterCommand(t: OpensshTarget, r: OpensshResolved): string {
  const q = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);
  const opts = r.controlPathFrom === "ssh config" ? [] : ["-o", `ControlPath=${r.controlPath}`];
  return [
    "ssh",
    ...t.args,
    ...opts,
    "-o",
    "ControlMaster=yes",
    "-o",
    `ControlPersist=${t.persistSeconds}`,
    "-N",
    "-f",
    t.destination,
  ]
    .map(q)
    .join(" ");
}

// A socket no master answers on (the master was killed, or the machine slept through ControlPersist): ssh would
// neither use it nor replace it, and fall back to a new login per command.
function removeStaleSocket(path: string): void {
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
  } catch {
    // absent
  }
}

/** Makes sure a master is running: reuses one (ours or the user's), else opens one in BatchMode (never prompts). */
export async function ensureMaster(t: OpensshTarget, r: OpensshResolved): Promise<void> {
  if ((await masterPid(t, r)) !== null) return;
  // One opener at a time per socket (other awaitless processes wait for it and then reuse its master): a second
  // `ssh -M` would find the socket taken and stay behind as a plain connection.
  const lock = `${r.controlPath}.awl-lock`;
  const staleMs = t.connectTimeoutMs + 15_000;
  const deadline = Date.now() + staleMs;
  for (;;) {
    try {
      mkdirSync(lock, { mode: 0o700 });
      break;
    } catch {
      if (Date.now() > deadline || Date.now() - lockMtimeMs(lock) > staleMs) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      await Bun.sleep(50);
      if ((await masterPid(t, r)) !== null) return;
    }
  }
  try {
    if ((await masterPid(t, r)) !== null) return;
    await openMaster(t, r);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function lockMtimeMs(path: string): number {
  try {
    return lstatSync(path).mtimeMs;
  } catch {
    return Date.now();
  }
}

async function openMaster(t: OpensshTarget, r: OpensshResolved): Promise<void> {
  removeStaleSocket(r.controlPath);
  const argv = [
    ...muxArgs(t, r),
    ...r.masterArgs,
    "-o",
    "ControlMaster=yes",
    "-o",
    `ControlPersist=${t.persistSeconds}`,
    "-o",
    "BatchMode=yes",
    "-N",
    "-f",
    "-T",
    "-x",
    "--",
    t.destination,
  ];
  const m = await runSsh(t.label, argv, t.connectTimeoutMs + 5_000);
  // Exit 0 without a master means ssh could not create the socket and went on as a plain connection.
  if (m.code === 0 && (await masterPid(t, r)) !== null) return;
  const why = m.timedOut
    ? `no answer within ${Math.round((t.connectTimeoutMs + 5_000) / 1000)}s`
    : m.code === 0
      ? `no master came up on ${r.controlPath} (${m.stderr.trim() || "ssh gave no reason"})`
      : m.stderr.trim().split("\n").slice(-3).join("; ") || `ssh exited with ${m.code}`;
  throw opensshError(
    t.label,
    `cannot connect to ${t.label} (${r.user}@${r.hostname}:${r.port}) with the OpenSSH client: ${why}`,
    `check that \`ssh ${t.destination} true\` works in a terminal; if the host needs a password, 2FA, a FIDO touch or a Kerberos ticket, open the connection once in a terminal (it is then reused): ${openMasterCommand(t, r)}`,
  );
}
