// Wire types of /api/v1 (see API.md). Shared by the client and the embedded backend;
// neither side's internals belong here.

export const API_PREFIX = "/api/v1";
export const PROTOCOL_VERSION = 1;

export type Outcome = "pending" | "succeeded" | "failed" | "timed_out" | "cancelled" | "unknown";
export const TERMINAL_OUTCOMES: readonly Outcome[] = ["succeeded", "failed", "timed_out", "cancelled", "unknown"];

export interface Health {
  ok: boolean;
  version: string;
  protocol: number;
  backend: string;
  started_at: string;
}

export type Isolation = "none" | "bwrap";

export interface SandboxCreateRequest {
  name?: string;
  isolation?: Isolation;
  network?: boolean;
}

export interface Sandbox {
  sandbox_id: string;
  name: string;
  status: string;
  isolation: Isolation;
  network: boolean;
  workspace: "/workspace";
  created_at: string;
}

export interface SandboxList {
  sandboxes: Sandbox[];
}

export interface ExecuteRequest {
  /** argv (no shell) or a string run through /bin/sh -c */
  command: string[] | string;
  working_dir?: string;
  env?: Record<string, string>;
  stream?: boolean;
  /** milliseconds, 1,000..600,000 */
  timeout?: number;
  /** base64, one-shot */
  stdin?: string;
}

export interface ExecutionRecord {
  execution_id: string;
  sandbox_id: string;
  idempotency_key: string | null;
  command: string[] | string;
  working_dir: string;
  timeout: number;
  outcome: Outcome;
  exit_code: number | null;
  signal: string | null;
  system_error: string | null;
  record_pending: boolean;
  cancel_requested: boolean;
  stdout: string;
  stderr: string;
  stdout_bytes: number;
  stderr_bytes: number;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  last_event_id: number;
  wait_timeout?: boolean;
}

export interface ExecutionList {
  executions: ExecutionRecord[];
  next_cursor: string | null;
  live_count: number;
}

export interface ErrorBody {
  error: {
    code: string;
    message: string;
    details?: Record<string, unknown>;
  };
}

/** Stable error codes the API documents. */
export const ErrorCodes = {
  invalidRequest: "invalid_request",
  unauthorized: "unauthorized",
  notFound: "not_found",
  sandboxNotFound: "sandbox_not_found",
  executionNotFound: "execution_not_found",
  executionResultUnconfirmed: "execution_result_unconfirmed",
  requestInProgress: "request_in_progress",
  idempotencyKeyReused: "idempotency_key_reused",
  notStarted: "not_started",
  sandboxExists: "sandbox_exists",
  /** DELETE of a sandbox that still has running executions. */
  sandboxBusy: "sandbox_busy",
  methodNotAllowed: "method_not_allowed",
  payloadTooLarge: "payload_too_large",
  internal: "internal_error",
} as const;

export const TIMEOUT_MIN_MS = 1_000;
export const TIMEOUT_MAX_MS = 600_000;
export const TIMEOUT_DEFAULT_MS = 120_000;
export const WAIT_MAX_MS = 50_000;
/** Bound of stdout/stderr kept in an execution record. */
export const RECORD_OUTPUT_LIMIT = 1024 * 1024;
export const WORKSPACE = "/workspace";
