// The entry: answers the version from this module alone, else starts the program (start.ts, a chunk of its own that
// a version never loads: the bundle is split, so nothing of the CLI, the MCP server or the store is evaluated here).
import { VERSION } from "./version.ts";

/** Awaitless 0.8's two names for its stdio server: the binary installed (or linked) as one serves MCP. */
const MCP_NAMES = ["awaitless-mcp", "awaitless-runner"];

const args = process.argv.slice(2);
const invokedAs = (process.argv[1] ?? "").split("/").pop() ?? "";
// Given no command (options only, e.g. `--config FILE`), those names serve MCP; a command still runs as a command
// (`awaitless-mcp gc`: the automatic gc starts the binary it runs as).
const asMcp = MCP_NAMES.some((name) => invokedAs === name || process.argv0.endsWith(name));
const argv = asMcp && (args.length === 0 || args[0]!.startsWith("-")) ? ["mcp", ...args] : args;

if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V" || argv[0] === "version")) {
  // console.log is the runtime's own writer: node:fs alone would cost more than the rest of this answer
  console.log(`awaitless ${VERSION}`);
} else {
  void import("./start.ts").then(({ start }) => start(argv, args));
}
