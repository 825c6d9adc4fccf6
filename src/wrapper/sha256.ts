// SHA-256 of a string's UTF-8 bytes (native, synchronous), for naming wrapper versions.

/** Lower-case hex SHA-256 of `input` (strings are hashed as UTF-8). Bun's hasher: node:crypto costs ms to load. */
export function sha256Hex(input: string | Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(input).digest("hex");
}
