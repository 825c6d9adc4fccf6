// `doctor --host NAME` for SSH hosts: resolution, transport (and why), reachability + host key + auth, sh and
// utilities, remote dir. Each check names its host ("box: resolution").
import { lookup } from "node:dns/promises";
import type { HostConfig } from "../../config/config.ts";
import { AwaitlessError } from "../../core/model/errors.ts";
import { masterPid, resolveOpenssh } from "../../ssh/openssh-command.ts";
import { parseTrackProbe, TRACK_PROBE } from "../../wrapper/host-scripts.ts";
import { trackingCheck } from "../local/tracking-doctor.ts";
import { SshHost } from "./ssh-host.ts";
import { resolveHostSettings, type SshHostSettings } from "./ssh-target.ts";

export interface SshDoctorCheck {
  check: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

const UTILITIES = `for c in mkdir mv cat ls tail head kill sleep date rm cut find od grep awk wc; do command -v "$c" >/dev/null 2>&1 || echo "missing=$c"; done
command -v setsid >/dev/null 2>&1 || echo "nosetsid=1"
for c in sha256sum shasum openssl busybox; do command -v "$c" >/dev/null 2>&1 && { echo "sha=$c"; break; }; done
[ -r /proc/self/stat ] || echo "noproc=1"
r=$1
case $r in "~") r=$HOME ;; "~/"*) r=$HOME/\${r#"~/"} ;; esac
# A job directory not made yet is no failure (the script's status is checked): prepare makes it next.
if [ -d "$r" ]; then echo "mode=$(ls -ld "$r" | cut -c1-10)"; fi
`;

/** The checks that need the host to answer (after resolution and transport): failing them exits 7, not 2. */
const REACH_CHECKS = [
  "connection, host key, authentication",
  "sh and utilities",
  "remote job directory",
  "remote setup",
];

export function isReachCheck(check: string): boolean {
  return REACH_CHECKS.some((c) => check.endsWith(`: ${c}`));
}

/** A host name that DNS (or /etc/hosts) cannot resolve: why, or null when it resolves. */
async function unresolvable(hostname: string): Promise<string | null> {
  try {
    await lookup(hostname);
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
}

function unknownHost(
  name: string,
  hostname: string,
  entry: HostConfig | undefined,
  why: string,
): SshDoctorCheck {
  return {
    check: `${name}: resolution`,
    ok: false,
    detail: entry
      ? `[hosts.${name}] names ${hostname}, which does not resolve (${why})`
      : hostname !== name
        ? `${name} is ${hostname} in the ssh config, which does not resolve (${why})`
        : `${name} is neither a [hosts.${name}] table nor a HostName alias in ~/.ssh/config, and does not resolve as a host name (${why})`,
    fix: entry
      ? `check hostname in [hosts.${name}] (or its HostName in ~/.ssh/config)`
      : `check the spelling, or add a [hosts.${name}] table with hostname = "…" or a Host ${name} block in ~/.ssh/config (docs/ssh.md)`,
  };
}

function failed(check: string, e: unknown): SshDoctorCheck {
  if (e instanceof AwaitlessError) return { check, ok: false, detail: e.message, fix: e.hint };
  return { check, ok: false, detail: (e as Error).message, fix: "report this as a bug with the message" };
}

/** Runs the checks in order; stops at the first one the later ones depend on. */
export async function sshDoctorChecks(
  name: string,
  hosts: Record<string, HostConfig>,
  opts: { probeTracking?: boolean } = {},
): Promise<SshDoctorCheck[]> {
  const checks: SshDoctorCheck[] = [];
  let settings: SshHostSettings;
  try {
    settings = resolveHostSettings(name, hosts);
  } catch (e) {
    return [failed(`${name}: resolution`, e)];
  }
  const rows = await describeTransport(name, hosts[name], settings);
  checks.push(...rows);
  if (rows.some((r) => !r.ok)) return checks;
  const host = new SshHost(settings);
  try {
    try {
      await host.session();
      checks.push({
        check: `${name}: connection, host key, authentication`,
        ok: true,
        detail:
          settings.transport === "ssh2"
            ? `connected${
                settings.target.agentSocket
                  ? ` (agent ${settings.target.agentSocket} offered${settings.target.identitiesOnly ? ", only the IdentityFile keys (IdentitiesOnly yes)" : ""})`
                  : ""
              }`
            : "connected through the ControlMaster socket",
      });
    } catch (e) {
      checks.push(failed(`${name}: connection, host key, authentication`, e));
      return checks;
    }
    try {
      const r = await host.run(UTILITIES, [settings.remoteJobDir]);
      const out = r.stdout.toString();
      const sha = /^sha=(.+)$/m.exec(out)?.[1];
      // every launch checks the wrapper's SHA-256 on the host (docs/wrapper-protocol.md)
      const missing = [...out.matchAll(/^missing=(.+)$/gm)].map((m) => m[1]).concat(sha ? [] : ["sha256sum"]);
      checks.push({
        check: `${name}: sh and utilities`,
        ok: r.code === 0 && missing.length === 0,
        detail:
          missing.length > 0
            ? `missing: ${missing.join(", ")}`
            : `sh works; sha256 via ${sha}${out.includes("nosetsid=1") ? "; no setsid (jobs are started immune to SIGHUP instead)" : ""}`,
        ...(missing.length > 0
          ? { fix: `install ${missing.join(", ")} on the host (coreutils or busybox)` }
          : {}),
      });
      const prepared = await host.prepare();
      const r2 = await host.run(UTILITIES, [prepared.root]);
      const mode = /^mode=(.+)$/m.exec(r2.stdout.toString())?.[1] ?? "?";
      checks.push({
        check: `${name}: remote job directory`,
        ok: mode.startsWith("drwx------"),
        detail: `${prepared.root} (${mode}); wrapper ${prepared.wrapperPath}`,
        ...(mode.startsWith("drwx------") ? {} : { fix: `chmod 700 ${prepared.root} on the host` }),
      });
      if (opts.probeTracking !== false) {
        const p = await host.run(TRACK_PROBE, []);
        const text = p.stdout.toString();
        checks.push(
          trackingCheck(`${name}: tracking`, p.code === 0 ? parseTrackProbe(text) : null, text + p.stderr),
        );
      }
    } catch (e) {
      checks.push(failed(`${name}: remote setup`, e));
    }
  } finally {
    host.close();
  }
  return checks;
}

const OPENSSH_WHY =
  'set transport = "openssh" in [hosts.NAME] for hosts that need Kerberos/GSSAPI, OpenSSH certificates, FIDO keys, 2FA, Match or ProxyCommand';

/** The resolution and transport rows: which client reaches the host, and why. */
async function describeTransport(
  name: string,
  entry: HostConfig | undefined,
  settings: SshHostSettings,
): Promise<SshDoctorCheck[]> {
  const files = settings.configFiles.join(", ");
  if (settings.transport === "ssh2") {
    const t = settings.target;
    // behind a ProxyJump the name may resolve only on the jump host
    const why = t.jump ? null : await unresolvable(t.host);
    if (why !== null) return [unknownHost(name, t.host, entry, why)];
    const via = t.jump ? ` via ${t.jump.user}@${t.jump.host}:${t.jump.port}` : "";
    return [
      {
        check: `${name}: resolution`,
        ok: true,
        detail: `${t.user}@${t.host}:${t.port}${via}; ${entry ? `[hosts.${name}] + ` : ""}ssh config ${files || "(none found)"}`,
      },
      {
        check: `${name}: transport`,
        ok: true,
        detail:
          entry?.transport === "ssh2"
            ? `built-in SSH client (ssh2): [hosts.${name}] sets transport = "ssh2"`
            : `built-in SSH client (ssh2), the default; ${OPENSSH_WHY.replace("NAME", name)}`,
      },
    ];
  }
  const t = settings.openssh;
  try {
    const r = await resolveOpenssh(t);
    const why = r.proxy ? null : await unresolvable(r.hostname);
    if (why !== null) return [unknownHost(name, r.hostname, entry, why)];
    const pid = await masterPid(t, r);
    return [
      {
        check: `${name}: resolution`,
        ok: true,
        detail: `${r.user}@${r.hostname}:${r.port}${r.proxy ? ` via ${r.proxy}` : ""}; by \`ssh -G ${t.destination}\`${files ? ` with -F ${files}` : ""}`,
      },
      {
        check: `${name}: transport`,
        ok: true,
        detail: `system OpenSSH client, because [hosts.${name}] sets transport = "openssh"; ControlMaster socket ${r.controlPath} (${r.controlPathFrom}): ${pid !== null ? `master running${pid > 0 ? ` (pid ${pid})` : ""}` : "no master yet, one is opened in BatchMode on first use"}`,
      },
    ];
  } catch (e) {
    return [failed(`${name}: resolution`, e)];
  }
}
