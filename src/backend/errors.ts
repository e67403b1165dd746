// Errors the backend raises outside an HTTP answer (start-up, daemon lifecycle,
// configuration). Each carries a stable string code, like undici's errors.

export type BackendErrorCode =
  | "daemon_already_running"
  | "socket_in_use"
  | "socket_path_not_socket"
  | "token_required"
  | "token_too_weak"
  | "unsafe_directory"
  | "no_listener"
  | "invalid_fault_spec";

export class BackendError extends Error {
  readonly code: BackendErrorCode;

  constructor(code: BackendErrorCode, message: string) {
    super(message);
    this.name = "BackendError";
    this.code = code;
  }
}
