// Compact MCP answers (PROTOCOL.md "Waiting and delivery"): a wait-like result over MCP leaves out what says nothing.

/** `null`, `""`, `[]` and `{}`: what a reader of a compact answer takes an absent field to be. */
export function isEmptyValue(value: unknown): boolean {
  if (value === null || value === undefined || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === "object" && Object.keys(value).length === 0;
}

/**
 * A wait-like answer or terminal result as MCP sends it: its top-level fields that are null or empty are left out,
 * and so is `job_state` when it equals `state`. Nested values stay as they are (a parsed artifact's `null` is data).
 * Every other field passes through, whatever it is, so fields added to results reach MCP with no change here.
 */
export function compactAnswer<T extends object>(answer: T): Partial<T> {
  const record = answer as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (isEmptyValue(value)) continue;
    if (key === "job_state" && value === record.state) continue;
    out[key] = value;
  }
  return out as Partial<T>;
}
