// Waiting for a condition instead of sleeping: polls until it holds, or fails saying what it waited for.

import os from "node:os";

/**
 * A wait's deadline only keeps a broken test from hanging; it is not a claim about speed.
 * On a machine loaded past its cores (a CI host shared with other work: load 25 on 2 cores
 * was seen) everything the test waits for takes longer in proportion, so the guard grows
 * with the load (at most 4 times; vitest's own 60 s per test still bounds the whole).
 */
function loadScale(): number {
  const [oneMinute = 0] = os.loadavg();
  const perCore = oneMinute / Math.max(1, os.availableParallelism());
  return Math.min(4, Math.max(1, perCore));
}

/** Polls `check` until it gives a value other than undefined or false, and returns that value. */
export async function until<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 5000,
  what = "condition",
): Promise<T> {
  const limitMs = Math.round(timeoutMs * loadScale());
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
