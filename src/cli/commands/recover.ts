// sbx recover: observe every receipt in doubt once, record what was learned, and say
// what is resolved and what still needs a person. Never re-sends anything.

import { type Classification, IN_DOUBT } from "../../receipts/classifications.js";
import { explain, receiptDocument } from "../../receipts/document.js";
import { decidingObservation } from "../../receipts/classify.js";
import type { ReceiptStore, StoredReceipt } from "../../receipts/store.js";
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

/** In doubt, running, or admitted jobs: a read may have news about each. */
const TO_OBSERVE: readonly Classification[] = [...IN_DOUBT, "running", "admitted"];

/**
 * Still going, not in doubt: running, or a submission whose jobs have not all ended
 * (its verdict is not settled). An admitted submission whose jobs all ended is resolved.
 */
function stillGoing(stored: StoredReceipt): boolean {
  const c = stored.receipt.classification;
  return c === "running" || (c === "admitted" && decidingObservation(stored.observations)?.definitive !== true);
}

async function recoverOne(
  ctx: Context,
  store: ReceiptStore,
  receiptId: string,
): Promise<RecoverRow & { going: boolean }> {
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
  const after = store.get(receiptId);
  const doc = receiptDocument(after);
  const going = stillGoing(after);
  const resolved = !IN_DOUBT.includes(doc.classification) && !going;
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
    going,
  };
}

export async function run(opts: { json: boolean }, ctx: Context): Promise<number> {
  const store = await ctx.receipts();
  const toObserve = store
    .list({ classification: TO_OBSERVE })
    .filter((r) => r.receipt.classification !== "admitted" || stillGoing(r))
    .map((r) => r.receipt.receipt_id);
  const all: Array<RecoverRow & { going: boolean }> = [];
  for (const id of toObserve.reverse()) all.push(await recoverOne(ctx, store, id));
  const rows: RecoverRow[] = all.map(({ going: _going, ...row }) => row);
  // Running (or jobs not ended): the backend knows where they are; only what is still in doubt needs a person.
  const running = rows.filter((_, i) => all[i]!.going);
  const stillInDoubt = rows.filter((r, i) => !r.resolved && !all[i]!.going);
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
