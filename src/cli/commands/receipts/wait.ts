// sbx receipts wait: observe until the execution is settled. Never POSTs.

import { receiptDocument } from "../../../receipts/document.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { endpointOfReceipt } from "../../dispatch.js";
import { durationOption } from "../../duration.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { formatDuration } from "../../../common/duration.js";
import { printExactOutput } from "../../exact-output.js";
import { type WaitEnd, waitUntilSettled } from "../../observe.js";
import { printDispatchOutcome } from "../../render/outcome.js";
import type { Classified } from "../../../receipts/classify.js";
import { RECEIPTS_WAIT_DEFAULT_MS, SERVER_ERRORS_IN_A_ROW } from "../../wait-bounds.js";

export interface WaitOptions {
  ref: string;
  timeoutMs: number;
  json: boolean;
}

export function parseWaitOptions(ref: string, raw: { timeout?: string; json?: boolean }): WaitOptions {
  const timeoutMs = raw.timeout === undefined ? RECEIPTS_WAIT_DEFAULT_MS : durationOption("--timeout", raw.timeout);
  return { ref, timeoutMs, json: raw.json === true };
}

export async function run(opts: WaitOptions, ctx: Context): Promise<number> {
  const store = await ctx.receipts();
  const id = store.resolve(opts.ref);
  const stored = store.get(id);
  const api = await ctx.api(endpointOfReceipt(ctx, stored));
  // Bounded, and said: what is waited for, and for how long at most.
  ctx.io.info(
    `sbx: waiting up to ${formatDuration(opts.timeoutMs)} for ${id} to settle (it is ${stored.receipt.classification}; --timeout to change)`,
  );
  const progress = ctx.io.progress(`waiting for ${id}…`, { elapsed: true });
  let end: WaitEnd;
  let last: Classified | null = null;
  try {
    end = await waitUntilSettled(ctx, api, id, opts.timeoutMs, (c) => {
      last = c;
      progress.update(`waiting for ${id} (${c.classification ?? "no answer"})…`);
    });
  } finally {
    progress.stop();
  }
  const doc = receiptDocument(store.get(id));
  if (end === "unknown_to_backend") {
    ctx.io.err(`sbx: the backend does not know the execution of ${id} (it may never have arrived, or it was purged)`);
  } else if (end === "server_failing") {
    ctx.io.err(
      `sbx: stopped waiting: the backend answered ${answerText(last)} ${SERVER_ERRORS_IN_A_ROW} times in a row; ${id} is still ${doc.classification} (\`sbx daemon status\` says why a local backend fails)`,
    );
  } else if (end === "deadline") {
    ctx.io.err(`sbx: stopped waiting after ${opts.timeoutMs / 1000}s; ${id} is still ${doc.classification}`);
  }
  if (!opts.json) await printExactOutput(ctx, api, doc);
  const code = printDispatchOutcome(ctx, doc, opts.json, { outputShown: !opts.json });
  return end === "interrupted" ? ExitCodes.cancelled : code;
}

/** A failing answer as the backend gave it: its status, code and message. */
function answerText(c: Classified | null): string {
  if (c === null) return "a failure";
  const status = c.http_status === null ? "" : `${c.http_status}`;
  return c.error === null ? status : `${status} ${c.error.code}: ${c.error.message}`;
}

/** Bound to `sbx receipts wait` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseWaitOptions(c.args[0]!, c.optsWithGlobals()), ctx);
