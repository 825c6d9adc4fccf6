import { describe, expect, test } from "bun:test";
import {
  cleanText,
  decodeUtf8,
  sanitizeControl,
  splitBudget,
  tailBytes,
  tailText,
  utf8Length,
} from "../../src/core/util/text.ts";

const enc = new TextEncoder();
const bytes = (...parts: (string | number[])[]): Uint8Array => {
  const chunks = parts.map((p) => (typeof p === "string" ? enc.encode(p) : Uint8Array.from(p)));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
};

describe("cleanText: UTF-8", () => {
  test("passes valid multi-byte text through", () => {
    expect(cleanText(enc.encode("héllo → 世界 🎉\n"))).toBe("héllo → 世界 🎉\n");
  });

  test("replaces invalid bytes with U+FFFD", () => {
    expect(cleanText(bytes("a", [0xff], "b", [0xc3, 0x28]))).toBe("a\uFFFDb\uFFFD(");
  });

  test("skips the continuation bytes of a character cut at the start of a slice", () => {
    const full = enc.encode("🎉 done");
    for (let cut = 1; cut <= 3; cut++) expect(decodeUtf8(full.subarray(cut))).toBe(" done");
    expect(decodeUtf8(enc.encode("世x").subarray(1))).toBe("x");
  });

  test("a character cut at the end becomes a single replacement", () => {
    const full = enc.encode("ok 🎉");
    expect(cleanText(full.subarray(0, full.length - 2))).toBe("ok \uFFFD");
  });

  test("strips a leading byte-order mark", () => {
    expect(cleanText(bytes([0xef, 0xbb, 0xbf], "x"))).toBe("x");
  });
});

describe("cleanText: escapes", () => {
  test("removes SGR colour and cursor CSI sequences", () => {
    expect(cleanText("\x1b[1;31mFAIL\x1b[0m test \x1b[2K\x1b[?25l\x1b[10;20H.")).toBe("FAIL test .");
  });

  test("removes OSC sequences ended by BEL or ST", () => {
    expect(cleanText("a\x1b]0;window title\x07b\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\c")).toBe(
      "ablinkc",
    );
  });

  test("an unterminated OSC is dropped only to the end of its line", () => {
    expect(cleanText("x\x1b]0;cut title\nnext line")).toBe("x\nnext line");
  });

  test("removes single-character ESC sequences, charset selection and a lone ESC", () => {
    expect(cleanText("\x1b(Bplain\x1b7saved\x1b8\x1b=\x1b")).toBe("plainsaved");
  });

  test("removes 8-bit CSI and DCS strings", () => {
    expect(cleanText("a\x9b31mb\x90qdata\x9cc")).toBe("abc");
  });

  test("drops other control characters but keeps tabs and newlines", () => {
    expect(cleanText("a\x00b\x07c\td\x7fe\n")).toBe("abc\tde\n");
  });
});

describe("cleanText: progress frames", () => {
  test("keeps only the text after the last carriage return of a line", () => {
    expect(cleanText("10%\r50%\r100%\ndone\n")).toBe("100%\ndone\n");
  });

  test("treats CRLF as a plain newline", () => {
    expect(cleanText("one\r\ntwo\r\n")).toBe("one\ntwo\n");
  });

  test("a trailing carriage return does not erase the frame before it", () => {
    expect(cleanText("frame 1\rframe 2\r")).toBe("frame 2");
    expect(cleanText("frame 1\rframe 2\r\r\nnext")).toBe("frame 2\nnext");
  });

  test("coloured progress bars collapse to the final frame", () => {
    const bar = (p: number) => `\r\x1b[32m${"#".repeat(p / 10)}\x1b[0m ${p}%`;
    expect(cleanText(`${bar(10)}${bar(50)}${bar(100)}\nok`)).toBe("########## 100%\nok");
  });

  test("applies backspaces", () => {
    expect(cleanText("spin |\b/\b-\bx\n")).toBe("spin x\n");
    expect(cleanText("\b\bab\b")).toBe("a");
  });
});

describe("sanitizeControl", () => {
  test("flattens line breaks, tabs and escapes into single spaces", () => {
    expect(sanitizeControl("  \x1b[31mbad\x1b[0m\r\nthing\there\u2028x ")).toBe("bad thing here x");
  });

  test("caps the length with an ellipsis", () => {
    expect(sanitizeControl("abcdefgh", 5)).toBe("abcd…");
    expect(sanitizeControl("abc", 5)).toBe("abc");
  });
});

describe("splitBudget", () => {
  test("keeps everything when both fit", () => {
    expect(splitBudget(10, 20, 100)).toEqual({ stdoutBytes: 10, stderrBytes: 20 });
  });

  test("splits evenly when both overflow, stderr taking the odd byte", () => {
    expect(splitBudget(1000, 1000, 100)).toEqual({ stdoutBytes: 50, stderrBytes: 50 });
    expect(splitBudget(1000, 1000, 101)).toEqual({ stdoutBytes: 50, stderrBytes: 51 });
  });

  test("gives stdout's unused share to stderr and the other way round", () => {
    expect(splitBudget(10, 1000, 100)).toEqual({ stdoutBytes: 10, stderrBytes: 90 });
    expect(splitBudget(1000, 10, 100)).toEqual({ stdoutBytes: 90, stderrBytes: 10 });
    expect(splitBudget(1000, 0, 100)).toEqual({ stdoutBytes: 100, stderrBytes: 0 });
  });

  test("stderr never gets less than half when it needs it", () => {
    expect(splitBudget(70, 60, 100)).toEqual({ stdoutBytes: 50, stderrBytes: 50 });
    expect(splitBudget(45, 60, 100)).toEqual({ stdoutBytes: 45, stderrBytes: 55 });
  });

  test("a zero or negative budget keeps nothing", () => {
    expect(splitBudget(5, 5, 0)).toEqual({ stdoutBytes: 0, stderrBytes: 0 });
    expect(splitBudget(5, 5, -3)).toEqual({ stdoutBytes: 0, stderrBytes: 0 });
  });
});

describe("tailBytes and tailText", () => {
  test("returns the input when it fits", () => {
    const b = enc.encode("abc");
    expect(tailBytes(b, 3)).toBe(b);
    expect(tailText("abc", 10)).toEqual({ text: "abc", truncated: false });
  });

  test("starts on a line boundary when that is cheap", () => {
    const text = "first line\nsecond line\nthird\n";
    expect(tailText(text, 8)).toEqual({ text: "third\n", truncated: true });
    expect(tailText(text, 20)).toEqual({ text: "second line\nthird\n", truncated: true });
    // Dropping "ond line\n" would cost more than half of a 15-byte budget: cut mid-line instead.
    expect(tailText(text, 15)).toEqual({ text: "ond line\nthird\n", truncated: true });
  });

  test("starts exactly at a cut that already falls on a line boundary", () => {
    expect(tailText("aaaa\nbbbb\n", 5)).toEqual({ text: "bbbb\n", truncated: true });
  });

  test("cuts mid-line when the next newline is too far into the tail", () => {
    const text = `${"x".repeat(20)}\n${"y".repeat(30)}`;
    expect(tailText(text, 10)).toEqual({ text: "y".repeat(10), truncated: true });
  });

  test("never starts inside a multi-byte character", () => {
    const text = "🎉".repeat(10);
    for (let max = 1; max < 40; max++) {
      const { text: tail } = tailText(text, max);
      expect(tail).not.toContain("\uFFFD");
      expect(utf8Length(tail)).toBeLessThanOrEqual(max);
      expect(text.endsWith(tail)).toBe(true);
    }
  });

  test("a zero budget returns nothing", () => {
    expect(tailBytes(enc.encode("abc"), 0).length).toBe(0);
    expect(tailText("abc", 0)).toEqual({ text: "", truncated: true });
  });
});
