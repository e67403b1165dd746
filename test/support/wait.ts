// Waiting for a condition instead of sleeping: polls until it holds, or fails saying what it waited for.

import { loadScale } from "./load.js";

// A wait's deadline only keeps a broken test from hanging; it is not a claim about speed:
// it grows with the machine's load (at most 4 times; test/support/load.ts), and vitest's own
// per-test timeout (vitest.config.ts) still bounds the whole.

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
