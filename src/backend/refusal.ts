// What the backend's domain refuses — a sandbox that does not exist, a name that is
// taken, a process with no run to signal, a path outside /workspace, a job id that
// names other inputs, a run that could not be started (not_started) — named by the error code the protocol gives it (docs/protocol.md,
// "Additions and error codes"). Sandboxes, processes, files and jobs throw a Refusal
// and know nothing of HTTP; the HTTP layer gives each code its status (http/replies.ts).

import { ErrorCodes } from "../protocol/types.js";

/** The codes a domain refusal may carry; http/replies.ts gives each its status. */
export const REFUSAL_CODES = [
  ErrorCodes.invalidRequest,
  ErrorCodes.isolationUnavailable,
  ErrorCodes.limitUnavailable,
  ErrorCodes.imagePullFailed,
  ErrorCodes.workspaceFull,
  ErrorCodes.networkUnavailable,
  ErrorCodes.invalidPath,
  ErrorCodes.sandboxNotFound,
  ErrorCodes.fileNotFound,
  ErrorCodes.sandboxExists,
  ErrorCodes.processNameInUse,
  ErrorCodes.sandboxBusy,
  ErrorCodes.pathConflict,
  ErrorCodes.jobIdConflict,
  ErrorCodes.requestIdConflict,
  ErrorCodes.processNotRunning,
  ErrorCodes.staleHandle,
  ErrorCodes.stdinNotEnabled,
  ErrorCodes.stdinClosed,
  ErrorCodes.stdinBusy,
  ErrorCodes.invalidCursor,
  ErrorCodes.notStarted,
  ErrorCodes.sandboxStartFailed,
  ErrorCodes.sandboxNotRunning,
  ErrorCodes.sandboxPaused,
  ErrorCodes.volumeNotFound,
  ErrorCodes.volumeExists,
  ErrorCodes.volumeInUse,
  ErrorCodes.pauseUnavailable,
  ErrorCodes.connectionRefused,
] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

export class Refusal extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
    /** What the answer's `error.details` says (a `retry_after_ms` there is also sent as Retry-After). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "Refusal";
  }
}

/** How long a client is told to wait before sending a request that was not started again. */
export const NOT_STARTED_RETRY_AFTER_MS = 2000;

/** Why nothing was started: the backend is shutting down, its storage refused the admission, or a fault was injected. */
export type NotStartedReason = "shutting_down" | "storage_unavailable" | "fault_injected";

/** Nothing was started (503 not_started): the same request may be sent again after the hint. */
export function notStarted(reason: NotStartedReason, message: string): Refusal {
  return new Refusal(ErrorCodes.notStarted, message, { reason, retry_after_ms: NOT_STARTED_RETRY_AFTER_MS });
}

/** A request field that is not acceptable (400 invalid_request with `details.field`). */
export function invalidField(field: string, message: string): Refusal {
  return new Refusal(ErrorCodes.invalidRequest, message, { field });
}
