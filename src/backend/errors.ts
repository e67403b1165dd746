// Why the embedded backend could not start (a daemon already running, a socket or
// directory it may not use, a bad option): SbxErrors with a stable code, so that
// `sbx daemon run` exits like any other refusal (docs/classification.md). Errors
// of a request are answers instead (http/replies.ts, refusal.ts).

import { SbxError } from "../common/errors.js";
import { ExitCodes } from "../common/exit-codes.js";

export type DaemonStartErrorCode =
  | "daemon_already_running"
  | "socket_in_use"
  | "socket_path_not_socket"
  | "token_required"
  | "token_too_weak"
  | "unsafe_directory"
  | "no_listener"
  | "invalid_fault_spec"
  /** backend.db fails SQLite's check at start: the backend refuses to serve from it. */
  | "database_damaged"
  /** bwrap works here, but not with sbx's own sandbox options: a bug, never a silent fall-back. */
  | "sandbox_driver_broken";

/**
 * Refused like bad input (125): a daemon already running, a socket path in use or not a
 * socket, bad options; an unsafe directory like an unusable store (74). Never a
 * command's 1-123.
 */
const EXIT_CODE: Record<DaemonStartErrorCode, number> = {
  daemon_already_running: ExitCodes.usage,
  socket_in_use: ExitCodes.usage,
  socket_path_not_socket: ExitCodes.usage,
  token_required: ExitCodes.usage,
  token_too_weak: ExitCodes.usage,
  unsafe_directory: ExitCodes.storeUnusable,
  no_listener: ExitCodes.usage,
  invalid_fault_spec: ExitCodes.usage,
  database_damaged: ExitCodes.storeUnusable,
  sandbox_driver_broken: ExitCodes.internal,
};

export class DaemonStartError extends SbxError {
  declare readonly code: DaemonStartErrorCode;

  constructor(code: DaemonStartErrorCode, message: string, hint?: string) {
    super(code, message, { exitCode: EXIT_CODE[code], ...(hint === undefined ? {} : { hint }) });
    this.name = "DaemonStartError";
  }
}
