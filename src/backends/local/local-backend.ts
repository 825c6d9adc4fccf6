// The local backend: the wrapper backend over this machine (LocalHost); a job's directory is job.job_dir itself.
import { LOCAL_HEARTBEAT_SECONDS } from "../../core/model/liveness.ts";
import { WrapperBackend, type WrapperBackendOptions } from "../host/wrapper-backend.ts";
import { LocalHost } from "./local-host.ts";

export interface LocalBackendOptions extends WrapperBackendOptions {
  dataDir: string;
  /** The POSIX shell that runs the wrapper. */
  shell: string;
}

export class LocalBackend extends WrapperBackend {
  constructor(opts: LocalBackendOptions) {
    const host = new LocalHost({ dataDir: opts.dataDir, shell: opts.shell });
    // a local wrapper is checked by its process, so its quiet heartbeat can be rare (LOCAL_HEARTBEAT_SECONDS)
    super(
      "local",
      { hostOf: () => host, inPlace: true },
      { ...opts, heartbeatSeconds: opts.heartbeatSeconds ?? LOCAL_HEARTBEAT_SECONDS },
    );
  }
}
