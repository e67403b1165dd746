// How an execution's end is written: the columns of its row, and how its event log ends
// (complete, or incomplete when the backend lost track of it). Apart from the manager
// (manager.ts), which decides when an execution ends; this says what that end looks like.

import type { EndEventData, ExitEventData } from "../../protocol/types.js";
import type { LogEnding } from "./events.js";
import type { ExecutionEnd, ExecutionRow } from "./store.js";

export const SYSTEM_ERROR_STREAM_LOST = "exec_stream_lost";
export const SYSTEM_ERROR_BACKEND_SHUTDOWN = "backend_shutdown";
export const SYSTEM_ERROR_DRIVER = "driver_error";

/** How the event log of an ended execution ends: complete unless the backend lost track of it. */
export function endingOf(end: ExecutionEnd): LogEnding {
  const exit: ExitEventData = {
    outcome: end.outcome,
    exit_code: end.exit_code,
    signal: end.signal,
    system_error: end.system_error,
    ...(end.end_reason !== null && { end_reason: end.end_reason }),
    ...(end.usage !== null && { usage: end.usage }),
    ...(end.egress_denied != null && { egress_denied: end.egress_denied }),
    record_pending: end.record_pending,
    finished_at: end.finished_at,
  };
  const lost = end.outcome === "unknown";
  const endData: EndEventData = lost
    ? { state: "incomplete", reason: end.system_error ?? SYSTEM_ERROR_STREAM_LOST }
    : { state: "complete" };
  return { exit, end: endData };
}

/** The ending of a log whose execution an earlier run of the backend lost (as markExecutionLost stores it). */
export function lostLogEnding(row: ExecutionRow): LogEnding {
  return {
    exit: {
      outcome: "unknown",
      exit_code: null,
      signal: null,
      system_error: SYSTEM_ERROR_STREAM_LOST,
      record_pending: row.record_pending === 1,
      finished_at: row.finished_at,
    },
    end: { state: "incomplete", reason: SYSTEM_ERROR_STREAM_LOST },
  };
}

/** The columns of a row that an end sets. */
export function endColumns(end: ExecutionEnd): Partial<ExecutionRow> {
  return {
    outcome: end.outcome,
    exit_code: end.exit_code,
    signal: end.signal,
    system_error: end.system_error,
    end_reason: end.end_reason,
    usage: end.usage === null ? null : JSON.stringify(end.usage),
    egress_denied: end.egress_denied == null ? null : JSON.stringify(end.egress_denied),
    stdout: end.stdout,
    stderr: end.stderr,
    stdout_bytes: end.stdout_bytes,
    stderr_bytes: end.stderr_bytes,
    stdout_truncated: end.stdout_truncated ? 1 : 0,
    stderr_truncated: end.stderr_truncated ? 1 : 0,
    finished_at: end.finished_at,
    duration_ms: end.duration_ms,
  };
}

export function lostEnd(systemError: string, now: number): ExecutionEnd {
  return {
    outcome: "unknown",
    exit_code: null,
    signal: null,
    system_error: systemError,
    end_reason: null,
    usage: null,
    record_pending: false,
    stdout: "",
    stderr: "",
    stdout_bytes: 0,
    stderr_bytes: 0,
    stdout_truncated: false,
    stderr_truncated: false,
    finished_at: new Date(now).toISOString(),
    duration_ms: null,
  };
}
