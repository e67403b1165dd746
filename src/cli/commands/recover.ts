// sbx recover: observe every receipt in doubt once, record what was learned, and say
// what is resolved and what still needs a person. Never re-sends anything.

import { type Classification, IN_DOUBT } from "../../receipts/classifications.js";
import { explain, receiptDocument } from "../../receipts/document.js";
import type { ReceiptStore } from "../../receipts/store.js";
import type { RunFn } from "../command.js";
import type { Context } from "../context.js";
import { endpointOfReceipt } from "../dispatch.js";
import { ExitCodes } from "../../common/exit-codes.js";
import { observeOnce } from "../observe.js";
import { printJson } from "../render/outcome.js";
import { colorClassification } from "../render/receipt.js";
import { printTable } from "../render/table.js";

export interface RecoverRow {
  receipt_id: string;
  execution_id: string | null;
  process_id: string | null;
  request_id: string | null;
  was: string;
  now: string;
  resolved: boolean;
  outcome: string | null;
  exit: number | null;
  observed: string;
  next: string | null;
}

/** In doubt, or running: a read may have news about either. */
const TO_OBSERVE: readonly Classification[] = [...IN_DOUBT, "running"];

async function recoverOne(ctx: Context, store: ReceiptStore, receiptId: string): Promise<RecoverRow> {
  const before = store.get(receiptId);
  const was = before.receipt.classification;
  let observed: string;
  try {
    const api = await ctx.api(endpointOfReceipt(ctx, before));
    const c = await observeOnce(ctx, api, before, "recover", 0);
    observed = c.classification ?? `nothing learned (${c.error?.code ?? "no answer"})`;
  } catch (err) {
    observed = `backend unreachable (${(err as Error).message})`;
  }
  const doc = receiptDocument(store.get(receiptId));
  const resolved = !TO_OBSERVE.includes(doc.classification);
  return {
    receipt_id: receiptId,
    execution_id: doc.execution_id,
    process_id: doc.process_id,
    request_id: doc.request_id,
    was,
    now: doc.classification,
    resolved,
    outcome: doc.outcome,
    exit: doc.exit,
    observed,
    next: resolved ? null : explain(doc).replace(/^sbx: /, ""),
  };
}

export async function run(opts: { json: boolean }, ctx: Context): Promise<number> {
  const store = await ctx.receipts();
  const toObserve = store.list({ classification: TO_OBSERVE }).map((r) => r.receipt.receipt_id);
  const rows: RecoverRow[] = [];
  for (const id of toObserve.reverse()) rows.push(await recoverOne(ctx, store, id));
  // Running: the backend knows where they are; only what is still in doubt needs a person.
  const running = rows.filter((r) => r.now === "running");
  const stillInDoubt = rows.filter((r) => !r.resolved && r.now !== "running");
  if (opts.json) {
    printJson(ctx, { resolved: rows.filter((r) => r.resolved), running, in_doubt: stillInDoubt });
  } else if (rows.length === 0) {
    ctx.io.info("sbx: no receipts in doubt");
  } else {
    const { chalk } = ctx.io;
    await printTable(
      ctx.io,
      ["RECEIPT", "WAS", "NOW", "EXIT", "NEXT"],
      rows.map((r) => [
        r.receipt_id,
        r.was,
        colorClassification(chalk, r.now as never),
        r.exit === null ? "-" : String(r.exit),
        r.resolved ? "resolved" : (r.next ?? ""),
      ]),
    );
    ctx.io.info(
      `sbx: ${rows.length - stillInDoubt.length - running.length} resolved, ${running.length} running, ${stillInDoubt.length} still in doubt`,
    );
  }
  return stillInDoubt.length === 0 ? ExitCodes.ok : ExitCodes.inDoubt;
}

/** Bound to `sbx recover` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ json: c.optsWithGlobals().json === true }, ctx);
