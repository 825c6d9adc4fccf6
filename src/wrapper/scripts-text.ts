// The wrapper and cancel scripts assembled from their fragments, and the wrapper's hash: run by the bundler (a macro,
// imported by scripts.ts), so the executable holds the results and no launch assembles or hashes them.
import cancelText from "./cancel.sh" with { type: "text" };
import { sha256Hex } from "./sha256.ts";
import { assemble } from "./shell-text.ts";
import wrapperText from "./wrapper.sh" with { type: "text" };

export function assembledScripts(): { wrapper: string; cancel: string; wrapperSha256: string } {
  const wrapper = assemble(wrapperText);
  return { wrapper, cancel: assemble(cancelText), wrapperSha256: sha256Hex(wrapper) };
}
