// Observing an execution without repeating it: by execution id when one was
// received, else by idempotency key. Only reads; never a POST.

import { setTimeout as sleep } from "node:timers/promises";
import type { Api } from "../client/api.js";
import { itemForKey, jobsOfRequest } from "../client/key-lookup.js";
import { routePath } from "../protocol/routes.js";
import { afterRead, type Classified, classifyObservation, RECORD_GONE } from "../receipts/classify.js";
import { isJobsKind, type JobSeen, jobsObservations, jobsOfBody } from "../receipts/classify-jobs.js";
import type { ObservationSource, StoredReceipt } from "../receipts/store.js";
import { WAIT_MAX_MS } from "../protocol/types.js";
import type { Context } from "./context.js";
import { isServerFailure, SERVER_ERRORS_IN_A_ROW } from "./wait-bounds.js";

/** One read of the execution behind a receipt, recorded as an observation. */
export async function observeOnce(
  ctx: Context,
  api: Api,
  stored: StoredReceipt,
  source: Exclude<ObservationSource, "dispatch" | "answer">,
  waitMs: number,
): Promise<Classified> {
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
  if (r.kind === "request") {
    // A file write, a signal, a stop...: nothing of it can be read back by its key. What
    // it changed says whether it happened; this read teaches nothing and sends nothing.
    classified = classifyObservation(
      {
        kind: "transport",
        sent: false,
        code: "not_observable",
        message: `a ${r.method} of ${r.path} cannot be read back: look at what it changed`,
      },
      "read",
    );
  } else if (isJobsKind(r.kind)) {
    // The request id is the submission's identity: read what it admitted, never submit again.
    const answer = await api.http.send({
      method: "GET",
      path: routePath("jobs.list", { id: r.sandbox_id }, { request_id: r.idempotency_key }),
      deadlineMs,
    });
    const found = jobsOfRequest(answer, r.idempotency_key);
    if (found.kind === "none") classified = nothingForKey;
    else {
      // What the jobs say of their ends is recorded as the jobs' own observations.
      if (found.kind === "answer" && found.status === 200) {
        const jobs = jobsOfBody(parseJson(found.body));
        if (jobs !== null) return recordJobs(ctx, stored, source, jobs, found.status);
      }
      classified = classifyObservation(found, "read", r.kind);
    }
  } else if (r.kind === "process_start") {
    const path = r.process_id
      ? routePath("process.get", { id: r.sandbox_id, pid: r.process_id })
      : routePath("processes.list", { id: r.sandbox_id }, { idempotency_key: r.idempotency_key });
    const answer = await api.http.send({ method: "GET", path, deadlineMs });
    const found = r.process_id ? answer : itemForKey(answer, "processes", r.idempotency_key);
    classified = found.kind === "none" ? nothingForKey : classifyObservation(found, "read", "process_start");
  } else if (executionId) {
    classified = classifyObservation(await api.observeExecution(r.sandbox_id, executionId, waitMs, deadlineMs), "read");
  } else {
    const found = itemForKey(
      await api.findExecutionByKey(r.sandbox_id, r.idempotency_key, deadlineMs),
      "executions",
      r.idempotency_key,
    );
    if (found.kind !== "answer" || found.status !== 200) {
      classified = found.kind === "none" ? nothingForKey : classifyObservation(found, "read");
    } else {
      // List items leave the output out: read the execution itself, now that its id is known.
      const id = (JSON.parse(found.body) as { execution_id: string }).execution_id;
      await ctx.storeWrite((s) => s.noteExecutionId(r.receipt_id, id));
      classified = classifyObservation(await api.observeExecution(r.sandbox_id, id, waitMs, deadlineMs), "read");
    }
  }
  // A running execution whose record is now gone will never be read back: say so, once.
  const previous = stored.observations.at(-1);
  classified = afterRead(r.classification, classified, previous ?? null);
  await ctx.storeWrite((s) => s.recordObservation(r.receipt_id, source, classified));
  return classified;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Records what a look at a submission's jobs showed (classify-jobs.ts: for `jobs run`
 * its job's outcome, for `jobs submit` each job's end once, then the verdict on them
 * all). Returns the verdict.
 */
export async function recordJobs(
  ctx: Context,
  stored: StoredReceipt,
  source: Exclude<ObservationSource, "dispatch" | "answer">,
  jobs: readonly JobSeen[],
  httpStatus: number | null,
): Promise<Classified> {
  const r = stored.receipt;
  if (!isJobsKind(r.kind)) throw new Error(`receipt ${r.receipt_id} is not a jobs submission`);
  const kind = r.kind;
  const recorded = new Set(stored.observations.filter((o) => o.job_id !== null).map((o) => `${o.job_id}:${o.outcome}`));
  const rows = jobsObservations(kind, r.idempotency_key, jobs, httpStatus, recorded);
  await ctx.storeWrite((s) => {
    for (const row of rows) s.recordObservation(r.receipt_id, source, row);
  });
  return rows.at(-1)!;
}

/** Why a wait ended. */
export type WaitEnd =
  | "settled"
  | "nothing_to_wait_for"
  | "unknown_to_backend"
  | "deadline"
  | "interrupted"
  /** The backend answered a failure (a 5xx) SERVER_ERRORS_IN_A_ROW times in a row (wait-bounds.ts). */
  | "server_failing";

/** Reads in a row that found nothing before a wait stops saying "still looking". */
const NOT_FOUND_LIMIT = 5;
/** Reads start at least this far apart, whatever the backend does with wait_ms… */
export const READ_PACE_MIN_MS = 1000;
/** …and further apart while nothing changes, up to this. */
export const READ_PACE_MAX_MS = 10_000;

/** The next gap between reads: it grows while reads come back at once with nothing new. */
export function nextReadGap(previousGapMs: number): number {
  return Math.min(READ_PACE_MAX_MS, Math.max(READ_PACE_MIN_MS, Math.round(previousGapMs * 1.5)));
}

/**
 * Observes until the receipt is settled or the deadline passes. Server-side waits
 * of at most 50 s, repeated; reads start at least a second apart, backing off while
 * a backend answers at once (one that ignores wait_ms, or a failing read).
 */
export async function waitUntilSettled(
  ctx: Context,
  api: Api,
  receiptId: string,
  deadlineMs: number,
  onProgress?: (c: Classified) => void,
): Promise<WaitEnd> {
  const store = await ctx.receipts();
  const until = Date.now() + deadlineMs;
  let notFound = 0;
  let serverErrors = 0;
  let gap = 0;
  for (;;) {
    const stored = store.get(receiptId);
    // Nothing ran (not_started, rejected): there is no execution to wait for.
    if (stored.receipt.classification === "not_started" || stored.receipt.classification === "rejected") {
      return "nothing_to_wait_for";
    }
    const left = until - Date.now();
    if (ctx.interrupt.aborted) return "interrupted";
    if (left <= 0) return "deadline";
    const waitMs = stored.receipt.execution_id ? Math.min(WAIT_MAX_MS, Math.max(0, left - 1000)) : 0;
    const startedAt = Date.now();
    const c = await observeOnce(ctx, api, stored, "wait", waitMs);
    onProgress?.(c);
    // Settled: confirmed, or terminal at the backend (outcome unknown will not change).
    if (c.definitive || (c.outcome !== null && c.outcome !== "pending" && !c.record_pending)) return "settled";
    // Its record is gone: nothing more will be learned by asking again.
    if (c.error?.code === RECORD_GONE) return "settled";
    const missing = c.http_status === 404 || c.error?.code === "nothing_for_key";
    notFound = missing ? notFound + 1 : 0;
    if (notFound >= NOT_FOUND_LIMIT) return "unknown_to_backend";
    serverErrors = isServerFailure(c.http_status) ? serverErrors + 1 : 0;
    if (serverErrors >= SERVER_ERRORS_IN_A_ROW) return "server_failing";
    // A read that took its time (a server-side wait) needs no pause; one that came back at once does.
    const took = Date.now() - startedAt;
    gap = took >= READ_PACE_MIN_MS ? 0 : nextReadGap(gap);
    const pause = Math.min(gap, until - Date.now());
    if (pause > 0) {
      try {
        await sleep(pause, undefined, { signal: ctx.interrupt });
      } catch {
        return "interrupted";
      }
    }
  }
}
