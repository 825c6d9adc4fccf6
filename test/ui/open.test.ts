// `awaitless ui --open` from the compiled binary with a fake xdg-open on PATH that records its argv (what
// /proc/PID/cmdline shows every user): no token there, only a 0600 redirect file in a private directory, which
// brings chromium to the dashboard signed in, and which is gone once the server stops.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Sandbox, until } from "../helpers/cli.ts";
import { browserAvailable, launchBrowser } from "./browser.ts";

const box = new Sandbox();
afterAll(() => box.cleanup());

describe("ui --open", () => {
  test("the opener's command line holds no token; the 0600 file it opens signs the browser in; stop removes it", async () => {
    const bin = join(box.root, "fake-bin");
    mkdirSync(bin);
    const record = join(box.root, "xdg-open.argv");
    writeFileSync(
      join(bin, "xdg-open"),
      `#!/bin/sh\nfor a in "$0" "$@"; do printf '%s\\n' "$a"; done > ${JSON.stringify(record)}\n`,
      { mode: 0o755 },
    );
    const proc = box.spawn(["ui", "--open", "--json"], { env: { PATH: `${bin}:/usr/bin:/bin` } });
    await until(
      "the fake xdg-open to have run",
      () => existsSync(record) && readFileSync(record, "utf8").includes("\n"),
      20_000,
    );
    const argv = readFileSync(record, "utf8").trim().split("\n");
    const opened = argv[1]!;
    expect(argv.length).toBe(2);
    expect(opened).toStartWith("file://");
    expect(opened).not.toMatch(/token/);
    expect(opened).not.toMatch(/[0-9a-f]{48}/);
    const file = fileURLToPath(opened);
    expect(file.startsWith(box.dataDir)).toBe(true);
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    expect(lstatSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(lstatSync(file).isFile()).toBe(true);
    const html = readFileSync(file, "utf8");
    const token = /#token=([0-9a-f]{48})/.exec(html)?.[1];
    expect(token).toBeDefined();
    expect(readFileSync(`/proc/${proc.pid}/cmdline`, "utf8")).not.toContain(token!);

    if (browserAvailable().ok) {
      const browser = await launchBrowser();
      try {
        const page = await browser.newPage();
        await page.goto(opened);
        await page.waitForSelector("#live.on", { timeout: 20_000 });
        expect(page.url()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
        expect(await page.$("#need-token")).toBeNull();
      } finally {
        await browser.close();
      }
    }

    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(dirname(file))).toBe(false);
  }, 60_000);
});
