// What a receipt says, for a model: the classification, whether it may have run, and
// the next safe tool call, in the words the tools use (docs/agents.md, "Retries").

import { Type } from "@sinclair/typebox";
import type { Classification } from "../../receipts/classifications.js";
import { IN_DOUBT } from "../../receipts/classifications.js";
import { explain, type ReceiptDocument } from "../../receipts/document.js";
import type { DispatchOutcome } from "../dispatch.js";
import { Nullable } from "./tool.js";

export const ReceiptFields = {
  receipt_id: Type.String({ description: "The durable receipt of this call (rcp_…), written before it was sent." }),
  idempotency_key: Type.String({ description: "The key it was sent with: reuse it to retry this same call safely." }),
  classification: Type.String({
    description:
      "What sbx knows: succeeded/failed (a confirmed exit), admitted (jobs accepted; their ends are the jobs' own), timed_out, cancelled, running, not_started or rejected (nothing ran), or in doubt: outcome_unknown, result_unconfirmed, in_progress, record_pending, local_timeout, dispatched.",
  }),
  confirmed: Type.Boolean({ description: "The backend confirmed how it ended (or that it is running)." }),
  may_have_run: Type.Boolean({ description: "It may have run (true unless nothing ran for sure)." }),
  replayed: Type.Boolean({
    description: "The backend had this key already: this is the original execution, not a new one.",
  }),
  next_tool_call: Nullable(
    Type.String({ description: "The next safe step when the outcome is not settled; null when it is." }),
  ),
};

/** Classifications that end with the backend's word on it. */
const CONFIRMED: readonly Classification[] = ["succeeded", "admitted", "failed", "timed_out", "cancelled", "running"];

export function isInDoubt(c: Classification): boolean {
  return IN_DOUBT.includes(c);
}

/** The next safe tool call for a receipt that is not settled, in the tools' words. */
export function nextToolCall(
  doc: Pick<ReceiptDocument, "classification" | "receipt_id" | "idempotency_key" | "kind">,
): string | null {
  // A submission of jobs is known by its request id (a second send with it never admits twice).
  const key = `"${doc.kind === "jobs_submit" || doc.kind === "jobs_run" ? "request_id" : "idempotency_key"}": "${doc.idempotency_key}"`;
  if (isInDoubt(doc.classification)) {
    return `It may have run: do NOT run it again with a new key. Call receipt_show {"receipt_id": "${doc.receipt_id}", "refresh": true} to learn what became of it; to retry, send the same call with ${key}.`;
  }
  if (doc.classification === "not_started") {
    return `Nothing ran: retrying is safe; send the same call with ${key}.`;
  }
  return null;
}

export function receiptFields(outcome: Pick<DispatchOutcome, "document" | "replayed">) {
  const doc = outcome.document;
  return {
    receipt_id: doc.receipt_id,
    idempotency_key: doc.idempotency_key,
    classification: doc.classification,
    confirmed: CONFIRMED.includes(doc.classification),
    may_have_run: doc.may_have_run,
    replayed: outcome.replayed,
    next_tool_call: nextToolCall(doc),
  };
}

/** A result is a tool error when nothing ran or nobody can say what happened. */
export function failedCall(doc: ReceiptDocument): boolean {
  return doc.classification === "rejected" || doc.classification === "not_started" || isInDoubt(doc.classification);
}

/** The lines a model reads first about a receipt that did not settle: sbx's own, then the next tool call. */
export function unsettledText(doc: ReceiptDocument): string {
  const next = nextToolCall(doc);
  return [explain(doc), ...(next === null ? [] : [next])].join("\n");
}

/** Said when the answer came but the receipt store could not keep it. */
export function unrecordedText(outcome: DispatchOutcome): string {
  return outcome.unrecorded === null
    ? ""
    : `\nsbx: the answer could not be recorded in the receipt store (${outcome.unrecorded.message}); this result is the only copy.`;
}
