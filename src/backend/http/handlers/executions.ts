// Execution routes: POST /sandbox/{id}/execute (blocking, or an SSE stream with
// stream: true), GET /sandbox/{id}/executions, GET …/executions/{eid}, and the
// event log's routes: GET …/{eid}/stream (SSE), GET …/{eid}/events (pages),
// GET …/{eid}/output (full output by byte offset), POST …/{eid}/cancel.

import {
  type CancelAnswer,
  type CancelRequest,
  ErrorCodes,
  type ExecuteRequest,
  type ExecutionEventPage,
  type ExecutionList,
  type ExecutionOutputChunk,
  type ExecutionRecord,
  OCTET_STREAM,
  type Outcome,
  type OutputStream,
  RAW_HEADERS,
  TERMINAL_OUTCOMES,
  TIMEOUT_DEFAULT_MS,
  TTY_TIMEOUT_MAX_MS,
  WAIT_MAX_MS,
  EXECUTION_EVENTS_LIMIT_DEFAULT,
  EXECUTION_EVENTS_LIMIT_MAX,
  EXECUTION_LIST_LIMIT_DEFAULT,
  EXECUTION_LIST_LIMIT_MAX,
  EXECUTION_OUTPUT_LIMIT_DEFAULT,
  EXECUTION_OUTPUT_LIMIT_MAX,
} from "../../../protocol/types.js";
import {
  checkExecuteRequest,
  isValidIdempotencyKey,
  KNOWN_FIELDS,
  resolveWorkingDir,
  unknownFields,
} from "../../../protocol/validate.js";
import type { LookupContext, RequestContext } from "../context.js";
import type { IdempotencyRow } from "../idempotency.js";
import { outputFile, outputSize, readOutputRange, SYSTEM_ERROR_SANDBOX_START_FAILED } from "../../executions/index.js";
import { sandboxStartFailureCause } from "../../drivers/index.js";
import { bothShapers, exitEventShaper } from "../faults.js";
import {
  acceptsBytes,
  ApiError,
  bootParam,
  intParam,
  invalidRequest,
  jsonReply,
  parseJsonBody,
  type Reply,
  sendFileRange,
} from "../replies.js";
import { REPLAYED_HEADER, runFixedAnswerMutation, runMutation } from "../idempotency.js";
import { parseStreamCursor, STREAMED, serveEventStream } from "../sse.js";

const OUTCOMES: readonly Outcome[] = ["pending", ...TERMINAL_OUTCOMES];
/** A blocking replay waits at most the execution's timeout plus this (kill grace and slack). */
const REPLAY_WAIT_SLACK_MS = 15_000;
const CANCEL_REASON_MAX = 1000;

export async function execute(ctx: RequestContext): Promise<Reply> {
  const { sandboxes, executions } = ctx.services;
  const sandbox = sandboxes.resolve(ctx.params.id!, { createDefault: true, warn: ctx.warn });
  return runMutation(ctx, {
    replay: (stored) => replayExecution(ctx, stored),
    admit: async (claim) => {
      const body = parseJsonBody(ctx.body);
      const problem = checkExecuteRequest(body) ?? checkNoNulBytes(body as ExecuteRequest);
      if (problem) throw invalidRequest(problem.field, problem.message);
      const req = body as ExecuteRequest;
      sandboxes.requireRunnable(sandbox);
      const driver = sandboxes.driver(sandbox);
      if (req.tty !== undefined) requireTerminal(driver.isolation, driver.terminalSupport());
      const { workingDir, cwd } = sandboxes.requestCwd(sandbox, req.working_dir);
      const record = executions.admit({
        sandbox,
        driver,
        placement: sandboxes.placement(sandbox),
        command: req.command,
        workingDir,
        cwd,
        env: req.env ?? {},
        stdin: req.stdin === undefined ? null : Buffer.from(req.stdin, "base64"),
        timeoutMs: req.timeout ?? (req.tty === undefined ? TIMEOUT_DEFAULT_MS : TTY_TIMEOUT_MAX_MS),
        ...(req.tty !== undefined && { tty: { cols: req.tty.cols, rows: req.tty.rows } }),
        idempotencyKey: ctx.idempotencyKey,
        onAdmit: (executionId) => claim?.recordExecution(executionId),
      });
      // A fault that lasts (stream_lost, record_pending) shapes what is answered of it from now on.
      ctx.faultMemory.remember(record.execution_id, ctx.fault.action);
      // The command started; the answer is lost on purpose (fault injection).
      if (ctx.fault.action === "drop") return { kind: "drop" };
      if (req.stream === true) {
        // Streamed, the result cannot be confirmed after the fact: say so before streaming.
        if (ctx.fault.action === "unconfirmed") return unconfirmed(record);
        return streamEvents(ctx, record, 0, {});
      }
      await executions.waitForTerminal(record.execution_id, Number.POSITIVE_INFINITY, ctx.signal);
      return ended(ctx, executions.get(record.execution_id)!);
    },
  });
}

/** A terminal was asked of a driver that cannot open one here: 422, nothing ran. */
export function requireTerminal(isolation: string, unavailable: string | null): void {
  if (unavailable === null) return;
  throw new ApiError(422, ErrorCodes.terminalUnavailable, unavailable, { isolation, reason: unavailable });
}

/**
 * The answer for an execution that ended: its record, or, when its sandbox could not be
 * set up and its command never ran, 500 sandbox_start_failed (with the cause).
 */
function ended(ctx: RequestContext, record: ExecutionRecord): Reply {
  if (record.outcome !== "unknown" || record.system_error !== SYSTEM_ERROR_SANDBOX_START_FAILED) {
    return jsonReply(200, shown(ctx, record));
  }
  const cause = sandboxStartFailureCause(record.stderr);
  return new ApiError(500, ErrorCodes.sandboxStartFailed, `the sandbox could not be set up: ${cause}`, {
    cause,
    execution_id: record.execution_id,
  }).toReply();
}

function unconfirmed(record: ExecutionRecord): Reply {
  return new ApiError(
    409,
    ErrorCodes.executionResultUnconfirmed,
    "the execution was admitted but its stored result could not be confirmed (fault injected)",
    { execution_id: record.execution_id, idempotency_key: record.idempotency_key },
  ).toReply();
}

/** Streams an execution's events after `after` as SSE, applying the request's faults. */
async function streamEvents(
  ctx: RequestContext,
  record: ExecutionRecord,
  after: number,
  headers: Record<string, string>,
): Promise<Reply> {
  // Dropped before the first byte (the server would only cut the stream after it was written).
  if (ctx.fault.action === "drop") return { kind: "drop" };
  const { events, executions } = ctx.services;
  const executionId = record.execution_id;
  const shapeEvent = bothShapers(ctx.faultMemory.events(executionId), exitEventShaper(ctx.fault.action));
  await serveEventStream({
    res: ctx.response,
    signal: ctx.signal,
    events,
    sandboxId: record.sandbox_id,
    executionId,
    // Finished once its log's end is stored (an end kept in memory is not there yet).
    isFinished: () => executions.logEnded(executionId),
    after,
    pingMs: ctx.services.ssePingMs,
    fault: ctx.fault.stream,
    malformed: ctx.fault.action === "malformed",
    ...(shapeEvent && { shapeEvent }),
    headers,
  });
  return STREAMED;
}

/** An execution's record as this backend answers it: as stored, shaped by what an execute fault left (FaultMemory). */
function shown(ctx: RequestContext, record: ExecutionRecord): ExecutionRecord {
  return ctx.faultMemory.record(record);
}

/**
 * The execution a key admitted, as it is now; waits like the original while it
 * runs. A streamed request (the same body) streams the event log from its start.
 */
async function replayExecution(ctx: RequestContext, stored: IdempotencyRow): Promise<Reply> {
  const executionId = stored.execution_id;
  const executions = ctx.services.executions;
  const found = executionId === null ? null : executions.get(executionId);
  const record = found === null ? null : shown(ctx, found);
  if (executionId === null || record === null) {
    throw new ApiError(404, ErrorCodes.executionNotFound, "the execution this Idempotency-Key created is gone", {
      idempotency_key: ctx.idempotencyKey,
    });
  }
  if (isStreamRequest(ctx.body)) {
    if (ctx.fault.action === "unconfirmed") return unconfirmed(record);
    return streamEvents(ctx, record, 0, { [REPLAYED_HEADER]: "true" });
  }
  if (record.outcome === "pending") {
    const deadline = Date.parse(record.created_at) + record.timeout + REPLAY_WAIT_SLACK_MS;
    await executions.waitForTerminal(executionId, deadline - ctx.services.now(), ctx.signal);
  }
  return ended(ctx, executions.get(executionId)!);
}

/**
 * GET …/executions → {executions, next_cursor, live_count}, newest first (`id_prefix`:
 * only those whose id starts with it, for the CLI's prefixes). Items carry
 * `stdout`/`stderr` as "" (byte counts and truncated flags as stored): a page stays
 * small; GET …/executions/{eid} answers the kept output.
 */
export async function listExecutions(ctx: RequestContext): Promise<Reply> {
  const sandbox = ctx.services.sandboxes.resolve(ctx.params.id!, { createDefault: true, warn: ctx.warn });
  const limit = intParam(ctx.query, "limit", 1, EXECUTION_LIST_LIMIT_MAX) ?? EXECUTION_LIST_LIMIT_DEFAULT;
  const cursor = intParam(ctx.query, "cursor", 1, Number.MAX_SAFE_INTEGER);
  const outcome = ctx.query.get("outcome");
  if (outcome !== null && !OUTCOMES.includes(outcome as Outcome)) {
    throw invalidRequest("outcome", `outcome must be one of ${OUTCOMES.join(", ")}`);
  }
  const key = ctx.query.get("idempotency_key");
  if (key !== null && !isValidIdempotencyKey(key)) throw invalidRequest("idempotency_key", "invalid idempotency_key");
  const idPrefix = ctx.query.get("id_prefix");
  if (idPrefix !== null && !isValidIdempotencyKey(idPrefix)) throw invalidRequest("id_prefix", "invalid id_prefix");

  // Items leave the kept output out (a page could otherwise reach limit × 2 MiB); GET one execution for it.
  const listed = ctx.services.executions.list({
    sandboxId: sandbox.sandbox_id,
    limit,
    ...(cursor !== null && { beforeSeq: cursor }),
    ...(outcome !== null && { outcome: outcome as Outcome }),
    ...(key !== null && { idempotencyKey: key }),
    ...(idPrefix !== null && { idPrefix }),
  });
  const body: ExecutionList = {
    executions: listed.executions.map((r) => shown(ctx, r)),
    next_cursor: listed.nextCursor,
    live_count: listed.liveCount,
  };
  return jsonReply(200, body);
}

export async function getExecution(ctx: RequestContext): Promise<Reply> {
  const waitMs = intParam(ctx.query, "wait_ms", 0, WAIT_MAX_MS) ?? 0;
  const executions = ctx.services.executions;
  let record = findExecution(ctx);
  const executionId = record.execution_id;
  if (waitMs > 0 && record.outcome === "pending") {
    await executions.waitForTerminal(executionId, waitMs, ctx.signal);
    record = shown(ctx, executions.get(executionId)!);
    if (record.outcome === "pending") record = { ...record, wait_timeout: true };
  }
  return jsonReply(200, record);
}

/**
 * GET …/executions/{eid}/stream: the event log as SSE after `Last-Event-ID` (or
 * `?after=`), following it until `end`. A cursor past the last event: 422 invalid_cursor.
 */
export async function streamExecution(ctx: RequestContext): Promise<Reply> {
  const record = findExecution(ctx);
  const header = ctx.response.req.headers["last-event-id"];
  const after = parseStreamCursor(Array.isArray(header) ? header[0] : header, ctx.query.get("after"));
  if (after === null) throw invalidRequest("after", "the cursor (Last-Event-ID or after) must be an event id");
  checkCursor(after, record);
  return streamEvents(ctx, record, after, {});
}

/**
 * GET …/executions/{eid}/events?after_sequence=N&limit=M → {events, has_more,
 * next_cursor}. A cursor older than the retained log gets a `reset` event first.
 */
export async function listExecutionEvents(ctx: RequestContext): Promise<Reply> {
  const record = findExecution(ctx);
  const after = intParam(ctx.query, "after_sequence", 0, Number.MAX_SAFE_INTEGER) ?? 0;
  const limit = intParam(ctx.query, "limit", 1, EXECUTION_EVENTS_LIMIT_MAX) ?? EXECUTION_EVENTS_LIMIT_DEFAULT;
  checkCursor(after, record);
  const events = ctx.services.events.page(record.sandbox_id, record.execution_id, after, limit + 1);
  const shape = ctx.faultMemory.events(record.execution_id);
  const page = events
    .slice(0, limit)
    .map((e) =>
      shape && (e.type === "exit" || e.type === "end")
        ? { ...e, data: shape(e.type, e.data as Record<string, unknown>) }
        : e,
    );
  const body: ExecutionEventPage = {
    events: page,
    has_more: events.length > limit,
    next_cursor: page.length > 0 ? page[page.length - 1]!.sequence : after,
  };
  return jsonReply(200, body);
}

/**
 * GET …/executions/{eid}/output?stream=stdout|stderr&offset=N&limit=M → {stream,
 * offset, next_offset, data (base64), eof}: the full output by byte offset, past
 * the event output budget too (our design, docs/protocol.md). `eof` once the
 * execution ended and next_offset is the end of the stream. limit: 1 B–4 MiB,
 * default 1 MiB. An offset past what exists: 422 invalid_cursor.
 *
 * Past the output file's cap (executionOutputMaxBytes) nothing more is kept: the file
 * holds only the first `kept_bytes` of a stream whose true total is the record's
 * `_bytes` (`_truncated` true; the `gap` events there say `kept: false`). Reads stop
 * at kept_bytes: the chunk ending there has `eof` once the execution ended, and an
 * offset beyond kept_bytes — even one below `_bytes` — is 422 invalid_cursor with
 * details {stream, offset, size, kept_bytes, stream_bytes} (size = kept_bytes).
 */
export async function readExecutionOutput(ctx: RequestContext): Promise<Reply> {
  const record = findExecution(ctx);
  const streamText = ctx.query.get("stream") ?? "stdout";
  if (streamText !== "stdout" && streamText !== "stderr") {
    throw invalidRequest("stream", 'stream must be "stdout" or "stderr"');
  }
  const stream: OutputStream = streamText;
  const offset = intParam(ctx.query, "offset", 0, Number.MAX_SAFE_INTEGER) ?? 0;
  // Raw bytes are streamed from the file, so a raw read may take all there is at once.
  const raw = acceptsBytes(ctx.headers.accept);
  const limit = raw
    ? (intParam(ctx.query, "limit", 1, Number.MAX_SAFE_INTEGER) ?? Number.MAX_SAFE_INTEGER)
    : (intParam(ctx.query, "limit", 1, EXECUTION_OUTPUT_LIMIT_MAX) ?? EXECUTION_OUTPUT_LIMIT_DEFAULT);
  // Read "ended" before the file: once it is true, the file is complete.
  const ended = record.outcome !== "pending";
  const dir = ctx.services.events.outputDir(record.sandbox_id, record.execution_id);
  const size = outputSize(dir, stream);
  if (size === null) {
    if (record[`${stream}_bytes`] > 0) {
      throw new ApiError(404, ErrorCodes.outputNotFound, `the full ${stream} of ${record.execution_id} is not kept`, {
        execution_id: record.execution_id,
        stream,
      });
    }
    if (offset > 0) throw outputCursor(stream, offset, 0, 0);
    if (raw)
      return {
        kind: "bytes",
        status: 200,
        body: Buffer.alloc(0),
        headers: rawOutputHeaders(record, stream, 0, 0, ended, 0),
      };
    const empty: ExecutionOutputChunk = { stream, offset: 0, next_offset: 0, data: "", eof: ended };
    return jsonReply(200, empty);
  }
  if (offset > size) throw outputCursor(stream, offset, size, record[`${stream}_bytes`]);
  if (raw) {
    const length = Math.min(limit, size - offset);
    const eof = ended && offset + length >= size;
    await sendFileRange(
      ctx.response,
      rawOutputHeaders(record, stream, offset, offset + length, eof, size),
      outputFile(dir, stream),
      offset,
      length,
    );
    return STREAMED;
  }
  const bytes = readOutputRange(dir, stream, offset, Math.min(limit, size - offset)) ?? Buffer.alloc(0);
  const nextOffset = offset + bytes.length;
  const body: ExecutionOutputChunk = {
    stream,
    offset,
    next_offset: nextOffset,
    data: bytes.toString("base64"),
    eof: ended && nextOffset >= size,
  };
  return jsonReply(200, body);
}

function rawOutputHeaders(
  record: ExecutionRecord,
  stream: OutputStream,
  offset: number,
  next: number,
  eof: boolean,
  kept: number,
): Record<string, string> {
  return {
    "Content-Type": OCTET_STREAM,
    [RAW_HEADERS.stream]: stream,
    [RAW_HEADERS.offset]: String(offset),
    [RAW_HEADERS.nextOffset]: String(next),
    [RAW_HEADERS.eof]: String(eof),
    [RAW_HEADERS.streamBytes]: String(record[`${stream}_bytes`]),
    [RAW_HEADERS.keptBytes]: String(kept),
    ...(record.egress_denied !== undefined && { [RAW_HEADERS.egressDenied]: String(record.egress_denied.total) }),
  };
}

/**
 * POST …/executions/{eid}/cancel {reason?} → 202 {execution_id, cancel:
 * "requested"|"already_terminal", cancellable: "hard"}. The group gets TERM, then
 * KILL after the grace; the outcome becomes `cancelled` once it is gone.
 */
export function cancelExecution(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const body = parseJsonBody(ctx.body, {});
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw invalidRequest("body", "body must be a JSON object");
    }
    const unknown = unknownFields(body, KNOWN_FIELDS.CancelRequest);
    if (unknown) throw invalidRequest(unknown.field, unknown.message);
    const { reason } = body as CancelRequest;
    if (reason !== undefined && (typeof reason !== "string" || reason.length > CANCEL_REASON_MAX)) {
      throw invalidRequest("reason", `reason must be a string of at most ${CANCEL_REASON_MAX} characters`);
    }
    const record = findExecution(ctx);
    const boot = bootParam(ctx.query);
    const cancel = ctx.services.executions.cancel(record.execution_id, reason ?? null, boot) ?? "already_terminal";
    const answer: CancelAnswer = { execution_id: record.execution_id, cancel, cancellable: "hard" };
    return jsonReply(202, answer);
  });
}

/** The execution `{eid}` names in sandbox `{id}`, as answered; 404 otherwise. */
function findExecution(ctx: RequestContext): ExecutionRecord {
  return findExecutionIn(ctx, (stored) => shown(ctx, stored));
}

/** The execution `{eid}` names in sandbox `{id}` (seen through `show`); 404 otherwise. */
export function findExecutionIn(
  ctx: LookupContext,
  show: (stored: ExecutionRecord) => ExecutionRecord = (stored) => stored,
): ExecutionRecord {
  const sandbox = ctx.services.sandboxes.resolve(ctx.params.id!, { createDefault: true, warn: ctx.warn });
  const executionId = ctx.params.eid!;
  const stored = ctx.services.executions.get(executionId);
  const record = stored === null ? null : show(stored);
  if (record === null || record.sandbox_id !== sandbox.sandbox_id) {
    throw new ApiError(404, ErrorCodes.executionNotFound, `no execution ${executionId} in sandbox ${sandbox.name}`, {
      execution_id: executionId,
    });
  }
  return record;
}

/** An event cursor may not point past the last committed event. */
function checkCursor(after: number, record: ExecutionRecord): void {
  if (after > record.last_event_id) {
    throw new ApiError(
      422,
      ErrorCodes.invalidCursor,
      `event ${after} does not exist; the last event of ${record.execution_id} is ${record.last_event_id}`,
      { after, last_event_id: record.last_event_id },
    );
  }
}

/** `size`: the bytes kept on disk; `streamBytes`: the stream's true total so far (the record's `_bytes`). */
function outputCursor(stream: OutputStream, offset: number, size: number, streamBytes: number): ApiError {
  const what =
    streamBytes > size
      ? `what was kept of ${stream} (${size} of ${streamBytes} bytes)`
      : `the end of ${stream} (${size} bytes)`;
  return new ApiError(422, ErrorCodes.invalidCursor, `offset ${offset} is past ${what}`, {
    stream,
    offset,
    size,
    kept_bytes: size,
    stream_bytes: Math.max(streamBytes, size),
  });
}

function isStreamRequest(body: Buffer): boolean {
  try {
    return (JSON.parse(body.toString("utf8")) as ExecuteRequest | null)?.stream === true;
  } catch {
    return false;
  }
}

/** NUL bytes cannot cross exec(2); refuse them as a request problem rather than fail at spawn. */
function checkNoNulBytes(req: ExecuteRequest): { field: string; message: string } | null {
  const command = typeof req.command === "string" ? [req.command] : req.command;
  if (command.some((a) => a.includes("\0"))) return { field: "command", message: "command must not contain NUL bytes" };
  for (const [k, v] of Object.entries(req.env ?? {})) {
    if (v.includes("\0")) return { field: "env", message: `env.${k} must not contain NUL bytes` };
  }
  return null;
}
