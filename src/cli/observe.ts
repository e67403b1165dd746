// Observing an execution without repeating it: by execution id when one was
// received, else by idempotency key. Only reads; never a POST.

import type { Api } from "../client/api.js";
import { processPaths } from "../client/processes.js";
import { type Classified, classifyObservation, type HttpObserved } from "../receipts/classify.js";
import type { ObservationSource, StoredReceipt } from "../receipts/store.js";
import { WAIT_MAX_MS } from "../protocol/types.js";
import type { Context } from "./context.js";

/** Turns the list answer of a key lookup into an observation of its one item, if any. */
export function firstOfList(obs: HttpObserved, field: "executions" | "processes"): HttpObserved | { kind: "none" } {
  if (obs.kind !== "answer" || obs.status < 200 || obs.status >= 300) return obs;
  try {
    const doc = JSON.parse(obs.body) as Record<string, unknown[] | undefined>;
    const first = doc[field]?.[0];
    if (first === undefined) return { kind: "none" };
    return { ...obs, body: JSON.stringify(first) };
  } catch {
    return obs;
  }
}

/** One read of the execution behind a receipt, recorded as an observation. */
export async function observeOnce(
  ctx: Context,
  api: Api,
  stored: StoredReceipt,
  source: Exclude<ObservationSource, "dispatch" | "answer">,
  waitMs: number,
): Promise<Classified> {
  const store = await ctx.receipts();
  const r = stored.receipt;
  const executionId = r.execution_id;
  let classified: Classified;
  const deadlineMs = waitMs + 15_000;
  const nothingForKey: Classified = classifyObservation(
    {
      kind: "transport",
      sent: true,
      code: "nothing_for_key",
      message: "the backend knows nothing created by this key",
    },
    "read",
  );
  if (r.kind === "process_start") {
    const path = executionId
      ? processPaths.process(r.sandbox_id, executionId)
      : `${processPaths.processes(r.sandbox_id)}?idempotency_key=${encodeURIComponent(r.idempotency_key)}`;
    const answer = await api.http.send({ method: "GET", path, deadlineMs });
    const found = executionId ? answer : firstOfList(answer, "processes");
    classified = found.kind === "none" ? nothingForKey : classifyObservation(found, "read", "process_start");
  } else if (executionId) {
    classified = classifyObservation(await api.observeExecution(r.sandbox_id, executionId, waitMs, deadlineMs), "read");
  } else {
    const found = firstOfList(await api.findExecutionByKey(r.sandbox_id, r.idempotency_key, deadlineMs), "executions");
    classified = found.kind === "none" ? nothingForKey : classifyObservation(found, "read");
  }
  store.recordObservation(r.receipt_id, source, classified);
  return classified;
}

/**
 * Observes until the receipt is settled or the deadline passes. Server-side waits
 * of at most 50 s, repeated. Returns the last classification observed.
 */
export async function waitUntilSettled(
  ctx: Context,
  api: Api,
  receiptId: string,
  deadlineMs: number,
  onProgress?: (c: Classified) => void,
): Promise<void> {
  const store = await ctx.receipts();
  const until = Date.now() + deadlineMs;
  for (;;) {
    const stored = store.get(receiptId);
    const left = until - Date.now();
    if (left <= 0 || ctx.interrupt.aborted) return;
    const waitMs = stored.receipt.execution_id ? Math.min(WAIT_MAX_MS, Math.max(0, left - 1000)) : 0;
    const c = await observeOnce(ctx, api, stored, "wait", waitMs);
    onProgress?.(c);
    // Settled: confirmed, or terminal at the backend (outcome unknown will not change).
    if (c.definitive || (c.outcome !== null && c.outcome !== "pending" && !c.record_pending)) return;
    // Key lookups and failed reads have no server-side wait: pace them.
    if (waitMs === 0 || c.classification === null) {
      await new Promise((r) => setTimeout(r, Math.min(1000, Math.max(0, until - Date.now()))));
    }
  }
}
