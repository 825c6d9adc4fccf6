// `doctor --host NAME` for SSH hosts: resolution, reachability + host key + auth, sh and utilities, remote dir.
import type { HostConfig } from "../../config/config.ts";
import { AwaitlessError } from "../../core/errors.ts";
import { SshHost } from "./ssh-host.ts";
import { resolveHostSettings, type SshHostSettings } from "./ssh-target.ts";

export interface SshDoctorCheck {
  check: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

const UTILITIES = `for c in mkdir mv cat ls tail head kill sleep date rm cut; do command -v "$c" >/dev/null 2>&1 || echo "missing=$c"; done
command -v setsid >/dev/null 2>&1 || echo "nosetsid=1"
for c in sha256sum shasum openssl busybox; do command -v "$c" >/dev/null 2>&1 && { echo "sha=$c"; break; }; done
[ -r /proc/self/stat ] || echo "noproc=1"
r=$1
case $r in "~") r=$HOME ;; "~/"*) r=$HOME/\${r#"~/"} ;; esac
[ -d "$r" ] && echo "mode=$(ls -ld "$r" | cut -c1-10)"
`;

function failed(check: string, e: unknown): SshDoctorCheck {
  if (e instanceof AwaitlessError) return { check, ok: false, detail: e.message, fix: e.hint };
  return { check, ok: false, detail: (e as Error).message, fix: "report this as a bug with the message" };
}

/** Runs the checks in order; stops at the first one the later ones depend on. */
export async function sshDoctorChecks(
  name: string,
  hosts: Record<string, HostConfig>,
): Promise<SshDoctorCheck[]> {
  const checks: SshDoctorCheck[] = [];
  let settings: SshHostSettings;
  try {
    settings = resolveHostSettings(name, hosts);
  } catch (e) {
    return [failed(`${name}: resolution`, e)];
  }
  const t = settings.target;
  const via = t.jump ? ` via ${t.jump.user}@${t.jump.host}:${t.jump.port}` : "";
  checks.push({
    check: `${name}: resolution`,
    ok: true,
    detail: `${t.user}@${t.host}:${t.port}${via}; ${hosts[name] ? `[hosts.${name}] + ` : ""}ssh config ${settings.configFiles.join(", ") || "(none found)"}`,
  });
  checks.push({
    check: `${name}: transport`,
    ok: settings.transport === "ssh2",
    detail:
      settings.transport === "ssh2"
        ? "built-in SSH client (ssh2)"
        : 'transport = "openssh" is not supported yet',
    ...(settings.transport === "ssh2" ? {} : { fix: `remove transport from [hosts.${name}]` }),
  });
  const host = new SshHost(settings);
  try {
    try {
      await host.session();
      checks.push({
        check: `${name}: connection, host key, authentication`,
        ok: true,
        detail: `connected${t.agentSocket ? ` (agent ${t.agentSocket} offered)` : ""}`,
      });
    } catch (e) {
      checks.push(failed(`${name}: connection, host key, authentication`, e));
      return checks;
    }
    try {
      const r = await host.run(UTILITIES, [settings.remoteJobDir]);
      const out = r.stdout.toString();
      const missing = [...out.matchAll(/^missing=(.+)$/gm)].map((m) => m[1]);
      const sha = /^sha=(.+)$/m.exec(out)?.[1];
      checks.push({
        check: `${name}: sh and utilities`,
        ok: r.code === 0 && missing.length === 0,
        detail:
          missing.length > 0
            ? `missing: ${missing.join(", ")}`
            : `sh works; sha256 via ${sha ?? "(none: artifacts get no sha256)"}${out.includes("nosetsid=1") ? "; no setsid (jobs are started immune to SIGHUP instead)" : ""}`,
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
    } catch (e) {
      checks.push(failed(`${name}: remote setup`, e));
    }
  } finally {
    host.close();
  }
  return checks;
}
