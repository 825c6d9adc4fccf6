// SHA-256 of a string's UTF-8 bytes (native, synchronous), for naming wrapper versions.
import { createHash } from "node:crypto";

/** Lower-case hex SHA-256 of `input` (strings are hashed as UTF-8). */
export function sha256Hex(input: string | Uint8Array): string {
  return createHash("sha256").update(input).digest("hex");
}
