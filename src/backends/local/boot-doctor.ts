// `doctor`'s boot ID line for this machine: whether a reboot can be told from a killed wrapper.
import { localBootId } from "./proc.ts";

/** The boot ID check: readable, a job whose machine rebooted is lost/host_rebooted; else lost/wrapper_killed. */
export function localBootCheck(): { check: string; ok: true; detail: string } {
  return {
    check: "boot id",
    ok: true,
    detail: localBootId()
      ? "readable: a reboot is reported as lost/host_rebooted"
      : "unavailable: a reboot is reported as lost/wrapper_killed",
  };
}
