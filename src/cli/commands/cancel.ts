// sbx cancel: ask the backend to cancel an execution; report termination only once
// the outcome really is `cancelled`.

import { randomUUID } from "../../platform/random.js";
import { TERMINAL_OUTCOMES } from "../../protocol/types.js";
import { classifyObservation } from "../../receipts/classify.js";
import { receiptBoot } from "../../receipts/document.js";
import type { RunFn } from "../command.js";
import type { Context } from "../context.js";
import { durationOption } from "../duration.js";
import { ExitCodes } from "../../common/exit-codes.js";
import { SbxError } from "../../common/errors.js";
import { resolveExecution } from "../execution-ref.js";
import { printJson } from "../render/outcome.js";

export interface CancelOptions {
  ref: string;
  sandbox: string | undefined;
  reason: string | undefined;
  wait: boolean;
  timeoutMs: number;
  json: boolean;
}

export function parseCancelOptions(
  ref: string,
  raw: { sandbox?: string; reason?: string; wait?: boolean; timeout?: string; json?: boolean },
): CancelOptions {
  const timeoutMs = raw.timeout === undefined ? 60_000 : durationOption("--timeout", raw.timeout);
  return { ref, sandbox: raw.sandbox, reason: raw.reason, wait: raw.wait === true, timeoutMs, json: raw.json === true };
}

export async function run(opts: CancelOptions, ctx: Context): Promise<number> {
  const target = await resolveExecution(ctx, opts.ref, opts.sandbox);
  // Found through its receipt: the boot the receipt kept goes with it (docs/protocol.md, "Ownership fences").
  const boot = target.receipt === null ? null : receiptBoot(target.receipt.observations);
  const ack = await target.api.cancelExecution(
    target.sandbox,
    target.executionId,
    opts.reason,
    `sbx-cancel-${randomUUID()}`,
    boot ?? undefined,
  );
  let record = await target.api.getExecution(target.sandbox, target.executionId);
  if (opts.wait && !TERMINAL_OUTCOMES.includes(record.outcome)) {
    const until = Date.now() + opts.timeoutMs;
    const progress = ctx.io.stderrIsTTY ? ctx.io.info : () => undefined;
    progress(`sbx: cancel requested for ${target.executionId}; waiting for it to end…`);
    while (!TERMINAL_OUTCOMES.includes(record.outcome) && Date.now() < until && !ctx.interrupt.aborted) {
      record = await target.api.getExecution(
        target.sandbox,
        target.executionId,
        Math.min(50_000, Math.max(1000, until - Date.now())),
      );
    }
  }
  // What was learned goes on the receipt, as any read's observation would.
  const receiptId = target.receipt?.receipt.receipt_id;
  if (receiptId !== undefined) {
    const learned = classifyObservation(
      { kind: "answer", status: 200, headers: {}, body: JSON.stringify(record) },
      "read",
      target.receipt!.receipt.kind,
    );
    await ctx.storeWrite((store) => store.recordObservation(receiptId, "cancel", learned));
  }
  const terminal = TERMINAL_OUTCOMES.includes(record.outcome);
  const state =
    record.outcome === "cancelled" ? "cancelled" : terminal ? `already ${record.outcome}` : "cancel requested";
  if (opts.json) {
    printJson(ctx, {
      execution_id: target.executionId,
      receipt_id: target.receipt?.receipt.receipt_id ?? null,
      cancel: ack.cancel,
      state,
      outcome: record.outcome,
      exit_code: record.exit_code,
      signal: record.signal,
    });
  } else {
    ctx.io.out(`${target.executionId}\t${state}`);
    if (!terminal) ctx.io.info(`sbx: not ended yet; wait with: sbx cancel ${opts.ref} --wait`);
  }
  if (opts.wait && !terminal) {
    throw new SbxError("cancel_not_confirmed", `${target.executionId} had not ended after ${opts.timeoutMs / 1000}s`, {
      exitCode: ExitCodes.inDoubt,
      hint: `sbx receipts wait ${target.receipt?.receipt.receipt_id ?? target.executionId}`,
    });
  }
  return ExitCodes.ok;
}

/** Bound to `sbx cancel` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseCancelOptions(c.args[0]!, c.optsWithGlobals()), ctx);
