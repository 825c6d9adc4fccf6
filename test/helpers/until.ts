// The one poll-until of the tests: wait on a condition with a deadline (no fixed sleeps), saying what timed out.

/** Polls `check` until it returns a truthy value or the deadline passes (then throws naming `what`). */
export async function until<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`);
    await Bun.sleep(everyMs);
  }
}
