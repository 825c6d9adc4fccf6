// Sits between a client and `awaitless mcp`, copying bytes both ways unchanged and logging each JSON-RPC line
// with its direction and time (what the client sent: progress tokens, cancellations, subscriptions), and the
// server's stderr lines (passed on to the client too).
// Usage: bun mcp-tap.ts LOG_FILE -- COMMAND [ARGS...]
import { appendFileSync } from "node:fs";

const [log, dashes, ...command] = process.argv.slice(2);
if (!log || dashes !== "--" || command.length === 0) {
  console.error("usage: bun mcp-tap.ts LOG_FILE -- COMMAND [ARGS...]");
  process.exit(2);
}

function lines(dir: "in" | "out" | "err") {
  let rest = "";
  const decoder = new TextDecoder();
  return (chunk: Uint8Array) => {
    rest += decoder.decode(chunk, { stream: true });
    let nl = rest.indexOf("\n");
    while (nl >= 0) {
      const line = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      if (line.trim() !== "") appendFileSync(log!, `${JSON.stringify({ at: Date.now(), dir, line })}\n`);
      nl = rest.indexOf("\n");
    }
  };
}

const child = Bun.spawn(command, { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
const fromClient = lines("in");
const fromServer = lines("out");
const serverErr = lines("err");
(async () => {
  for await (const chunk of child.stderr) {
    serverErr(chunk);
    process.stderr.write(chunk);
  }
})();
appendFileSync(log, `${JSON.stringify({ at: Date.now(), dir: "start", line: command.join(" ") })}\n`);
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
  process.on(sig, () => {
    appendFileSync(log, `${JSON.stringify({ at: Date.now(), dir: "signal", line: sig })}\n`);
    child.kill(sig);
  });
}
(async () => {
  for await (const chunk of Bun.stdin.stream()) {
    fromClient(chunk);
    child.stdin.write(chunk);
    await child.stdin.flush();
  }
  appendFileSync(log, `${JSON.stringify({ at: Date.now(), dir: "eof", line: "" })}\n`);
  child.stdin.end();
})();
for await (const chunk of child.stdout) {
  fromServer(chunk);
  await Bun.write(Bun.stdout, chunk);
}
const code = await child.exited;
appendFileSync(log, `${JSON.stringify({ at: Date.now(), dir: "exit", line: String(code) })}\n`);
process.exit(code);
