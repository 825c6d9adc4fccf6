// The wrapper and cancel scripts assembled from their fragments, and the wrapper's hash: run by the bundler (a macro,
// imported by scripts.ts), so the executable holds the results and no launch assembles or hashes them.
import cancelText from "./cancel.sh" with { type: "text" };
import { sha256Hex } from "./sha256.ts";
import { assemble } from "./shell-text.ts";
import wrapperText from "./wrapper.sh" with { type: "text" };

export function assembledScripts(): { wrapper: string; cancel: string; wrapperSha256: string } {
  const wrapper = withoutInnerComments(assemble(wrapperText));
  return { wrapper, cancel: assemble(cancelText), wrapperSha256: sha256Hex(wrapper) };
}

/**
 * The wrapper as it runs: its header (the leading comment block: what the wrapper does, its files and records) kept,
 * every later comment line dropped. The fragments' comments document the source (src/wrapper); in the running copy
 * they are half its bytes, which every job's shell reads and parses before its command starts (about a millisecond).
 */
export function withoutInnerComments(text: string): string {
  const lines = text.split("\n");
  let body = lines.findIndex((line) => !line.startsWith("#"));
  if (body < 0) body = lines.length;
  return [...lines.slice(0, body), ...lines.slice(body).filter((line) => !/^\s*#/.test(line))].join("\n");
}
