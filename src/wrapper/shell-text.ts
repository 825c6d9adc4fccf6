// The shell programs as they run: each .sh file of src/wrapper with its `# awaitless:include NAME` lines replaced by
// that fragment (prelude.sh, host/lib-*.sh), so the /proc, boot and queue-entry readers exist once.
import artifactRow from "./host/lib-artifact-row.sh" with { type: "text" };
import freeSpace from "./host/lib-free-space.sh" with { type: "text" };
import root from "./host/lib-root.sh" with { type: "text" };
import sha256 from "./host/lib-sha256.sh" with { type: "text" };
import trust from "./host/lib-trust.sh" with { type: "text" };
import after from "./job/after.sh" with { type: "text" };
import clock from "./job/clock.sh" with { type: "text" };
import command from "./job/command.sh" with { type: "text" };
import exitRecord from "./job/exit.sh" with { type: "text" };
import files from "./job/files.sh" with { type: "text" };
import jobEnd from "./job/job-end.sh" with { type: "text" };
import logCap from "./job/log-cap.sh" with { type: "text" };
import monitor from "./job/monitor.sh" with { type: "text" };
import queue from "./job/queue.sh" with { type: "text" };
import setup from "./job/setup.sh" with { type: "text" };
import prelude from "./prelude.sh" with { type: "text" };
import tracking from "./tracking.sh" with { type: "text" };

/** The fragments a program may include, by the name its include line gives. */
export const FRAGMENTS: Readonly<Record<string, string>> = {
  "prelude.sh": prelude,
  "tracking.sh": tracking,
  "lib-artifact-row.sh": artifactRow,
  "lib-free-space.sh": freeSpace,
  "lib-root.sh": root,
  "lib-sha256.sh": sha256,
  "lib-trust.sh": trust,
  "job/files.sh": files,
  "job/clock.sh": clock,
  "job/log-cap.sh": logCap,
  "job/setup.sh": setup,
  "job/command.sh": command,
  "job/monitor.sh": monitor,
  "job/exit.sh": exitRecord,
  "job/queue.sh": queue,
  "job/after.sh": after,
  "job/job-end.sh": jobEnd,
};

export const INCLUDE_RE = /^# awaitless:include (\S+)\n/gm;

/** `text` with every include line replaced by its fragment (minus the fragment's `# shellcheck shell=` line). */
export function assemble(text: string): string {
  return text.replace(INCLUDE_RE, (_line, name: string) => {
    const fragment = FRAGMENTS[name];
    if (fragment === undefined) throw new Error(`unknown shell fragment ${name}`);
    return assemble(fragment.replace(/^# shellcheck shell=\w+\n/m, ""));
  });
}

/**
 * A host program as sent on every call (`sh -s` over SSH): assembled, without its comment lines and indentation-only
 * blank lines (they document the file; here they would only cost bytes per round trip).
 */
export function hostProgram(text: string): string {
  const lines = assemble(text)
    .split("\n")
    .filter((line) => !/^\s*#/.test(line) && line.trim() !== "");
  return `${withoutUnusedReaders(lines).join("\n")}\n`;
}

/**
 * Drops the prelude's `awl_*` functions the program never calls (they would cost bytes on every round trip): a
 * function goes when no line outside its own body names it, again until none goes (a reader only an unused reader
 * called goes too). Each line's `awl_` words are read once, so this costs a few passes over the lines (it runs for
 * every host program a command uses).
 */
function withoutUnusedReaders(lines: string[]): string[] {
  const words = lines.map((line) => new Set(line.match(/\bawl_\w+\b/g)));
  const defs: { name: string; from: number; to: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(awl_\w+)\(\) \{$/.exec(lines[i] as string);
    if (!m) continue;
    const end = lines.indexOf("}", i);
    if (end > i) defs.push({ name: m[1] as string, from: i, to: end });
  }
  const removed = lines.map(() => false);
  for (;;) {
    const unused = defs.find(
      (d) =>
        !removed[d.from] && !words.some((w, i) => w.has(d.name) && (i < d.from || i > d.to) && !removed[i]),
    );
    if (!unused) return lines.filter((_, i) => !removed[i]);
    for (let i = unused.from; i <= unused.to; i++) removed[i] = true;
  }
}
