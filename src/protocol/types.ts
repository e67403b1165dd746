// Wire types of /api/v1 (see docs/protocol.md). Shared by the client and the embedded backend;
// neither side's internals belong here.

export const API_PREFIX = "/api/v1";
/** A response header with a warning for the person behind the request (sbx prints it on stderr). */
export const WARNING_HEADER = "Sbx-Warning";
export const PROTOCOL_VERSION = 1;

export type Outcome = "pending" | "succeeded" | "failed" | "timed_out" | "cancelled" | "unknown";
export const TERMINAL_OUTCOMES: readonly Outcome[] = ["succeeded", "failed", "timed_out", "cancelled", "unknown"];

export interface Health {
  ok: boolean;
  version: string;
  protocol: number;
  backend: string;
  started_at: string;
  /** The embedded backend's sandbox drivers, as probed at its start (sbx). */
  isolation?: IsolationStatus;
}

/** GET /api/v1/storage (sbx): what the embedded backend keeps, its size, and its retention. */
export interface StorageReport {
  executions: { kept: number; running: number; outputs_dropped: number; oldest_finished_at: string | null };
  processes: { kept: number; running: number };
  bytes: { database: number; execution_output: number; process_logs: number; total: number };
  retention: {
    /** Finished executions and exited processes older than this go (never sooner than key_retention_ms). */
    retain_ms: number;
    /** Past this total, the oldest finished outputs go first, then records past the key window. */
    retain_bytes: number;
    /** Records a receipt may still ask about (by id or key) are kept at least this long. */
    key_retention_ms: number;
  };
  last_sweep: {
    at: string;
    deleted_executions: number;
    dropped_outputs: number;
    deleted_processes: number;
    /** Bytes still over retain_bytes after the sweep: records inside the key window or running. */
    over_limit_bytes: number;
  } | null;
}

export type Isolation = "none" | "bwrap";
/** `auto`: bwrap where it works, else none. */
export type IsolationRequest = Isolation | "auto";

export interface DriverProbeStatus {
  available: boolean;
  /** Why it is not available and what to install; null when it is. */
  reason: string | null;
  version: string | null;
}

export interface IsolationStatus {
  /** What `auto` (and the `default` sandbox) gets on this backend. */
  default: Isolation;
  bwrap: DriverProbeStatus;
  none: DriverProbeStatus;
}

export interface SandboxCreateRequest {
  name?: string;
  isolation?: IsolationRequest;
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

/** GET /sandbox/{id}: the sandbox with where and how its commands run (sbx). */
export interface SandboxDetails extends Sandbox {
  /** The host directory behind /workspace (the embedded backend's own disk). */
  host_workspace: string;
  /** Bytes the workspace takes on disk; only with ?usage=true, else null. */
  workspace_bytes: number | null;
  driver: {
    isolation: Isolation;
    version: string | null;
    user: string;
    namespaces: string[];
    host_paths_read_only: string[] | null;
    /** Whether this sandbox's driver can run commands on this backend now. */
    available: boolean;
    reason: string | null;
  };
}

/** PUT …/files: what was written (sbx). */
export interface FileUpload {
  /** Where it landed, symlinks inside the workspace followed ("/workspace/…"). */
  path: string;
  type: "file" | "directory";
  /** Bytes received (the raw file, or the tar stream). */
  bytes: number;
  /** sha256 of the bytes received, to compare with what was sent. */
  sha256: string;
  /** Entries unpacked from a tar stream; null for a raw file. */
  entries: number | null;
}

/** GET …/files?stat=true: what a path names (sbx). */
export interface FileStat {
  path: string;
  type: "file" | "directory";
  /** Bytes of a file; 0 for a directory. */
  size: number;
  /** Permission bits in octal, e.g. "0755". */
  mode: string;
}

/**
 * Raw output reads (docs/protocol.md): GET …/executions/{eid}/output and
 * …/processes/{pid}/logs answer the bytes themselves when asked with
 * `Accept: application/octet-stream`, and say where they are in these headers.
 */
export const OCTET_STREAM = "application/octet-stream";
export const RAW_HEADERS = {
  stream: "Sbx-Stream",
  offset: "Sbx-Offset",
  nextOffset: "Sbx-Next-Offset",
  eof: "Sbx-Eof",
  /** Output: how many bytes the command wrote to the stream, kept or not (past the cap). */
  streamBytes: "Sbx-Stream-Bytes",
  rotated: "Sbx-Rotated",
  oldestOffset: "Sbx-Oldest-Offset",
  generation: "Sbx-Generation",
} as const;

/** Headers of a GET …/files answer. */
export const FILE_TYPE_HEADER = "Sbx-File-Type";
export const FILE_MODE_HEADER = "Sbx-File-Mode";
export const TAR_CONTENT_TYPE = "application/x-tar";

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
  /**
   * What a restarted backend found of the process group of an execution it had lost
   * (e.g. "process group 1234 killed", "… started in another boot; left alone"), or null (sbx).
   */
  recovery?: string | null;
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

// ── execution events (the durable event log, its SSE stream and its pages) ──

export type OutputStream = "stdout" | "stderr";
export type ExecutionEventType = "started" | "output" | "gap" | "reset" | "exit" | "end";

export interface StartedEventData {
  execution_id: string;
  sandbox_id: string;
  started_at: string;
}

export interface OutputEventData {
  stream: OutputStream;
  /** Byte offset of this chunk in its stream. */
  offset: number;
  /** base64, at most EVENT_OUTPUT_CHUNK_LIMIT raw bytes. */
  data: string;
}

/** Output not put into events (past the event output budget); readable from …/output. */
export interface GapEventData {
  stream: OutputStream;
  offset: number;
  bytes: number;
  /** false: these bytes are past the backend's full-output cap and were not kept at all. */
  kept?: boolean;
}

/** Replaces what a reader accumulated: each stream's last bytes, starting at its `_offset`. */
export interface ResetEventData {
  stdout: string;
  stderr: string;
  stdout_offset: number;
  stderr_offset: number;
}

export interface ExitEventData {
  outcome: Outcome;
  exit_code: number | null;
  signal: string | null;
  system_error: string | null;
  record_pending: boolean;
  finished_at: string | null;
}

export interface EndEventData {
  state: "complete" | "incomplete";
  reason?: string;
}

export interface ExecutionEvent {
  sequence: number;
  type: ExecutionEventType;
  at: string;
  data: unknown;
}

/** GET …/executions/{eid}/events */
export interface ExecutionEventPage {
  events: ExecutionEvent[];
  /** More events exist after this page already. */
  has_more: boolean;
  /** The after_sequence of the next page: the last sequence in this one (or the one asked for). */
  next_cursor: number;
}

/** GET …/executions/{eid}/output: raw bytes of one stream by byte offset (our design, docs/protocol.md). */
export interface ExecutionOutputChunk {
  stream: OutputStream;
  offset: number;
  next_offset: number;
  /** base64 */
  data: string;
  /** The execution ended and next_offset is the end of its stream. */
  eof: boolean;
}

export interface CancelRequest {
  reason?: string;
}

export interface CancelAnswer {
  execution_id: string;
  cancel: "requested" | "already_terminal";
  cancellable: "hard";
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
  /** A files path that is not inside /workspace (`..`, elsewhere, or a symlink that leads out). */
  invalidPath: "invalid_path",
  /** No file or directory at a files path. */
  fileNotFound: "file_not_found",
  /** A files path where the other kind is in the way (a directory where a file goes, a file as a parent). */
  pathConflict: "path_conflict",
  /** An uploaded tar stream that is broken or has an entry that may not be unpacked; nothing was written. */
  invalidArchive: "invalid_archive",
  /** The isolation asked for (or the sandbox's) cannot run on this backend; details.reason says why. */
  isolationUnavailable: "isolation_unavailable",
  methodNotAllowed: "method_not_allowed",
  payloadTooLarge: "payload_too_large",
  /** Request headers (with the URL) over the backend's limit; nothing was done. */
  headersTooLarge: "headers_too_large",
  /** An event cursor (after, Last-Event-ID, after_sequence) or output offset beyond what exists. */
  invalidCursor: "invalid_cursor",
  /** The execution's full output is not on disk (it predates output files). */
  outputNotFound: "output_not_found",
  /** No supervised process with this id in this sandbox. */
  processNotFound: "process_not_found",
  /** A stdin write to a process started without `stdin: true`. */
  stdinNotEnabled: "stdin_not_enabled",
  /** A stdin write after `eof` was sent to the current run. */
  stdinClosed: "stdin_closed",
  /** A stdin write while more than 1 MiB written earlier is not read yet; nothing was written. */
  stdinBusy: "stdin_busy",
  /** A signal or stdin write while no run of the process is alive (backoff, stopping, exited). */
  processNotRunning: "process_not_running",
  /** No job with this id in this sandbox. */
  jobNotFound: "job_not_found",
  /** A job id already names a job with other inputs; nothing was admitted. */
  jobIdConflict: "job_id_conflict",
  /** A request id already names a submission of other jobs; nothing was admitted. */
  requestIdConflict: "request_id_conflict",
  internal: "internal_error",
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export const TIMEOUT_MIN_MS = 1_000;
export const TIMEOUT_MAX_MS = 600_000;
export const TIMEOUT_DEFAULT_MS = 120_000;
export const WAIT_MAX_MS = 50_000;
/** The shortest token a TCP listener of the embedded backend accepts (a generated one is 43 characters). */
export const DAEMON_TOKEN_MIN_LENGTH = 32;
/** Request bodies other than files are refused past this (413 payload_too_large). */
export const REQUEST_BODY_MAX_BYTES = 16 * 1024 * 1024;
/** Bound of stdout/stderr kept in an execution record. */
export const RECORD_OUTPUT_LIMIT = 1024 * 1024;
export const WORKSPACE = "/workspace";
/** Raw bytes of output carried by one `output` event. */
export const EVENT_OUTPUT_CHUNK_LIMIT = 64 * 1024;
/** Output bytes put into events per execution; past it, `gap` events. */
export const EVENT_OUTPUT_BUDGET = 5 * 1024 * 1024;

// ── supervised processes ──

export type RestartPolicyName = "never" | "on-failure" | "always";

export interface RestartPolicy {
  policy: RestartPolicyName;
  /** Restarts allowed in one window (a run that stays up 30 s opens a new window). */
  max_restarts: number;
  /** The first back-off; it doubles with each restart in the window. */
  backoff_ms: number;
  max_backoff_ms: number;
}

export const RESTART_DEFAULTS: RestartPolicy = {
  policy: "never",
  max_restarts: 5,
  backoff_ms: 1000,
  max_backoff_ms: 30_000,
};

export interface ProcessStartRequest {
  /** argv (no shell) or a string run through /bin/sh -c */
  command: string[] | string;
  working_dir?: string;
  env?: Record<string, string>;
  name?: string;
  /** A pipe to write to later (POST …/stdin); otherwise stdin is /dev/null. */
  stdin?: boolean;
  /** Limit on the process's whole life (all restarts), from its first start; null: none. */
  timeout_ms?: number | null;
  /** Missing fields take RESTART_DEFAULTS. */
  restart?: Partial<RestartPolicy>;
}

export type ProcessState = "running" | "backoff" | "stopping" | "exited";

/**
 * Why a process ended for good: `exited` (its policy does not restart that end),
 * `max_restarts` (the restart budget was spent), `stopped` (DELETE), `timed_out`
 * (timeout_ms), `backend_shutdown` (the daemon stopped it on its way down; `always`
 * processes start again with the daemon), `backend_lost` (it was running when the
 * daemon died; its outcome is unknown).
 */
export type ProcessEndReason =
  | "exited"
  | "max_restarts"
  | "stopped"
  | "timed_out"
  | "backend_shutdown"
  | "backend_lost";

/** One run (generation) of a process that ended. */
export interface ProcessRunSummary {
  generation: number;
  /** `unknown` when the daemon lost it. */
  outcome: Outcome;
  exit_code: number | null;
  signal: string | null;
  started_at: string | null;
  ended_at: string | null;
}

export interface ProcessRecord {
  process_id: string;
  sandbox_id: string;
  name: string | null;
  idempotency_key: string | null;
  command: string[] | string;
  working_dir: string;
  state: ProcessState;
  /** pid of the current run's leader (its process group id); null when none runs. */
  os_pid: number | null;
  /** Restarts so far; also the current generation. */
  restarts: number;
  restart: RestartPolicy;
  stdin_enabled: boolean;
  timeout_ms: number | null;
  /** `pending` until the process ended for good. */
  outcome: Outcome;
  exit_code: number | null;
  signal: string | null;
  end_reason: ProcessEndReason | null;
  /** The last run that ended (null before one did). */
  last_run: ProcessRunSummary | null;
  /** When the next run starts (state `backoff`). */
  next_restart_at: string | null;
  /** What a restarted backend found of the process group of a run it had lost, or null (sbx). */
  recovery?: string | null;
  created_at: string;
  /** Start of the current (or last) run. */
  started_at: string | null;
  /** When the process ended for good. */
  ended_at: string | null;
}

export interface ProcessList {
  processes: ProcessRecord[];
}

export interface ProcessStreamCapture {
  /** Bytes the stream produced over the process's life. */
  bytes: number;
  oldest_offset: number;
  /** Some of the stream was rotated away (oldest_offset > 0). */
  rotated: boolean;
}

export interface ProcessResult {
  process_id: string;
  outcome: Outcome;
  exit_code: number | null;
  signal: string | null;
  end_reason: ProcessEndReason | null;
  /** The process ended for good and its logs are closed. */
  complete: boolean;
  output_capture: { stdout: ProcessStreamCapture; stderr: ProcessStreamCapture };
  started_at: string | null;
  ended_at: string | null;
  restarts: number;
  /** The last PROCESS_TAIL_BYTES of each stream, UTF-8 with invalid bytes replaced. */
  stdout_tail: string;
  stderr_tail: string;
  wait_timeout?: boolean;
}

export type ProcessStream = "stdout" | "stderr";

/** One read of a process's log: the chunk with its bytes as they are (raw answers send them so). */
export type ProcessLogRead = Omit<ProcessLogChunk, "data"> & { data: Buffer };

/** GET …/processes/{pid}/logs */
export interface ProcessLogChunk {
  process_id: string;
  stream: ProcessStream;
  /** Where `data` starts: the offset asked for, or oldest_offset when that was rotated away. */
  offset: number;
  next_offset: number;
  /** base64 */
  data: string;
  /** The process ended for good and next_offset is the end of the stream. */
  eof: boolean;
  rotated: boolean;
  oldest_offset: number;
  /** The process's current generation (its restarts). */
  generation: number;
}

/** POST …/processes/{pid}/stdin as JSON (raw bytes go as application/octet-stream, `?eof=true`). */
export interface ProcessStdinRequest {
  /** base64 */
  data?: string;
  eof?: boolean;
}

export interface ProcessStdinAnswer {
  process_id: string;
  generation: number;
  bytes_written: number;
  eof: boolean;
}

export const PROCESS_SIGNALS = ["TERM", "INT", "HUP", "KILL", "USR1", "USR2"] as const;
export type ProcessSignal = (typeof PROCESS_SIGNALS)[number];

export interface ProcessSignalRequest {
  /** A name from PROCESS_SIGNALS, with or without the SIG prefix. */
  signal: string;
}

export interface ProcessSignalAnswer {
  process_id: string;
  /** As Node names it: "SIGTERM". */
  signal: string;
  generation: number;
  os_pid: number;
}

/** Up to 24 h. */
export const PROCESS_TIMEOUT_MAX_MS = 86_400_000;
export const PROCESS_LOG_WAIT_MAX_MS = 60_000;
export const PROCESS_LOG_LIMIT_DEFAULT = 1024 * 1024;
export const PROCESS_LOG_LIMIT_MAX = 8 * 1024 * 1024;
export const PROCESS_STOP_GRACE_DEFAULT_MS = 5000;
export const PROCESS_STOP_GRACE_MAX_MS = 60_000;
/** Bytes of each stream in a process result's tails. */
export const PROCESS_TAIL_BYTES = 4096;
/** Bounds of a restart policy. */
export const RESTART_MAX_RESTARTS_MAX = 1_000_000;
export const RESTART_BACKOFF_MAX_MS = 3_600_000;
