// The wrapper and cancel scripts as they run (assembled from their fragments) and the wrapper's hash, computed when
// the program is bundled (scripts-text.ts, a macro); a module of its own, loaded by the first launch or cancel.
import { assembledScripts } from "./scripts-text.ts" with { type: "macro" };

const scripts = assembledScripts();

/** The wrapper script (wrapper.sh with the prelude spliced in), embedded in the binary. Run it as `sh wrapper.sh JOB_DIR`. */
export const WRAPPER_TEXT: string = scripts.wrapper;

/**
 * The client's half of cancel (cancel.sh), run on the job's machine as `sh -c TEXT awaitless-cancel JOB_DIR GRACE
 * [QUEUE_DIR]`: writes the cancel file, takes a waiting job out of line, wakes the wrapper's monitor (the only one
 * that signals), or stops the group itself with one TERM when the wrapper is gone.
 */
export const CANCEL_TEXT: string = scripts.cancel;

/** Hex SHA-256 of WRAPPER_TEXT: remote copies are named after it so each version is uploaded once. */
export const WRAPPER_SHA256: string = scripts.wrapperSha256;
