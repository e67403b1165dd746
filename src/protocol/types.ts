// Wire types of /api/v1 (see docs/protocol.md). Shared by the client and the embedded backend;
// neither side's internals belong here. Each wire document is declared once, with TypeBox, in
// schemas/ (its type is derived from the declaration, and the OpenAPI document is built from
// it); this module re-exports the types only, so that what imports it loads no schema.

export type { CommandUsage, EndReason, Outcome, OutputStream } from "./schemas/base.js";
export type {
  ExecuteRequest,
  ExecutionRecord,
  ExecutionList,
  StartedEventData,
  OutputEventData,
  GapEventData,
  ResetEventData,
  ExitEventData,
  EndEventData,
  ExecutionEvent,
  ExecutionEventPage,
  ExecutionOutputChunk,
  CancelRequest,
  CancelAnswer,
  ErrorBody,
} from "./schemas/executions.js";
export type {
  RestartPolicy,
  ProcessStartRequest,
  ProcessEndReason,
  ProcessRunSummary,
  ProcessRecord,
  ProcessList,
  ProcessStreamCapture,
  ProcessResult,
  ProcessLogChunk,
  ProcessStdinRequest,
  ProcessStdinAnswer,
  ProcessSignalRequest,
  ProcessSignalAnswer,
} from "./schemas/processes.js";
export type {
  Isolation,
  IsolationRequest,
  DriverProbeStatus,
  IsolationStatus,
  Health,
  StorageReport,
  SandboxCreateRequest,
  Sandbox,
  SandboxDetails,
  SandboxEnvironment,
  NetworkMode,
  EgressPolicy,
  EgressPolicyRequest,
  PublishRequest,
  PublishedPort,
  SandboxStopped,
  SandboxList,
  SandboxLimits,
  SandboxLimitsRequest,
  SandboxUpdateRequest,
  IdleStatus,
  LimitName,
  LimitStatus,
  FileUpload,
  FileStat,
} from "./schemas/system.js";
export type { SandboxStats } from "./schemas/stats.js";
export type {
  EgressConnection,
  EgressDenial,
  EgressDenied,
  EgressDeniedEventData,
  EgressReport,
} from "./schemas/egress.js";
/** How many of the first egress refusals an execution's record keeps (docs/network.md, "Evidence"). */
export const EGRESS_DENIED_KEPT = 10;
/** How many `egress_denied` events one execution's log gets at most; later refusals are only counted. */
export const EGRESS_DENIED_EVENTS_MAX = 100;
export { Volume, VolumeCreateRequest, VolumeList, VolumeMount } from "./schemas/volumes.js";

import type { Outcome } from "./schemas/base.js";
import type { ProcessLogChunk, RestartPolicy } from "./schemas/processes.js";

export const API_PREFIX = "/api/v1";
/** A response header with a warning for the person behind the request (sbx prints it on stderr). */
export const WARNING_HEADER = "Sbx-Warning";
export const PROTOCOL_VERSION = 1;
/** On the answer to a mutation whose Idempotency-Key (or jobs request id) was seen before: nothing new was done. */
export const REPLAYED_HEADER = "Idempotent-Replayed";

/** Names (sandboxes, processes, jobs, profiles): no path separators, no spaces, at most 63 characters. */
export const NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$";
/**
 * What a request that acts on an execution or a process names of the run it was issued
 * against (docs/protocol.md, "Ownership fences"): `?run=` (a process's generation) and
 * `?boot=` (the backend boot); each optional, neither: the current run.
 */
export interface Handle {
  run?: number | undefined;
  boot?: string | undefined;
}

/** A backend boot as a handle names it (`?boot=`): opaque, at most 64 characters (sbx's: boot_ and 16 hex). */
export const BOOT_PATTERN = "^[A-Za-z0-9_.:-]{1,64}$";
/** Idempotency keys (and jobs' request ids). */
export const IDEMPOTENCY_KEY_PATTERN = "^[A-Za-z0-9_:.-]{1,255}$";

export const TIMEOUT_MIN_MS = 1_000;
export const TIMEOUT_MAX_MS = 600_000;
export const TIMEOUT_DEFAULT_MS = 120_000;
/** An execution on a terminal (tty) may run this long, and does by default (a day). */
export const TTY_TIMEOUT_MAX_MS = 86_400_000;
/** One message on a terminal's WebSocket at most (input, or a control message). */
export const TERMINAL_MESSAGE_MAX_BYTES = 1024 * 1024;
/** A terminal's columns and rows at most. */
export const TERMINAL_SIZE_MAX = 10_000;

export const TERMINAL_OUTCOMES: readonly Outcome[] = ["succeeded", "failed", "timed_out", "cancelled", "unknown"];

export const EXECUTION_EVENT_TYPES = ["started", "output", "gap", "reset", "egress_denied", "exit", "end"] as const;
export type ExecutionEventType = (typeof EXECUTION_EVENT_TYPES)[number];

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
  /** Output: how many bytes of the stream the backend keeps (readable); fewer than Sbx-Stream-Bytes past its cap. */
  keptBytes: "Sbx-Kept-Bytes",
  /** Output: connections its sandbox's egress policy refused while the execution ran (absent: none). */
  egressDenied: "Sbx-Egress-Denied",
  rotated: "Sbx-Rotated",
  oldestOffset: "Sbx-Oldest-Offset",
  generation: "Sbx-Generation",
} as const;

/** Headers of a GET …/files answer. */
export const FILE_TYPE_HEADER = "Sbx-File-Type";
export const FILE_MODE_HEADER = "Sbx-File-Mode";
export const TAR_CONTENT_TYPE = "application/x-tar";

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
  /** The sandbox could not be set up: the command never ran (sbx). */
  sandboxStartFailed: "sandbox_start_failed",
  sandboxExists: "sandbox_exists",
  /** A process start whose name a process of the sandbox that has not exited already has (sbx). */
  processNameInUse: "process_name_in_use",
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
  /** A limit asked for that this backend cannot enforce; details.reason says why (sbx). */
  limitUnavailable: "limit_unavailable",
  /** An upload larger than the room left in the workspace (its limit, or its disk); nothing was written (sbx). */
  workspaceFull: "workspace_full",
  /** The image asked for could not be pulled or unpacked; nothing was created; details.reason says why (sbx). */
  imagePullFailed: "image_pull_failed",
  /** The network mode asked for cannot be had on this backend; details.reason says why (sbx). */
  networkUnavailable: "network_unavailable",
  methodNotAllowed: "method_not_allowed",
  payloadTooLarge: "payload_too_large",
  /** Request headers (with the URL) over the backend's limit; nothing was done. */
  headersTooLarge: "headers_too_large",
  /** An event cursor (after, Last-Event-ID, after_sequence) or output offset beyond what exists. */
  invalidCursor: "invalid_cursor",
  /** A port forward to a sandbox whose environment does not run (stopped): nothing in it listens (sbx). */
  sandboxNotRunning: "sandbox_not_running",
  /** A command (execute, process start) asked of a paused sandbox; nothing ran; `sbx sandbox resume` (sbx). */
  sandboxPaused: "sandbox_paused",
  /** No volume with that name (sbx). */
  volumeNotFound: "volume_not_found",
  /** A volume with that name exists (sbx). */
  volumeExists: "volume_exists",
  /** A volume removal while sandboxes mount it; details.sandboxes names them (sbx). */
  volumeInUse: "volume_in_use",
  /** A pause asked where no cgroup freezer holds the sandbox's processes; details.reason says why (sbx). */
  pauseUnavailable: "pause_unavailable",
  /** A port forward whose port inside the sandbox takes no connection: nothing listens there (sbx). */
  connectionRefused: "connection_refused",
  /** A WebSocket route (terminal, port forward) asked without a WebSocket upgrade. */
  upgradeRequired: "upgrade_required",
  /** The execution or process did not run on a terminal. */
  notATerminal: "not_a_terminal",
  /** A terminal was asked of a sandbox whose driver cannot give one here (details.reason). */
  terminalUnavailable: "terminal_unavailable",
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
  /** A request issued against another run of a process than the current one; nothing was done. */
  staleHandle: "stale_handle",
  /** No job with this id in this sandbox. */
  jobNotFound: "job_not_found",
  /** A job id already names a job with other inputs; nothing was admitted. */
  jobIdConflict: "job_id_conflict",
  /** A request id already names a submission of other jobs; nothing was admitted. */
  requestIdConflict: "request_id_conflict",
  internal: "internal_error",
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export const WAIT_MAX_MS = 50_000;
/** Pages of GET …/executions, …/events and …/output. */
export const EXECUTION_LIST_LIMIT_DEFAULT = 50;
export const EXECUTION_LIST_LIMIT_MAX = 200;
export const EXECUTION_EVENTS_LIMIT_DEFAULT = 100;
export const EXECUTION_EVENTS_LIMIT_MAX = 1000;
export const EXECUTION_OUTPUT_LIMIT_DEFAULT = 1024 * 1024;
export const EXECUTION_OUTPUT_LIMIT_MAX = 4 * 1024 * 1024;
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

/** Up to 24 h. */
export const PROCESS_TIMEOUT_MAX_MS = 86_400_000;
export const PROCESS_LOG_WAIT_MAX_MS = 60_000;
export const PROCESS_LOG_LIMIT_DEFAULT = 1024 * 1024;
export const PROCESS_LOG_LIMIT_MAX = 8 * 1024 * 1024;
/** A raw read (streamed from the log's files, never held) may ask for the whole kept window at once. */
export const PROCESS_LOG_RAW_LIMIT_MAX = 64 * 1024 * 1024;
export const PROCESS_STOP_GRACE_DEFAULT_MS = 5000;
export const PROCESS_STOP_GRACE_MAX_MS = 60_000;
/** Bytes of each stream in a process result's tails. */
export const PROCESS_TAIL_BYTES = 4096;
/** Bounds of a restart policy. */
export const RESTART_MAX_RESTARTS_MAX = 1_000_000;
export const RESTART_BACKOFF_MAX_MS = 3_600_000;

export const RESTART_POLICY_NAMES = ["never", "on-failure", "always"] as const;
export type RestartPolicyName = (typeof RESTART_POLICY_NAMES)[number];

export const RESTART_DEFAULTS: RestartPolicy = {
  policy: "never",
  max_restarts: 5,
  backoff_ms: 1000,
  max_backoff_ms: 30_000,
};

export const PROCESS_STATES = ["running", "backoff", "stopping", "exited"] as const;
export type ProcessState = (typeof PROCESS_STATES)[number];

export const PROCESS_SIGNALS = ["TERM", "INT", "HUP", "KILL", "USR1", "USR2"] as const;
export type ProcessSignal = (typeof PROCESS_SIGNALS)[number];

export type ProcessStream = "stdout" | "stderr";

/** One read of a process's log: the chunk with its bytes as they are (raw answers send them so). */
export type ProcessLogRead = Omit<ProcessLogChunk, "data"> & { data: Buffer };
