// Run inside the client's network namespace: listens on 127.0.0.1 (port 0, printed on stdout) and pipes each
// connection to the scripted model's Unix socket (Unix sockets are reachable across network namespaces).
// Usage: bun forward.ts SOCKET
import type { Socket } from "bun";

const target = process.argv[2];
if (!target) {
  console.error("usage: bun forward.ts SOCKET");
  process.exit(2);
}

/** A writer that keeps what the peer could not take yet and sends it on drain. */
class Pipe {
  private queue: Uint8Array[] = [];
  private ending = false;
  constructor(private out: Socket<unknown> | undefined = undefined) {}
  attach(out: Socket<unknown>): void {
    this.out = out;
    this.flush();
  }
  write(chunk: Uint8Array): void {
    this.queue.push(new Uint8Array(chunk));
    this.flush();
  }
  end(): void {
    this.ending = true;
    this.flush();
  }
  flush(): void {
    const out = this.out;
    if (out === undefined) return;
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      const n = out.write(head);
      if (n < head.length) {
        this.queue[0] = head.subarray(Math.max(n, 0));
        return;
      }
      this.queue.shift();
    }
    if (this.ending) out.end();
  }
}

interface Conn {
  toUpstream: Pipe;
  toClient: Pipe;
}

const listener = Bun.listen<Conn>({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    open(client) {
      const conn: Conn = { toUpstream: new Pipe(), toClient: new Pipe(client as Socket<unknown>) };
      client.data = conn;
      Bun.connect({
        unix: target,
        socket: {
          open: (up) => conn.toUpstream.attach(up as Socket<unknown>),
          data: (_up, chunk) => conn.toClient.write(chunk),
          drain: () => conn.toUpstream.flush(),
          close: () => conn.toClient.end(),
          error: () => conn.toClient.end(),
        },
      }).catch(() => client.end());
    },
    data: (client, chunk) => client.data.toUpstream.write(chunk),
    drain: (client) => client.data.toClient.flush(),
    close: (client) => client.data.toUpstream.end(),
    error: (client) => client.data.toUpstream.end(),
  },
});
console.log(listener.port);
