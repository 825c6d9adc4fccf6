// The real browser of the dashboard tests: Debian's chromium driven by playwright-core (the only importer of it),
// and `awaitless ui` started from the compiled binary in a sandbox, its URL read from its first line.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { type Sandbox, until } from "../helpers/cli.ts";
import type { Availability } from "../helpers/sshd.ts";

export type { Browser, Page };

export function chromiumPath(): string | undefined {
  const given = process.env.AWAITLESS_CHROMIUM;
  if (given) return existsSync(given) ? given : undefined;
  return (
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p)) ??
    Bun.which("chromium") ??
    undefined
  );
}

export function browserAvailable(): Availability {
  return chromiumPath()
    ? { ok: true, why: "" }
    : {
        ok: false,
        why: "chromium is not installed (to enable: `apt-get install -y chromium`, or set AWAITLESS_CHROMIUM)",
      };
}

export async function launchBrowser(): Promise<Browser> {
  // As root (CI, containers) chromium's own sandbox cannot start.
  const args = process.getuid?.() === 0 ? ["--no-sandbox"] : [];
  return chromium.launch({ executablePath: chromiumPath()!, args, headless: true });
}

export interface UiProcess {
  url: string;
  loginUrl: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** `awaitless ui --json` as a user starts it; stopped by its PID. */
export async function startUiProcess(box: Sandbox, extra: string[] = []): Promise<UiProcess> {
  const proc = box.spawn(["ui", "--json", ...extra]);
  const reader = proc.stdout.getReader();
  let text = "";
  await until(
    "awaitless ui to print its URL",
    async () => {
      const { value, done } = await reader.read();
      if (done) throw new Error(`awaitless ui exited: ${await new Response(proc.stderr).text()}`);
      text += new TextDecoder().decode(value);
      return text.includes("\n");
    },
    20_000,
    1,
  );
  const { url: loginUrl, port } = JSON.parse(text.split("\n")[0]!) as { url: string; port: number };
  return {
    loginUrl,
    url: loginUrl.replace(/#token=.*$/, ""),
    port,
    pid: proc.pid,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** Where screenshots go: $AWAITLESS_UI_SCREENSHOTS, else a directory under the test's sandbox (never committed). */
export function screenshotDir(box: Sandbox): string {
  const dir = process.env.AWAITLESS_UI_SCREENSHOTS ?? join(box.root, "screenshots");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Waits until the job page's log does (or, with `shown` false, no longer does) contain `text`. */
export async function logShows(page: Page, text: string, shown: boolean, timeout: number): Promise<void> {
  // Runs in the page (the dashboard's CSP allows no string eval); the tests' types have no DOM.
  const check = ([t, want]: [string, boolean]) => {
    // biome-ignore lint/suspicious/noExplicitAny: the page's document
    const log = (globalThis as any).document.getElementById("log");
    return ((log?.textContent ?? "") as string).includes(t) === want;
  };
  await page.waitForFunction(check, [text, shown] as [string, boolean], { timeout });
}

/** Waits until the element `selector` matches contains `text`. */
export async function textShows(page: Page, selector: string, text: string, timeout: number): Promise<void> {
  const check = ([sel, t]: [string, string]) =>
    // biome-ignore lint/suspicious/noExplicitAny: the page's document
    (((globalThis as any).document.querySelector(sel)?.textContent ?? "") as string).includes(t);
  await page.waitForFunction(check, [selector, text] as [string, string], { timeout });
}

/**
 * A job that prints three lines (`hello from TAG`, `ERROR one`, `plain two`) and then waits (bounded, 5 minutes)
 * until the test creates its end file in `dir`, then prints that file and `finished TAG`.
 */
export function gated(dir: string, tag: string): { argv: string[]; end(): void } {
  const end = join(dir, `end-${tag}`);
  const script = [
    'printf "%s\\n" "hello from $2" "ERROR one" "plain two";',
    'i=0; while [ ! -e "$1" ] && [ "$i" -lt 3000 ]; do i=$((i + 1)); sleep 0.1; done;',
    'if [ -e "$1" ]; then cat "$1"; fi; echo "finished $2"',
  ].join(" ");
  return {
    argv: ["sh", "-c", script, "gated", end, tag],
    end: () => writeFileSync(end, "late line\n", { mode: 0o644 }),
  };
}

/** Both needs met, or the first one missing (its how-to). */
export function both(a: Availability, b: Availability): Availability {
  return !a.ok ? a : b;
}
