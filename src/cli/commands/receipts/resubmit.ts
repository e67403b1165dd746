import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { endpointOfReceipt, resubmit, storedTimeoutMs } from "../../dispatch.js";
import { durationOption } from "../../duration.js";
import { UsageError } from "../../../common/errors.js";
import { printExactOutput } from "../../exact-output.js";
import { answerNotRecorded, printDispatchOutcome } from "../../render/outcome.js";

export interface ResubmitOptions {
  ref: string;
  clientTimeoutMs: number | null;
  force: boolean;
  json: boolean;
}

/** Receipts whose result is known, kept (record_pending) or coming (running): sending again is refused without --force. */
const SETTLED = ["record_pending", "running", "succeeded", "failed", "timed_out", "cancelled"];

export function parseResubmitOptions(
  ref: string,
  raw: { clientTimeout?: string; force?: boolean; json?: boolean },
): ResubmitOptions {
  const clientTimeoutMs =
    raw.clientTimeout === undefined ? null : durationOption("--client-timeout", raw.clientTimeout);
  return { ref, clientTimeoutMs, force: raw.force === true, json: raw.json === true };
}

export async function run(opts: ResubmitOptions, ctx: Context): Promise<number> {
  const store = await ctx.receipts();
  const stored = store.get(store.resolve(opts.ref));
  const clientTimeoutMs = opts.clientTimeoutMs ?? (storedTimeoutMs(stored) ?? 120_000) + 30_000;
  const current = stored.receipt.classification;
  if (SETTLED.includes(current) && !opts.force) {
    throw new UsageError(
      current === "record_pending"
        ? `${stored.receipt.receipt_id} is record_pending: it ran and its result is kept; do not resubmit`
        : current === "running"
          ? `${stored.receipt.receipt_id} is running; its result is coming`
          : `${stored.receipt.receipt_id} is already ${current}; its result is known`,
      current === "record_pending" || current === "running"
        ? `wait for it: sbx receipts wait ${stored.receipt.receipt_id}`
        : "--force sends it again anyway (a backend that keeps the key answers with the first result)",
    );
  }
  const api = await ctx.api(endpointOfReceipt(ctx, stored));
  const outcome = await resubmit(ctx, stored, api, clientTimeoutMs);
  ctx.io.info(`sbx: attempt #${outcome.attempt} of ${outcome.receiptId} (key ${stored.receipt.idempotency_key})`);
  if (!opts.json) await printExactOutput(ctx, api, outcome.document);
  const code = printDispatchOutcome(ctx, outcome.document, opts.json, { outputShown: !opts.json });
  if (outcome.unrecorded) throw answerNotRecorded(ctx, outcome.unrecorded, outcome.document, opts.json);
  return code;
}

/** Bound to `sbx receipts resubmit` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseResubmitOptions(c.args[0]!, c.optsWithGlobals()), ctx);
