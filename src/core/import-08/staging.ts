// The import's staging file: each prepared job one JSON line (0600, in our own imported-0.8/), read back line by line
// into the one transaction that stores them all, so memory stays bounded however many jobs a store holds.
import { closeSync, constants, openSync, readSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

const FRESH = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

export class StagingFile<T> {
  readonly path: string;
  private fd: number | null;
  count = 0;

  constructor(dir: string) {
    this.path = join(dir, `.import-${process.pid}-${Math.random().toString(36).slice(2, 10)}.jsonl`);
    this.fd = openSync(this.path, FRESH, 0o600);
  }

  add(item: T): void {
    if (this.fd === null) throw new Error("the staging file is closed");
    const buf = Buffer.from(`${JSON.stringify(item)}\n`);
    for (let off = 0; off < buf.length; ) off += writeSync(this.fd, buf, off, buf.length - off);
    this.count++;
  }

  /** Every item added, in order (read from the file; a new pass each call). */
  *items(): Generator<T> {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
    const fd = openSync(this.path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const buf = Buffer.allocUnsafe(1 << 20);
      let pending: Buffer[] = [];
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, null);
        if (n <= 0) break;
        let start = 0;
        for (let i = buf.indexOf(10, 0); i !== -1 && i < n; i = buf.indexOf(10, i + 1)) {
          pending.push(Buffer.from(buf.subarray(start, i)));
          yield JSON.parse(Buffer.concat(pending).toString("utf8")) as T;
          pending = [];
          start = i + 1;
        }
        if (start < n) pending.push(Buffer.from(buf.subarray(start, n)));
      }
    } finally {
      closeSync(fd);
    }
  }

  remove(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    rmSync(this.path, { force: true });
  }
}
