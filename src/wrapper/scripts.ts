// The wrapper and cancel scripts as they run (assembled from their fragments) and the wrapper's hash: a module of their
// own, loaded by the first launch or cancel (assembling and hashing cost every start that loaded them; a status needs neither).
import cancelText from "./cancel.sh" with { type: "text" };
import { sha256Hex } from "./sha256.ts";
import { assemble } from "./shell-text.ts";
import wrapperText from "./wrapper.sh" with { type: "text" };

/** The wrapper script (wrapper.sh with the prelude spliced in), embedded in the binary. Run it as `sh wrapper.sh JOB_DIR`. */
export const WRAPPER_TEXT: string = assemble(wrapperText);

/**
 * The client's half of cancel (cancel.sh), run on the job's machine as `sh -c TEXT awaitless-cancel JOB_DIR GRACE
 * [QUEUE_DIR]`: writes the cancel file, takes a waiting job out of line, wakes the wrapper's monitor (the only one
 * that signals), or stops the group itself with one TERM when the wrapper is gone.
 */
export const CANCEL_TEXT: string = assemble(cancelText);

/** Hex SHA-256 of WRAPPER_TEXT: remote copies are named after it so each version is uploaded once. */
export const WRAPPER_SHA256: string = sha256Hex(WRAPPER_TEXT);
