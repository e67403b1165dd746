// Waiting for a receipt store another process holds. Each statement waits only a
// moment for SQLite's lock (the wait blocks the event loop); between tries sbx
// sleeps asynchronously, so Ctrl-C and progress lines still work, for up to
// SBX_STORE_WAIT (default 2m) in all. Many concurrent sbx processes (parallel CI
// jobs) take turns this way; a user's `sqlite3 receipts.db` session is waited out.

import { setTimeout as sleep } from "node:timers/promises";
import { ReceiptStoreBusy } from "../receipts/errors.js";
import type { Context } from "./context.js";
import { formatDuration, parseDuration } from "../common/duration.js";
import { ExitCodes } from "../common/exit-codes.js";
import { SbxError } from "../common/errors.js";

/** How long one SQLite statement waits for the lock before sbx sleeps and tries again. */
export const STATEMENT_BUSY_MS = 250;
export const DEFAULT_STORE_WAIT_MS = 120_000;
/** After this long waiting, sbx says why it is not moving. */
const SAY_AFTER_MS = 1000;

/** SBX_STORE_WAIT (a duration such as 30s or 5m), else the default. */
export function storeWaitMs(env: NodeJS.ProcessEnv): number {
  const text = env.SBX_STORE_WAIT;
  if (text === undefined || text.trim() === "") return DEFAULT_STORE_WAIT_MS;
  const ms = parseDuration(text);
  if (ms === null)
    throw new SbxError("config", `SBX_STORE_WAIT=${JSON.stringify(text)} is not a duration (e.g. 30s, 5m)`, {
      exitCode: ExitCodes.usage,
    });
  return ms;
}

/**
 * Runs a unit of work on the store, trying again while another process holds the
 * store's lock. Throws ReceiptStoreBusy (with how long it waited) once the wait is
 * over, and SbxError `interrupted` on Ctrl-C.
 */
/** Contexts (commands) that said once already that they wait for the store. */
const told = new WeakSet<Context>();

export async function whileStoreBusy<T>(ctx: Context, file: string, work: () => T): Promise<T> {
  const limit = storeWaitMs(ctx.env);
  const started = Date.now();
  let pause = 25;
  for (;;) {
    try {
      return work();
    } catch (err) {
      if (!(err instanceof ReceiptStoreBusy)) throw err;
      const waited = Date.now() - started;
      if (waited >= limit) throw new ReceiptStoreBusy(file, waited);
      if (!told.has(ctx) && waited >= SAY_AFTER_MS) {
        told.add(ctx);
        ctx.io.info(
          `sbx: the receipt store ${file} is busy (another process holds it); waiting up to ${formatDuration(limit)}…`,
        );
      }
      try {
        await sleep(Math.min(pause, limit - waited), undefined, { signal: ctx.interrupt });
      } catch {
        throw new SbxError("interrupted", `interrupted while waiting for the receipt store ${file}`, {
          exitCode: ExitCodes.cancelled,
        });
      }
      pause = Math.min(pause * 2, 1000);
    }
  }
}
