// Sending a mutation with a receipt: the receipt (key, exact body bytes) is committed
// first, the request is sent exactly once, and whatever comes back (or does not) is
// classified and appended as an observation.

import type { Api } from "../client/api.js";
import { paths as apiPaths } from "../client/api.js";
import { type Endpoint, parseApiUrl } from "../client/endpoint.js";
import { LOCAL_PROFILE } from "../config/config.js";
import { type Classified, classifyObservation, type Observed, type RequestKind } from "../receipts/classify.js";
import { jobPaths } from "../client/jobs.js";
import { processPaths } from "../client/processes.js";
import { type FollowResult, type FollowSinks, followExecution } from "../client/follow.js";
import { type ReceiptDocument, receiptDocument } from "../receipts/document.js";
import type { ReceiptStore, StoredReceipt } from "../receipts/store.js";
import type { Context } from "./context.js";

export interface DispatchOutcome {
  receiptId: string;
  attempt: number;
  classified: Classified;
  document: ReceiptDocument;
}

export interface StreamOptions {
  sinks?: FollowSinks;
  /** Return once the execution has started (it keeps running). */
  detach?: boolean;
  /** Called once the receipt is committed, just before the request is sent (for --verbose). */
  beforeSend?: (receiptId: string, path: string) => void;
}

async function sendOnce(
  ctx: Context,
  store: ReceiptStore,
  api: Api,
  receiptId: string,
  attempt: number,
  req: { kind: RequestKind; path: string; body: Buffer; key: string; clientTimeoutMs: number; sandbox: string },
  streaming: StreamOptions = {},
): Promise<DispatchOutcome> {
  const deadlineAt = Date.now() + req.clientTimeoutMs;
  // Ask for an event stream only when the body asks the backend for one.
  const send = asksForStream(req.body) ? api.http.openStream.bind(api.http) : api.http.send.bind(api.http);
  let observed: Observed;
  try {
    const opened = await send({
      method: "POST",
      path: req.path,
      body: req.body,
      // A jobs submission carries its identity in the body (request_id), not in a header.
      ...(req.kind === "jobs_submit" ? {} : { idempotencyKey: req.key }),
      deadlineMs: req.clientTimeoutMs,
      signal: ctx.interrupt,
    });
    if (opened.kind !== "sse") {
      observed = opened;
    } else {
      const sinks = streaming.sinks ?? {};
      const followed = await followExecution({
        http: api.http,
        sandbox: req.sandbox,
        executionId: null,
        idempotencyKey: req.key,
        first: opened,
        after: null,
        deadlineAt,
        signal: ctx.interrupt,
        stopAfterStarted: streaming.detach === true,
        sinks: {
          ...sinks,
          onStarted: (eid) => {
            store.noteExecutionId(receiptId, eid);
            sinks.onStarted?.(eid);
          },
        },
      });
      observed = streamObservation(followed);
    }
  } catch (err) {
    // Something of ours failed after the request went out: the receipt must still say
    // "it may have run", never stay without an answer.
    const failure = classifyObservation(
      { kind: "transport", sent: true, code: "client_error", message: (err as Error).message },
      "dispatch",
      req.kind,
    );
    store.recordObservation(receiptId, "answer", failure, { attempt });
    throw err;
  }
  const classified = classifyObservation(observed, "dispatch", req.kind);
  store.recordObservation(receiptId, "answer", classified, { attempt });
  return { receiptId, attempt, classified, document: receiptDocument(store.get(receiptId)) };
}

function asksForStream(body: Buffer): boolean {
  try {
    return (JSON.parse(body.toString("utf8")) as { stream?: unknown }).stream === true;
  } catch {
    return false;
  }
}

/** What following a stream observed, for the classifier. */
export function streamObservation(f: FollowResult): Observed {
  if (f.how === "started" && f.executionId !== null) return { kind: "started", execution_id: f.executionId };
  if (f.how === "deadline" || f.how === "interrupted") {
    return { kind: "deadline", sent: true, ...(f.how === "interrupted" ? { interrupted: true } : {}) };
  }
  return {
    kind: "stream",
    execution_id: f.executionId,
    exit: f.exit,
    stdout: f.stdout.bytes().toString("utf8"),
    stderr: f.stderr.bytes().toString("utf8"),
    stdout_truncated: f.stdout.truncated,
    stderr_truncated: f.stderr.truncated,
  };
}

/**
 * The first send of a mutation: the receipt (key, exact body bytes, where it goes)
 * is committed, then the request is sent once.
 */
export async function dispatchNew(
  ctx: Context,
  endpoint: Endpoint,
  api: Api,
  req: { kind: RequestKind; sandbox: string; body: Buffer; key: string; clientTimeoutMs: number },
  streaming: StreamOptions = {},
): Promise<DispatchOutcome> {
  const store = await ctx.receipts();
  const path = pathFor(req.kind, req.sandbox);
  const row = store.createForDispatch({
    kind: req.kind,
    profile: endpoint.profile,
    apiUrl: endpoint.apiUrl,
    sandbox: req.sandbox,
    idempotencyKey: req.key,
    method: "POST",
    path,
    body: req.body,
  });
  streaming.beforeSend?.(row.receipt_id, path);
  return sendOnce(ctx, store, api, row.receipt_id, 1, { ...req, path }, streaming);
}

function pathFor(kind: RequestKind, sandbox: string): string {
  switch (kind) {
    case "execute":
      return apiPaths.execute(sandbox);
    case "process_start":
      return processPaths.processes(sandbox);
    case "jobs_submit":
      return jobPaths.jobs(sandbox);
  }
}

/** An explicit re-send: the original key and the original body bytes, as a new attempt. */
export async function resubmit(
  ctx: Context,
  stored: StoredReceipt,
  api: Api,
  clientTimeoutMs: number,
): Promise<DispatchOutcome> {
  const store = await ctx.receipts();
  const r = stored.receipt;
  const attempt = store.beginAttempt(r.receipt_id);
  return sendOnce(ctx, store, api, r.receipt_id, attempt, {
    kind: r.kind,
    path: r.path,
    body: r.body,
    key: r.idempotency_key,
    clientTimeoutMs,
    sandbox: r.sandbox_id,
  });
}

/**
 * The backend a receipt was sent to, whatever the current profile is: observations
 * and resubmits must go where the original went.
 */
export function endpointOfReceipt(ctx: Context, stored: StoredReceipt): Endpoint {
  const r = stored.receipt;
  const u = parseApiUrl(r.api_url);
  const apiKey = ctx.env.SBX_API_KEY || ctx.config.readApiKey(r.profile) || null;
  const autoStart = r.profile === LOCAL_PROFILE && u.socketPath === ctx.paths.socketPath;
  return { profile: r.profile, ...u, apiKey, autoStart };
}

/** The exec timeout stored in a receipt's body, for a default client deadline. */
export function storedTimeoutMs(stored: StoredReceipt): number | null {
  try {
    const body = JSON.parse(stored.receipt.body.toString("utf8")) as { timeout?: unknown };
    return typeof body.timeout === "number" ? body.timeout : null;
  } catch {
    return null;
  }
}
