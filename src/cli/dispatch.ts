// Sending a mutation with a receipt: the receipt (key, exact body bytes) is committed
// first, the request is sent exactly once, and whatever comes back (or does not) is
// classified and appended as an observation. A failure of the store after sending
// loses nothing: the answer is kept in memory and handed back as `unrecorded`.

import type { Api } from "../client/api.js";
import { type Endpoint, parseApiUrl } from "../client/endpoint.js";
import { type FollowResult, type FollowSinks, followExecution } from "../client/follow.js";
import { routePath } from "../protocol/routes.js";
import { LOCAL_PROFILE } from "../config/config.js";
import { REPLAYED_HEADER, REQUEST_BODY_MAX_BYTES } from "../protocol/types.js";
import { type Classified, classifyObservation, type Observed, type StartKind } from "../receipts/classify.js";
import { isJobsKind } from "../receipts/classify-jobs.js";
import { type ReceiptDocument, receiptDocument } from "../receipts/document.js";
import { ReceiptStoreBusy, ReceiptStoreUnusable } from "../receipts/errors.js";
import { observationRow, type ReceiptStore, type StoredReceipt } from "../receipts/store.js";
import type { Context } from "./context.js";
import { ExitCodes } from "../common/exit-codes.js";
import { SbxError, UsageError } from "../common/errors.js";
import { cancelOnFirstInterrupt } from "./interrupt-cancel.js";

export interface DispatchOutcome {
  receiptId: string;
  attempt: number;
  classified: Classified;
  document: ReceiptDocument;
  /**
   * Set when the answer could not be stored (disk full, store busy for too long):
   * `document` is then built in memory, and the caller must say so (exit 255).
   */
  unrecorded: Error | null;
  /** The backend answered with Idempotent-Replayed: it had this request already and did nothing new. */
  replayed: boolean;
}

export interface StreamOptions {
  sinks?: FollowSinks;
  /** Return once the execution has started (it keeps running). */
  detach?: boolean;
  /** Called once the receipt is committed, just before the request is sent (for --verbose). */
  beforeSend?: (receiptId: string, path: string) => void;
  /** Called when the local daemon is gone while a stream is followed: start it again (its recovery marks the execution). */
  revive?: () => Promise<boolean>;
  /** Aborted when sbx's stdout has no reader any more: stop following (it keeps running). */
  readerGone?: AbortSignal;
}

interface SendRequest {
  kind: StartKind;
  path: string;
  body: Buffer;
  key: string;
  clientTimeoutMs: number;
  sandbox: string;
}

function isStoreFailure(err: unknown): err is ReceiptStoreBusy | ReceiptStoreUnusable {
  return err instanceof ReceiptStoreBusy || err instanceof ReceiptStoreUnusable;
}

async function sendOnce(
  ctx: Context,
  api: Api,
  stored: StoredReceipt,
  attempt: number,
  req: SendRequest,
  streaming: StreamOptions = {},
): Promise<DispatchOutcome> {
  const receiptId = stored.receipt.receipt_id;
  const deadlineAt = Date.now() + req.clientTimeoutMs;
  // Ask for an event stream only when the body asks the backend for one.
  const send = asksForStream(req.body) ? api.http.openStream.bind(api.http) : api.http.send.bind(api.http);
  let executionId: string | null = stored.receipt.execution_id;
  // Remembering the id as soon as the stream names it is worth a try, not a wait.
  let noting: Promise<unknown> = Promise.resolve();
  // The first Ctrl-C asks the backend to cancel this execution; the second stops waiting.
  const stopCancelling =
    req.kind === "execute"
      ? cancelOnFirstInterrupt(ctx, api, {
          sandbox: req.sandbox,
          key: req.key,
          receiptId,
          executionId: () => executionId,
        })
      : async () => undefined;
  let cancelReported: Promise<void> = Promise.resolve();
  let observed: Observed;
  try {
    const opened = await send({
      method: "POST",
      path: req.path,
      body: req.body,
      // A jobs submission carries its identity in the body (request_id), not in a header.
      ...(isJobsKind(req.kind) ? {} : { idempotencyKey: req.key }),
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
        ...(streaming.readerGone ? { readerGone: streaming.readerGone } : {}),
        ...(streaming.revive ? { revive: streaming.revive } : {}),
        sinks: {
          ...sinks,
          onStarted: (eid) => {
            executionId = eid;
            noting = ctx.storeWrite((s) => s.noteExecutionId(receiptId, eid)).catch(() => undefined);
            sinks.onStarted?.(eid);
          },
        },
      });
      observed = streamObservation(followed);
    }
  } catch (err) {
    // Something of ours failed after the request went out: the receipt must still say
    // "it may have run", never stay without an answer, and the exit says the same.
    const message = (err as Error)?.message ?? String(err);
    const failure = classifyObservation(
      { kind: "transport", sent: true, code: "client_error", message },
      "dispatch",
      req.kind,
    );
    await ctx.storeWrite((s) => s.recordObservation(receiptId, "answer", failure, { attempt })).catch(() => undefined);
    throw new SbxError("client_error", `sbx failed after sending ${receiptId} (${message}); it may have run`, {
      exitCode: ExitCodes.inDoubt,
      hint: `sbx receipts wait ${receiptId}`,
      cause: err,
    });
  } finally {
    // No new cancel from here on; one already sent may still report (awaited below).
    cancelReported = stopCancelling();
  }
  const classified = classifyObservation(observed, "dispatch", req.kind);
  const replayed = observed.kind === "answer" && observed.headers[REPLAYED_HEADER.toLowerCase()] === "true";
  await noting;
  try {
    const store = await ctx.receipts();
    await ctx.storeWrite((s) => s.recordObservation(receiptId, "answer", classified, { attempt }));
    // The answer is stored first: the wait for a cancel's report only orders the lines shown.
    await cancelReported;
    const document = receiptDocument(store.get(receiptId));
    return { receiptId, attempt, classified, document, unrecorded: null, replayed };
  } catch (err) {
    if (!isStoreFailure(err)) throw err;
    // The answer is all there is now: hand it back to be shown, never dropped.
    const inMemory: StoredReceipt = {
      ...stored,
      receipt: {
        ...stored.receipt,
        execution_id: stored.receipt.execution_id ?? classified.execution_id,
        process_id: stored.receipt.process_id ?? classified.process_id,
        request_id: stored.receipt.request_id ?? classified.request_id,
      },
      observations: [...stored.observations, observationRow(classified, "answer", attempt)],
    };
    await cancelReported;
    return { receiptId, attempt, classified, document: receiptDocument(inMemory), unrecorded: err, replayed };
  }
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
  if (f.how === "started" && f.executionId !== null) {
    return { kind: "started", execution_id: f.executionId, boot: f.boot };
  }
  if (f.how === "deadline" || f.how === "interrupted") {
    return { kind: "deadline", sent: true, ...(f.how === "interrupted" ? { interrupted: true } : {}) };
  }
  return {
    kind: "stream",
    execution_id: f.executionId,
    boot: f.boot,
    exit: f.exit,
    stdout: f.stdout.bytes().toString("utf8"),
    stderr: f.stderr.bytes().toString("utf8"),
    stdout_truncated: f.stdout.truncated,
    stderr_truncated: f.stderr.truncated,
  };
}

/** Refuses a body the backend would refuse (413) before anything is stored or sent. */
function checkBodySize(body: Buffer): void {
  if (body.length <= REQUEST_BODY_MAX_BYTES) return;
  const mib = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  throw new UsageError(
    `the request would be ${mib(body.length)}, over the ${mib(REQUEST_BODY_MAX_BYTES)} a backend accepts; nothing was sent`,
    "copy large inputs into the sandbox first (sbx cp FILE SANDBOX:/workspace/FILE) and read them there",
  );
}

/**
 * The first send of a mutation: the receipt (key, exact body bytes, where it goes)
 * is committed, then the request is sent once.
 */
export async function dispatchNew(
  ctx: Context,
  endpoint: Endpoint,
  api: Api,
  req: {
    kind: StartKind;
    sandbox: string;
    body: Buffer;
    key: string;
    clientTimeoutMs: number;
    /** The MCP tool call it is made for (sbx mcp), kept on the receipt. */
    mcp?: { tool: string; requestId: string };
  },
  streaming: StreamOptions = {},
): Promise<DispatchOutcome> {
  checkBodySize(req.body);
  const path = pathFor(req.kind, req.sandbox);
  const store: ReceiptStore = await ctx.receipts();
  const row = await ctx.storeWrite((s) =>
    s.createForDispatch({
      kind: req.kind,
      profile: endpoint.profile,
      apiUrl: endpoint.apiUrl,
      sandbox: req.sandbox,
      idempotencyKey: req.key,
      method: "POST",
      path,
      body: req.body,
      mcp: req.mcp,
    }),
  );
  streaming.beforeSend?.(row.receipt_id, path);
  return sendOnce(ctx, api, store.get(row.receipt_id), 1, { ...req, path }, streaming);
}

/** Where each kind of request is sent (docs/protocol.md). */
const ROUTE_OF: Record<StartKind, "execute" | "process.start" | "jobs.submit"> = {
  execute: "execute",
  process_start: "process.start",
  jobs_submit: "jobs.submit",
  jobs_run: "jobs.submit",
};

function pathFor(kind: StartKind, sandbox: string): string {
  return routePath(ROUTE_OF[kind], { id: sandbox });
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
  const kind = r.kind;
  if (kind === "request") {
    throw new UsageError(
      `${r.receipt_id} is a ${r.method} ${r.path} (an MCP tool's ${r.mcp_tool ?? "request"}), not a start: sbx does not send it again`,
      "look at what it changed (the file, the process, the job, the sandbox); send it again yourself if it did not happen",
    );
  }
  const attempt = await ctx.storeWrite((s) => s.beginAttempt(r.receipt_id));
  return sendOnce(ctx, api, store.get(r.receipt_id), attempt, {
    kind,
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
  const profile = r.profile;
  const apiKey = ctx.env.SBX_API_KEY || (profile === null ? undefined : ctx.config.readApiKey(profile)) || null;
  const autoStart = profile === LOCAL_PROFILE && u.socketPath === ctx.paths.socketPath;
  // Sent in clear only where that profile, pointing there still, was added with --insecure.
  const stillThere = profile === null ? undefined : ctx.config.read().profiles[profile];
  const insecure = stillThere?.insecure === true && parseApiUrl(stillThere.api_url).apiUrl === u.apiUrl;
  return { profile, ...u, apiKey, autoStart, insecure };
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
