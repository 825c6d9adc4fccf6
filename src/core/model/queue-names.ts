// The syntax of queue names and resource locks: what a directory entry and an unquoted shell word carry safely.

/** Queue names: 1–64 of A-Z a-z 0-9 . _ - */
export const QUEUE_NAME_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** A resource lock: NAME=VALUE, each part like a queue name (e.g. gpu=0). */
export const RESOURCE_RE = /^[A-Za-z0-9._-]{1,64}=[A-Za-z0-9._-]{1,64}$/;
