// Canonical JSON (sorted keys, no whitespace) and SHA-256: the basis of fingerprints and result snapshots.

/**
 * JSON with object keys sorted (by UTF-16 code units, recursively) and no whitespace. Otherwise it
 * follows JSON.stringify: undefined, functions and symbols are dropped from objects and become null in
 * arrays, non-finite numbers become null, `toJSON` is honoured, bigint and cycles throw.
 */
export function canonicalJson(value: unknown): string {
  const out = encode(value, new Set(), "");
  if (out === undefined)
    throw new TypeError("canonicalJson: the value has no JSON form (undefined, function or symbol)");
  return out;
}

function encode(value: unknown, ancestors: Set<object>, key: string): string | undefined {
  let v = value;
  if (v !== null && typeof v === "object" && typeof (v as { toJSON?: unknown }).toJSON === "function") {
    v = (v as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  switch (typeof v) {
    case "string":
    case "boolean":
      return JSON.stringify(v);
    case "number":
      return Number.isFinite(v) ? JSON.stringify(v) : "null";
    case "bigint":
      throw new TypeError(
        "canonicalJson: bigint values have no JSON form; convert them to strings or numbers first",
      );
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (v === null) return "null";
  const obj = v as object;
  if (ancestors.has(obj)) throw new TypeError("canonicalJson: the value contains a cycle");
  ancestors.add(obj);
  try {
    if (Array.isArray(obj)) {
      return `[${obj.map((item, i) => encode(item, ancestors, String(i)) ?? "null").join(",")}]`;
    }
    const fields: string[] = [];
    for (const k of Object.keys(obj).sort()) {
      const encoded = encode((obj as Record<string, unknown>)[k], ancestors, k);
      if (encoded !== undefined) fields.push(`${JSON.stringify(k)}:${encoded}`);
    }
    return `{${fields.join(",")}}`;
  } finally {
    ancestors.delete(obj);
  }
}

/** Lower-case hex SHA-256 of a string (as UTF-8) or bytes (Bun's hasher: loading node:crypto costs every start ms). */
export function sha256Hex(data: string | Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(data).digest("hex");
}
