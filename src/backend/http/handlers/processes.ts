// Supervised process routes under /sandbox/{id}/processes: start, list, get,
// result, logs, stdin, signal and stop (DELETE). The supervision itself is in
// processes/supervisor.ts.

import { requireTerminal } from "./executions.js";
import {
  ErrorCodes,
  type Handle,
  PROCESS_LOG_LIMIT_DEFAULT,
  PROCESS_LOG_LIMIT_MAX,
  PROCESS_LOG_RAW_LIMIT_MAX,
  PROCESS_LOG_WAIT_MAX_MS,
  OCTET_STREAM,
  PROCESS_STOP_GRACE_DEFAULT_MS,
  PROCESS_STOP_GRACE_MAX_MS,
  type ProcessList,
  type ProcessLogChunk,
  type ProcessResult,
  type ProcessSignalAnswer,
  type ProcessStartRequest,
  type ProcessStdinAnswer,
  type ProcessStdinRequest,
  type ProcessStream,
  RAW_HEADERS,
} from "../../../protocol/types.js";
import {
  checkProcessSignalRequest,
  checkProcessStartRequest,
  checkProcessStdinRequest,
  isValidIdempotencyKey,
  processSignalName,
  resolveWorkingDir,
  withRestartDefaults,
} from "../../../protocol/validate.js";
import type { LookupContext, RequestContext } from "../context.js";
import type { IdempotencyRow } from "../idempotency.js";
import { type ProcessRow, toProcessRecord } from "../../processes/index.js";
import type { SandboxRow } from "../../sandboxes/index.js";
import {
  acceptsBytes,
  ApiError,
  boolParam,
  bootParam,
  intParam,
  invalidRequest,
  jsonReply,
  parseJsonBody,
  type Reply,
  sendOpenPieces,
} from "../replies.js";
import { STREAMED } from "../sse.js";
import { runFixedAnswerMutation, runMutation } from "../idempotency.js";

/** POST …/processes → 201 with the process as started. A replayed key answers the process as it is now. */
export async function startProcess(ctx: RequestContext): Promise<Reply> {
  const { sandboxes, processes } = ctx.services;
  const sandbox = sandboxes.resolve(ctx.params.id!, { createDefault: true, warn: ctx.warn });
  return runMutation(ctx, {
    replay: async (stored) => {
      const row = startedBy(ctx, stored, sandbox);
      const lastRun = row.last_run === null ? null : (JSON.parse(row.last_run) as { generation: number });
      // Its first run's sandbox was never set up: answered as the first time.
      if (row.end_reason === "start_failed" && (lastRun?.generation ?? 0) === 0) {
        const cause = (await ctx.services.processes.startFailure(row.process_id)) ?? "see the process's stderr";
        return startFailed(cause, row.process_id);
      }
      return jsonReply(stored.status, toProcessRecord(row));
    },
    admit: async (claim) => {
      const body = parseJsonBody(ctx.body);
      const problem = checkProcessStartRequest(body);
      if (problem) throw invalidRequest(problem.field, problem.message);
      const req = body as ProcessStartRequest;
      sandboxes.requireRunnable(sandbox);
      const driver = sandboxes.driver(sandbox);
      if (req.tty !== undefined) requireTerminal(driver.isolation, driver.terminalSupport());
      // Only checked here: the supervisor places each run in it itself.
      const { workingDir } = sandboxes.requestCwd(sandbox, req.working_dir);
      const record = processes.start({
        sandbox,
        command: req.command,
        workingDir,
        env: req.env ?? {},
        name: req.name ?? null,
        stdin: req.stdin === true,
        timeoutMs: req.timeout_ms ?? null,
        restart: withRestartDefaults(req.restart),
        ...(req.tty !== undefined && { tty: { cols: req.tty.cols, rows: req.tty.rows } }),
        idempotencyKey: ctx.idempotencyKey,
        // Stored with the process, in its transaction: a replay finds the process it started.
        onAdmit: (processId) => claim?.recordResponse(201, { process_id: processId }),
      });
      // Answered once its sandbox is set up: one that cannot be is an error, not a process "running".
      const cause = await processes.startFailure(record.process_id);
      if (cause !== null) return startFailed(cause, record.process_id);
      const now = processes.getRow(record.process_id);
      return jsonReply(201, now === null ? record : toProcessRecord(now));
    },
  });
}

/** 500 sandbox_start_failed: the process's first run never started, its sandbox could not be set up. */
function startFailed(cause: string, processId: string): Reply {
  return new ApiError(500, ErrorCodes.sandboxStartFailed, `the sandbox could not be set up: ${cause}`, {
    cause,
    process_id: processId,
  }).toReply();
}

/** The process a key started (its stored answer names it). */
function startedBy(ctx: RequestContext, stored: IdempotencyRow, sandbox: SandboxRow): ProcessRow {
  const processId = (JSON.parse(stored.response ?? "{}") as { process_id?: unknown }).process_id;
  const row = typeof processId === "string" ? ctx.services.processes.getRow(processId) : null;
  if (row === null || row.sandbox_id !== sandbox.sandbox_id) {
    throw new ApiError(404, ErrorCodes.processNotFound, "the process this Idempotency-Key started is gone", {
      idempotency_key: ctx.idempotencyKey,
      ...(typeof processId === "string" && { process_id: processId }),
    });
  }
  return row;
}

/** GET …/processes?idempotency_key=K → {processes} (oldest first). */
export async function listProcesses(ctx: RequestContext): Promise<Reply> {
  const sandbox = ctx.services.sandboxes.resolve(ctx.params.id!, { createDefault: true, warn: ctx.warn });
  const key = ctx.query.get("idempotency_key");
  if (key !== null && !isValidIdempotencyKey(key)) throw invalidRequest("idempotency_key", "invalid idempotency_key");
  const body: ProcessList = { processes: ctx.services.processes.list(sandbox.sandbox_id, key ?? undefined) };
  return jsonReply(200, body);
}

export async function getProcess(ctx: RequestContext): Promise<Reply> {
  return jsonReply(200, toProcessRecord(findProcess(ctx)));
}

/** GET …/result?wait_ms=W: waits up to W for the process to end; still running then → `wait_timeout: true`. */
export async function getProcessResult(ctx: RequestContext): Promise<Reply> {
  let row = findProcess(ctx);
  const waitMs = intParam(ctx.query, "wait_ms", 0, PROCESS_LOG_WAIT_MAX_MS) ?? 0;
  const processes = ctx.services.processes;
  if (waitMs > 0 && row.state !== "exited") {
    await processes.waitForEnd(row.process_id, waitMs, ctx.signal);
    row = processes.getRow(row.process_id) ?? row;
  }
  let body: ProcessResult = processes.result(row);
  if (waitMs > 0 && row.state !== "exited") body = { ...body, wait_timeout: true };
  return jsonReply(200, body);
}

/** GET …/logs?stream=&offset=&limit=&wait_ms= */
export async function getProcessLogs(ctx: RequestContext): Promise<Reply> {
  const row = findProcess(ctx);
  const stream = ctx.query.get("stream") ?? "stdout";
  if (stream !== "stdout" && stream !== "stderr") throw invalidRequest("stream", "stream must be stdout or stderr");
  const offset = intParam(ctx.query, "offset", 0, Number.MAX_SAFE_INTEGER) ?? 0;
  const raw = acceptsBytes(ctx.headers.accept);
  const limit =
    intParam(ctx.query, "limit", 1, raw ? PROCESS_LOG_RAW_LIMIT_MAX : PROCESS_LOG_LIMIT_MAX) ??
    PROCESS_LOG_LIMIT_DEFAULT;
  const waitMs = intParam(ctx.query, "wait_ms", 0, PROCESS_LOG_WAIT_MAX_MS) ?? 0;
  const q = { stream: stream as ProcessStream, offset, limit, waitMs, signal: ctx.signal };
  if (raw) {
    // Raw: the bytes go from the log's files to the socket, never held (so a raw read
    // may ask for the whole kept window at once: PROCESS_LOG_RAW_LIMIT_MAX).
    const open = await ctx.services.processes.openLogs(row, q);
    await sendOpenPieces(
      ctx.response,
      {
        "Content-Type": OCTET_STREAM,
        [RAW_HEADERS.stream]: open.stream,
        [RAW_HEADERS.offset]: String(open.offset),
        [RAW_HEADERS.nextOffset]: String(open.next_offset),
        [RAW_HEADERS.eof]: String(open.eof),
        [RAW_HEADERS.rotated]: String(open.rotated),
        [RAW_HEADERS.oldestOffset]: String(open.oldest_offset),
        [RAW_HEADERS.generation]: String(open.generation),
      },
      open.pieces,
    );
    return STREAMED;
  }
  const read = await ctx.services.processes.readLogs(row, q);
  const chunk: ProcessLogChunk = { ...read, data: read.data.toString("base64") };
  return jsonReply(200, chunk);
}

/**
 * POST …/stdin: raw bytes (Content-Type: application/octet-stream, `?eof=true` to
 * close after them) or JSON {data: <base64>, eof?}. Answers once the bytes are in the pipe.
 */
export function writeProcessStdin(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const row = findProcess(ctx);
    let data: Buffer;
    let eof: boolean;
    if (mediaType(ctx.headers["content-type"]) === "application/octet-stream") {
      data = ctx.body;
      eof = boolParam(ctx.query, "eof") ?? false;
    } else {
      const body = parseJsonBody(ctx.body);
      const problem = checkProcessStdinRequest(body);
      if (problem) throw invalidRequest(problem.field, problem.message);
      const req = body as ProcessStdinRequest;
      data = Buffer.from(req.data ?? "", "base64");
      eof = req.eof === true;
    }
    const written = await ctx.services.processes.writeStdin(row, data, eof, handleOf(ctx));
    const answer: ProcessStdinAnswer = {
      process_id: row.process_id,
      generation: written.generation,
      bytes_written: written.bytes,
      eof,
    };
    return jsonReply(200, answer);
  });
}

/** POST …/signal {signal} → 202: delivered to the current run's process group. */
export function signalProcess(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const row = findProcess(ctx);
    const body = parseJsonBody(ctx.body);
    const problem = checkProcessSignalRequest(body);
    if (problem) throw invalidRequest(problem.field, problem.message);
    const signal = processSignalName((body as { signal: string }).signal)!;
    const sent = ctx.services.processes.signal(row, signal, handleOf(ctx));
    const answer: ProcessSignalAnswer = {
      process_id: row.process_id,
      signal,
      generation: sent.generation,
      os_pid: sent.osPid,
    };
    return jsonReply(202, answer);
  });
}

/**
 * DELETE …/processes/{pid}?grace_ms=5000[&remove=true]: SIGTERM to the group,
 * SIGKILL after the grace; no more restarts. Answers once it ended: the process
 * with outcome `cancelled` (an ended process is answered as it is). With
 * `remove=true` its record and logs are deleted too (later reads answer 404).
 */
export function stopProcess(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const row = findProcess(ctx);
    const graceMs = intParam(ctx.query, "grace_ms", 0, PROCESS_STOP_GRACE_MAX_MS) ?? PROCESS_STOP_GRACE_DEFAULT_MS;
    const remove = boolParam(ctx.query, "remove") ?? false;
    const processes = ctx.services.processes;
    const ended = await processes.stop(row, graceMs, handleOf(ctx));
    if (!remove) return jsonReply(200, toProcessRecord(ended));
    processes.remove(ended);
    return jsonReply(200, { ...toProcessRecord(ended), removed: true });
  });
}

/** `?run=N` and `?boot=B`: the run (generation) and backend boot the request was issued against, for the ownership fence. */
function handleOf(ctx: RequestContext): Handle {
  return { run: intParam(ctx.query, "run", 0, Number.MAX_SAFE_INTEGER) ?? undefined, boot: bootParam(ctx.query) };
}

/** The process named by the path, in the path's sandbox. Throws 404 process_not_found. */
export function findProcess(ctx: LookupContext): ProcessRow {
  const sandbox = ctx.services.sandboxes.resolve(ctx.params.id!, { createDefault: true, warn: ctx.warn });
  const processId = ctx.params.pid!;
  const row = ctx.services.processes.getRow(processId);
  if (row === null || row.sandbox_id !== sandbox.sandbox_id) {
    throw new ApiError(404, ErrorCodes.processNotFound, `no process ${processId} in sandbox ${sandbox.name}`, {
      process_id: processId,
    });
  }
  return row;
}

function mediaType(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? (header[0] ?? "") : (header ?? "");
  return value.split(";")[0]!.trim().toLowerCase();
}
