// Text that is not UTF-8: the one check the CLI (argv bytes) and the MCP server (request lines, arguments) share,
// so bytes that are not UTF-8 and unpaired UTF-16 surrogates are refused by name instead of becoming U+FFFD.

const strict = new TextDecoder("utf-8", { fatal: true });

/** Whether `bytes` are valid UTF-8. */
export function isUtf8(bytes: Uint8Array): boolean {
  try {
    strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The length of the valid UTF-8 sequence starting at `i` (1–4), or 0 when none starts there. */
function sequenceAt(b: Uint8Array, i: number): number {
  const c = b[i]!;
  if (c < 0x80) return 1;
  const cont = (k: number) => i + k < b.length && (b[i + k]! & 0xc0) === 0x80;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const c1 = b[i + 1] ?? 0;
    // no overlong forms (E0 80–9F), no UTF-16 surrogates (ED A0–BF)
    if ((c === 0xe0 && c1 < 0xa0) || (c === 0xed && c1 > 0x9f)) return 0;
    return cont(1) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const c1 = b[i + 1] ?? 0;
    // no overlong forms (F0 80–8F), nothing past U+10FFFF (F4 90–BF)
    if ((c === 0xf0 && c1 < 0x90) || (c === 0xf4 && c1 > 0x8f)) return 0;
    return cont(1) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/**
 * `bytes` as text, each byte of an invalid sequence kept as the lone surrogate U+DC80–U+DCFF (Python's
 * "surrogateescape"): unlike U+FFFD, which is valid text, it stays detectable (`String#isWellFormed` is false),
 * so whatever holds it can be refused by name later.
 */
export function decodeKeepingBadBytes(bytes: Uint8Array): string {
  if (isUtf8(bytes)) return new TextDecoder().decode(bytes);
  const dec = new TextDecoder();
  let out = "";
  let start = 0;
  let i = 0;
  while (i < bytes.length) {
    const n = sequenceAt(bytes, i);
    if (n > 0) {
      i += n;
      continue;
    }
    out += dec.decode(bytes.subarray(start, i));
    out += String.fromCharCode(0xdc00 + bytes[i]!);
    i += 1;
    start = i;
  }
  return out + dec.decode(bytes.subarray(start));
}

/** What to say of text that is not valid: bytes that are not UTF-8, or a lone UTF-16 surrogate, are not text. */
export const NOT_TEXT =
  "is not valid text: it holds bytes that are not UTF-8 or a lone UTF-16 surrogate (an unpaired \\uD800–\\uDFFF), which would be stored as U+FFFD and change it";
