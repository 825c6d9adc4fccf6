// `awaitless ui`: starts the dashboard (src/ui/), prints its URL with the token, optionally opens a browser.
import type { Ctx } from "../context.ts";
import { EXIT, invalid } from "../core/model/errors.ts";
import { type OpenPage, writeOpenPage } from "../ui/open-page.ts";
import { startUi } from "../ui/server.ts";
import type { CliIo } from "./cli-io.ts";
import { parseIntOption } from "./parse.ts";
import { paint, styleFor } from "./render.ts";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/** The program that opens a URL here (xdg-open, or macOS's open), or undefined when there is none. */
function opener(env: Record<string, string | undefined>): string | undefined {
  const names = process.platform === "darwin" ? ["open"] : ["xdg-open"];
  for (const n of names) {
    const found = Bun.which(n, env.PATH ? { PATH: env.PATH } : {});
    if (found) return found;
  }
  return undefined;
}

export async function uiCommand(
  opts: Record<string, unknown>,
  io: CliIo,
  makeCtx: () => Promise<Ctx>,
): Promise<number> {
  const port = opts.port === undefined ? 0 : parseIntOption(opts.port, "--port", 0, 65535);
  const hostname = opts.host === undefined ? "127.0.0.1" : String(opts.host);
  if (hostname === "" || /[\s/]/.test(hostname)) {
    throw invalid(
      `--host: bad address ${JSON.stringify(hostname)}`,
      "give an address to bind, e.g. 127.0.0.1",
    );
  }
  const style = styleFor(io.stderr, io.env);
  const ctx = await makeCtx();
  let server: ReturnType<typeof startUi>;
  try {
    server = startUi(ctx.service, { hostname, port });
  } catch (e) {
    const why = String((e as Error)?.message ?? e);
    throw invalid(
      `cannot listen on ${hostname}:${port}: ${why}`,
      port
        ? "pick another --port, or omit it for a free one"
        : "check --host names an address of this machine",
    );
  }
  // Listening for Ctrl-C / SIGTERM before the URL is out: a caller may stop the server as soon as it reads it.
  const stopped = new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  if (!LOOPBACK.has(hostname)) {
    io.stderr.write(
      `${paint(style, "yellow", "warning:")} listening on ${hostname}, not only this machine's loopback: anyone who can reach it and has the token can see and cancel your jobs\n`,
    );
  }
  if (opts.json)
    io.stdout.write(JSON.stringify({ url: server.loginUrl, port: server.port, token: server.token }) + "\n");
  else {
    io.stdout.write(`Awaitless dashboard: ${server.loginUrl}\n`);
    io.stderr.write(
      `From another machine: ssh -L ${server.port}:127.0.0.1:${server.port} THIS_HOST, then open the URL there. Ctrl-C stops the server.\n`,
    );
  }
  let page: OpenPage | undefined;
  try {
    if (opts.open) page = openBrowser(io, ctx.config.dataDir, server.loginUrl);
    await stopped;
  } finally {
    page?.remove();
    await server.stop();
  }
  return EXIT.ok;
}

/**
 * Starts the browser on a 0600 redirect file holding the URL (removed when the server stops): a command line is
 * readable by every user of the machine, so the token never goes on the opener's.
 */
function openBrowser(io: CliIo, dataDir: string, url: string): OpenPage | undefined {
  const prog = opener(io.env);
  if (!prog) {
    io.stderr.write("no xdg-open here: open the URL above in a browser\n");
    return undefined;
  }
  const page = writeOpenPage(dataDir, url);
  const child = Bun.spawn([prog, page.fileUrl], { stdout: "ignore", stderr: "ignore", stdin: "ignore" });
  child.unref();
  return page;
}
