// Compact MCP answers (docs/protocol.md, "Waiting and delivery"): a wait-like result over MCP leaves out what says nothing.

/** `null`, `""`, `[]` and `{}`: what a reader of a compact answer takes an absent field to be. */
export function isEmptyValue(value: unknown): boolean {
  if (value === null || value === undefined || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === "object" && Object.keys(value).length === 0;
}

/** Empty, `false` or `0`: a field a compact answer leaves out (a reader takes its absence for exactly that). */
const saysNothing = (value: unknown): boolean => value === false || value === 0 || isEmptyValue(value);

/** Our own objects inside a result, compacted by the same rule; every other nested value (parsed data, artifacts, error) stays whole. */
const COMPACTED_OBJECTS = new Set(["leftovers", "resources"]);

/** One level of an object without the fields that say nothing; `exit_code` stays unless null (0 is the result). */
function withoutSilentFields(record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === "exit_code" ? value === null || value === undefined : saysNothing(value)) continue;
    out[key] = value;
  }
  return out;
}

/**
 * A wait-like answer or terminal result as MCP sends it. Left out: fields that are null or empty, `false` or `0`
 * (except `exit_code`), the same inside `leftovers` and `resources`; `leftovers` whole when its count is 0 (nothing
 * was left); `job_state` when it equals `state`; `descendants_alive` when `leftovers` exists (it is derived from it);
 * `waited_seconds` once the wait is complete (the result's own times say how long the job took).
 * Every other field passes through, whatever it is, so fields added to results reach MCP with no change here.
 */
export function compactAnswer<T extends object>(answer: T): Partial<T> {
  const record = answer as Record<string, unknown>;
  const hasLeftovers = typeof record.leftovers === "object" && record.leftovers !== null;
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(withoutSilentFields(record))) {
    if (key === "job_state" && raw === record.state) continue;
    if (key === "descendants_alive" && hasLeftovers) continue;
    if (key === "waited_seconds" && record.wait_state === "complete") continue;
    const value =
      COMPACTED_OBJECTS.has(key) && typeof raw === "object" && !Array.isArray(raw)
        ? withoutSilentFields(raw as Record<string, unknown>)
        : raw;
    if (key === "leftovers" && (raw as { count?: unknown }).count === 0) continue;
    if (isEmptyValue(value)) continue;
    out[key] = value;
  }
  return out as Partial<T>;
}
