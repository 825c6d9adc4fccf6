// The SSH backend: the wrapper backend over SSH hosts (one SshJobHost per host name, made on first use).
// job.job_dir stays the LOCAL job dir (a 0600 copy of spec.sh, for redaction); backend_id.remote_dir names the
// remote one (before launch it is derived from the host's prepared root).
import type { HostConfig } from "../../config/config.ts";
import { AwaitlessError } from "../../core/model/errors.ts";
import { WrapperBackend, type WrapperBackendOptions } from "../host/wrapper-backend.ts";
import { SshHost } from "./ssh-host.ts";
import { SshJobHost } from "./ssh-job-host.ts";
import { resolveHostSettings, type SshHostSettings } from "./ssh-target.ts";

export { isConnectionError } from "./ssh-job-host.ts";

export interface SshBackendOptions extends WrapperBackendOptions {
  hosts: Record<string, HostConfig>;
  /** Host settings resolver (tests); default: [hosts.NAME] over ~/.ssh/config. */
  resolve?: (name: string) => SshHostSettings;
}

export class SshBackend extends WrapperBackend {
  private readonly hosts: Map<string, SshJobHost>;

  constructor(opts: SshBackendOptions) {
    const hosts = new Map<string, SshJobHost>();
    const hostOf = (name: string | null): SshJobHost => {
      if (!name) {
        throw new AwaitlessError("invalid_argument", "an ssh job needs a host", {
          cli: "add --host NAME",
          mcp: "Add host: a [hosts.NAME] entry of the config or an ~/.ssh/config alias.",
        });
      }
      let h = hosts.get(name);
      if (!h) {
        const settings = opts.resolve ? opts.resolve(name) : resolveHostSettings(name, opts.hosts);
        h = new SshJobHost(new SshHost(settings));
        hosts.set(name, h);
      }
      return h;
    };
    super("ssh", { hostOf, inPlace: false }, opts);
    this.hosts = hosts;
  }

  /** The connection-level view of a host (doctor). */
  host(name: string): SshHost {
    return (this.hostNamed(name) as SshJobHost).host;
  }

  /** Closes every connection and watch channel (tests; MCP shutdown). */
  close(): void {
    for (const h of this.hosts.values()) h.close();
  }
}
