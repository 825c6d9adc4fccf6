// Another local user's socket flood, for test/ui/http-hostile.test.ts (run as that user with bun): COUNT
// connections to 127.0.0.1:PORT, each sends one whole request for the public page (`request`) or half of one
// (`partial`) and then holds the socket open, reading nothing more. Prints {"connected","closed"} as JSON lines
// whenever the counts change, until killed.
// Usage: bun socket-flood.ts PORT COUNT request|partial
import { connect, type Socket } from "node:net";

const [port, count, mode] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4] ?? "request"];
const socks: Socket[] = [];
let connected = 0;
let closed = 0;
let said = "";
const say = () => {
  const line = JSON.stringify({ connected, closed });
  if (line !== said) process.stdout.write(`${line}\n`);
  said = line;
};
for (let i = 0; i < count; i++) {
  const s = connect(port, "127.0.0.1", () => {
    connected++;
    s.write(
      mode === "partial"
        ? `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`
        : `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`,
    );
    say();
  });
  s.on("data", () => {});
  s.on("error", () => {});
  s.on("close", () => {
    closed++;
    say();
  });
  socks.push(s);
}
setInterval(say, 1000);
process.on("SIGTERM", () => process.exit(0));
