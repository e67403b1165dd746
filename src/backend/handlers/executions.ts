// Execution routes: POST /sandbox/{id}/execute, GET /sandbox/{id}/executions and
// GET /sandbox/{id}/executions/{eid}.

import fs from "node:fs";
import path from "node:path";
import {
  ErrorCodes,
  type ExecuteRequest,
  type ExecutionList,
  type ExecutionRecord,
  type Outcome,
  TERMINAL_OUTCOMES,
  TIMEOUT_DEFAULT_MS,
  WAIT_MAX_MS,
  WORKSPACE,
} from "../../protocol/types.js";
import { checkExecuteRequest, isValidIdempotencyKey, resolveWorkingDir } from "../../protocol/validate.js";
import type { RequestContext } from "../context.js";
import { type IdempotencyRow, toExecutionRecord } from "../db.js";
import type { EndMode } from "../executions.js";
import { ApiError, invalidRequest, jsonReply, parseJsonBody, type Reply } from "../http.js";
import { runMutation } from "../idempotency.js";

const OUTCOMES: readonly Outcome[] = ["pending", ...TERMINAL_OUTCOMES];
const LIST_LIMIT_DEFAULT = 50;
const LIST_LIMIT_MAX = 200;
/** A blocking replay waits at most the execution's timeout plus this (kill grace and slack). */
const REPLAY_WAIT_SLACK_MS = 15_000;

export async function execute(ctx: RequestContext): Promise<Reply> {
  const { sandboxes, executions } = ctx.services;
  const sandbox = sandboxes.resolve(ctx.params.id!, { createDefault: true });
  return runMutation(ctx, {
    replay: (stored) => replayExecution(ctx, stored),
    admit: async (claim) => {
      const body = parseJsonBody(ctx.body);
      const problem = checkExecuteRequest(body) ?? checkNoNulBytes(body as ExecuteRequest);
      if (problem) throw invalidRequest(problem.field, problem.message);
      const req = body as ExecuteRequest;
      if (req.stream === true) {
        throw invalidRequest("stream", "stream: true is not supported by this backend yet; send stream: false");
      }
      if (!executions.accepting) {
        throw new ApiError(
          503,
          ErrorCodes.notStarted,
          "the backend is shutting down; nothing was started",
          { reason: "shutting_down", retry_after_ms: 2000 },
          { "Retry-After": "2" },
        );
      }
      const workingDir = resolveWorkingDir(req.working_dir)!;
      const workspaceDir = sandboxes.ensureWorkspace(sandbox.sandbox_id);
      const cwd = path.join(workspaceDir, path.posix.relative(WORKSPACE, workingDir));
      if (!isDirectory(cwd)) {
        throw invalidRequest("working_dir", `${workingDir} does not exist in sandbox ${sandbox.name}`);
      }
      const record = executions.admit({
        sandbox,
        command: req.command,
        workingDir,
        cwd,
        workspaceDir,
        env: req.env ?? {},
        stdin: req.stdin === undefined ? null : Buffer.from(req.stdin, "base64"),
        timeoutMs: req.timeout ?? TIMEOUT_DEFAULT_MS,
        idempotencyKey: ctx.idempotencyKey,
        onAdmit: (executionId) => claim?.recordExecution(executionId),
        endMode: endModeFor(ctx),
      });
      // The command started; the answer is lost on purpose (fault injection).
      if (ctx.fault.action === "drop") return { kind: "drop" };
      await executions.waitForTerminal(record.execution_id, Number.POSITIVE_INFINITY, ctx.signal);
      return jsonReply(200, executions.get(record.execution_id));
    },
  });
}

function endModeFor(ctx: RequestContext): EndMode {
  if (ctx.fault.action === "stream_lost") return "stream_lost";
  if (ctx.fault.action === "record_pending") return "record_pending";
  return "normal";
}

/** The execution a key admitted, as it is now; waits like the original while it runs. */
async function replayExecution(ctx: RequestContext, stored: IdempotencyRow): Promise<Reply> {
  const executionId = stored.execution_id;
  const executions = ctx.services.executions;
  const record = executionId === null ? null : executions.get(executionId);
  if (executionId === null || record === null) {
    throw new ApiError(404, ErrorCodes.executionNotFound, "the execution this Idempotency-Key created is gone", {
      idempotency_key: ctx.idempotencyKey,
    });
  }
  if (record.outcome === "pending") {
    const deadline = Date.parse(record.created_at) + record.timeout + REPLAY_WAIT_SLACK_MS;
    await executions.waitForTerminal(executionId, deadline - Date.now(), ctx.signal);
  }
  return jsonReply(200, executions.get(executionId));
}

export async function listExecutions(ctx: RequestContext): Promise<Reply> {
  const sandbox = ctx.services.sandboxes.resolve(ctx.params.id!, { createDefault: true });
  const limit = intParam(ctx.query, "limit", 1, LIST_LIMIT_MAX) ?? LIST_LIMIT_DEFAULT;
  const cursor = ctx.query.get("cursor");
  if (cursor !== null && !/^[1-9][0-9]{0,15}$/.test(cursor)) throw invalidRequest("cursor", "invalid cursor");
  const outcome = ctx.query.get("outcome");
  if (outcome !== null && !OUTCOMES.includes(outcome as Outcome)) {
    throw invalidRequest("outcome", `outcome must be one of ${OUTCOMES.join(", ")}`);
  }
  const key = ctx.query.get("idempotency_key");
  if (key !== null && !isValidIdempotencyKey(key)) throw invalidRequest("idempotency_key", "invalid idempotency_key");

  const store = ctx.services.store;
  const rows = store.listExecutions({
    sandboxId: sandbox.sandbox_id,
    limit: limit + 1,
    ...(cursor !== null && { beforeSeq: Number(cursor) }),
    ...(outcome !== null && { outcome: outcome as Outcome }),
    ...(key !== null && { idempotencyKey: key }),
  });
  const page = rows.slice(0, limit);
  const body: ExecutionList = {
    executions: page.map(toExecutionRecord),
    next_cursor: rows.length > limit ? String(page[page.length - 1]!.seq) : null,
    live_count: store.countPending(sandbox.sandbox_id),
  };
  return jsonReply(200, body);
}

export async function getExecution(ctx: RequestContext): Promise<Reply> {
  const sandbox = ctx.services.sandboxes.resolve(ctx.params.id!, { createDefault: true });
  const waitMs = intParam(ctx.query, "wait_ms", 0, WAIT_MAX_MS) ?? 0;
  const executionId = ctx.params.eid!;
  const executions = ctx.services.executions;
  let record: ExecutionRecord | null = executions.get(executionId);
  if (record === null || record.sandbox_id !== sandbox.sandbox_id) {
    throw new ApiError(404, ErrorCodes.executionNotFound, `no execution ${executionId} in sandbox ${sandbox.name}`, {
      execution_id: executionId,
    });
  }
  if (waitMs > 0 && record.outcome === "pending") {
    await executions.waitForTerminal(executionId, waitMs, ctx.signal);
    record = executions.get(executionId)!;
    if (record.outcome === "pending") record = { ...record, wait_timeout: true };
  }
  return jsonReply(200, record);
}

/** An optional integer query parameter within [min, max]; 400 otherwise. */
function intParam(query: URLSearchParams, name: string, min: number, max: number): number | null {
  const text = query.get(name);
  if (text === null) return null;
  const value = /^[0-9]{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) throw invalidRequest(name, `${name} must be an integer from ${min} to ${max}`);
  return value;
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

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
