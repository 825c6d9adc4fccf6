// Composition root: argv → CLI or MCP; loads config, opens the store, builds the backends on demand.
import { runCli } from "./cli/cli.ts";
import type { Ctx } from "./cli/commands.ts";

async function makeCtx(configFlag: string | undefined): Promise<Ctx> {
  const { createContext } = await import("./context.ts");
  return createContext(process.env, configFlag);
}

function configFlag(argv: string[]): string | undefined {
  const i = argv.indexOf("--config");
  const end = argv.indexOf("--");
  if (i >= 0 && (end < 0 || i < end)) return argv[i + 1];
  const eq = argv.find((a, j) => a.startsWith("--config=") && (end < 0 || j < end));
  return eq?.slice("--config=".length);
}

async function main(): Promise<number> {
  const invokedAs = (process.argv[1] ?? "").split("/").pop() ?? "";
  const args = process.argv.slice(2);
  // The binary installed (or linked) as `awaitless-mcp` serves MCP when given no command (options only); a
  // command still runs as a command (`awaitless-mcp gc`: the automatic gc starts the binary it runs as).
  const asMcp = invokedAs === "awaitless-mcp" || process.argv0.endsWith("awaitless-mcp");
  const argv = asMcp && (args.length === 0 || args[0]!.startsWith("-")) ? ["mcp", ...args] : args;
  const io = { stdout: process.stdout, stderr: process.stderr, env: process.env };
  const code = await runCli(argv, io, () => makeCtx(configFlag(argv)));
  // Flush stdout before exiting (pipes may be asynchronous).
  await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
  return code;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`awaitless: internal error: ${(e as Error)?.stack ?? e}\n`);
    process.exit(1);
  },
);
