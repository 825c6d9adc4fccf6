// The syntax of queue names and resource locks: what a directory entry and an unquoted shell word carry safely.

/** Queue names: 1–64 of A-Z a-z 0-9 . _ - */
export const QUEUE_NAME_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** A resource lock: NAME=VALUE, each part like a queue name (e.g. gpu=0). */
export const RESOURCE_RE = /^[A-Za-z0-9._-]{1,64}=[A-Za-z0-9._-]{1,64}$/;

/** A job array's private queue is `array.<ARRAY_ID>` (queues/array-queues.ts). */
export const ARRAY_QUEUE_PREFIX = "array.";
const PREFIX = ARRAY_QUEUE_PREFIX;

/** The array whose private queue this is (its ID), or undefined for a named queue. */
export function arrayOfQueue(name: string): string | undefined {
  return name.startsWith(PREFIX) ? name.slice(PREFIX.length) : undefined;
}
