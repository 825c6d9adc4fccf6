// `ui --open`'s redirect file: the URL with the token goes into a 0600 file in a private directory, and the browser
// opener is given the file, so the token is never on a command line (/proc/PID/cmdline is readable by every user).
import { closeSync, constants, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export interface OpenPage {
  /** The file's own URL (file://…): what the opener is given. */
  fileUrl: string;
  path: string;
  /** Removes the file and its directory (the server stops). */
  remove(): void;
}

const PREFIX = "ui-open-";

function escapeAttr(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes the redirect directories of servers that are gone (killed before they could remove their own). */
function removeStale(dir: string): void {
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = new RegExp(`^${PREFIX}(\\d+)-`).exec(name);
    if (!m || alive(Number(m[1]))) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
  }
}

/**
 * Writes `<dir>/ui-open-<pid>-XXXXXX/open.html` (directory 0700, file 0600, created exclusively, never through a
 * link) that sends the browser on to `url`. `dir` is a private directory of the user (the data directory).
 */
export function writeOpenPage(dir: string, url: string): OpenPage {
  removeStale(dir);
  const own = mkdtempSync(join(dir, `${PREFIX}${process.pid}-`));
  const path = join(own, "open.html");
  const u = escapeAttr(url);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=${u}">
<title>Opening the Awaitless dashboard</title>
</head>
<body>
<p>Opening the Awaitless dashboard… If nothing happens, <a href="${u}">open it here</a>.</p>
</body>
</html>
`;
  const fd = openSync(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    writeSync(fd, html);
  } finally {
    closeSync(fd);
  }
  return {
    fileUrl: pathToFileURL(path).href,
    path,
    remove() {
      rmSync(own, { recursive: true, force: true });
    },
  };
}
