// `doctor`'s tracking line for this machine and for SSH hosts: how their wrappers will track a job's processes.
import { spawnSync } from "node:child_process";
import {
  parseTrackProbe,
  TRACK_PROBE,
  type TrackProbe,
  trackProbeWords,
} from "../../wrapper/host-scripts.ts";

export interface TrackingCheck {
  check: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

/** The check for a probe's answer (null: the program did not answer as documented). */
export function trackingCheck(check: string, probe: TrackProbe | null, output: string): TrackingCheck {
  if (!probe)
    return {
      check,
      ok: false,
      detail: `the tracking probe did not answer: ${output.trim().slice(0, 300) || "no output"}`,
      fix: "run `awaitless doctor` again; report it as a bug if it persists",
    };
  if (probe.tracking === "environment" && !probe.environ)
    return {
      check,
      ok: false,
      detail: `${trackProbeWords(probe)}; but no process's environment can be read here (no /proc, or grep without -z): what a command leaves running is not found`,
      fix: "install GNU grep or a busybox whose grep takes -z",
    };
  return { check, ok: true, detail: trackProbeWords(probe) };
}

/** The probe run here with `shell` (as a local job's wrapper would be). */
export function localTrackingCheck(shell: string, env: NodeJS.ProcessEnv): TrackingCheck {
  const r = spawnSync(shell, ["-s"], { input: TRACK_PROBE, encoding: "utf8", env, timeout: 20_000 });
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  return trackingCheck("tracking", r.status === 0 ? parseTrackProbe(r.stdout) : null, out);
}
