// writeAllSync against real FIFOs: a full non-blocking pipe is waited out, a pipe without a reader says EPIPE.
import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeAllSync } from "../../src/stdio-writer.ts";

const dir = mkdtempSync(join(tmpdir(), "awl-writer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let seq = 0;
function fifo(): string {
  const path = join(dir, `fifo-${++seq}`);
  Bun.spawnSync(["mkfifo", path]);
  return path;
}

describe("writeAllSync", () => {
  test("every byte through a non-blocking FIFO that stays full until a late reader drains it", async () => {
    const path = fifo();
    const out = join(dir, "drained");
    // Read-write, so opening never fails for want of a reader; the reader opens the FIFO only after a pause.
    const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
    const reader = Bun.spawn(["sh", "-c", 'sleep 0.2; exec cat "$0" > "$1"', path, out]);
    try {
      const data = Buffer.alloc(4 * 1024 * 1024, "abcdefghij\n");
      expect(writeAllSync(fd, data)).toBeUndefined();
      closeSync(fd);
      expect(await reader.exited).toBe(0);
      expect(readFileSync(out).equals(data)).toBe(true);
    } finally {
      reader.kill();
    }
  });

  test("a pipe whose reader is gone answers EPIPE (the caller decides how to end)", () => {
    const path = fifo();
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    closeSync(reader);
    try {
      expect(writeAllSync(writer, Buffer.from("lost\n"))).toBe("EPIPE");
    } finally {
      closeSync(writer);
    }
  });
});
