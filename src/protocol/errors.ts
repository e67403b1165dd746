// Every error code of /api/v1 with its status, what it means and the details it
// carries: the one table the backend's statuses, the OpenAPI document (each code's
// body, openapi/document.ts) and docs/protocol.md's table follow. A new code goes in
// ErrorCodes (types.ts) and here; the type checker refuses one without the other.

import { Count, Nullable, type TSchema, Type } from "./schemas/base.js";
import type { ErrorCode } from "./types.js";

export interface ErrorSpec {
  status: number;
  /** One line, as docs/protocol.md's table says it. */
  meaning: string;
  /** The fields `error.details` carries (others may follow: clients ignore them). */
  details?: Record<string, TSchema>;
  /** Response headers that come with it. */
  headers?: readonly string[];
}

const retry = {
  retry_after_ms: Count({ description: "Send it again after this long (also Retry-After, in seconds)." }),
};
const processRef = { process_id: Type.String(), generation: Type.Optional(Count()) };

export const ERRORS = {
  invalid_request: {
    status: 400,
    meaning: "validation failed (`details.field`)",
    details: { field: Type.String({ description: "The body field, query parameter or header at fault." }) },
  },
  isolation_unavailable: {
    status: 400,
    meaning: "the isolation asked for (or the sandbox's) cannot run here; `details.reason`",
    details: { isolation: Type.String(), reason: Type.String() },
  },
  limit_unavailable: {
    status: 400,
    meaning:
      "a limit asked for cannot be enforced here (e.g. a workspace limit without a file system quota); `details.reason`",
    details: { limit: Type.String(), reason: Type.String() },
  },
  network_unavailable: {
    status: 400,
    meaning:
      "the network mode asked for cannot be had here (e.g. user-mode networking without slirp4netns); `details.reason`",
    details: { network_mode: Type.String(), reason: Type.String() },
  },
  image_pull_failed: {
    status: 400,
    meaning:
      "the image asked for could not be pulled or unpacked (the registry's answer, a blob that arrived wrong, a hostile layer); nothing was created; `details.reason`",
    details: { image: Type.String(), reason: Type.String() },
  },
  invalid_path: {
    status: 400,
    meaning: "a files path outside `/workspace` (`..`, elsewhere, a symlink leading out)",
  },
  invalid_archive: {
    status: 400,
    meaning: "an uploaded tar stream is broken or has an entry that may not be unpacked",
  },
  workspace_full: {
    status: 413,
    meaning: "an upload is larger than the room left in the workspace (its limit or its disk); nothing was written",
    details: { needed_bytes: Count(), available_bytes: Count() },
  },
  unauthorized: {
    status: 401,
    meaning: "TCP listener without its token",
    headers: ["WWW-Authenticate"],
  },
  not_found: { status: 404, meaning: "no such route" },
  sandbox_not_found: { status: 404, meaning: "no sandbox with that id or name", details: { sandbox: Type.String() } },
  execution_not_found: { status: 404, meaning: "no such execution in that sandbox" },
  process_not_found: { status: 404, meaning: "no such supervised process in that sandbox" },
  job_not_found: { status: 404, meaning: "no such job in that sandbox" },
  file_not_found: { status: 404, meaning: "nothing at a files path" },
  output_not_found: {
    status: 404,
    meaning: "the execution's full output is not on disk",
    details: { execution_id: Type.String(), stream: Type.String() },
  },
  method_not_allowed: {
    status: 405,
    meaning: "the route exists with another method",
    details: { allowed: Type.Array(Type.String()) },
    headers: ["Allow"],
  },
  sandbox_exists: { status: 409, meaning: "a sandbox with that name exists" },
  process_name_in_use: {
    status: 409,
    meaning: "a process of the sandbox that has not exited has that name; nothing was started",
    details: { name: Type.String(), process_id: Type.String(), state: Type.String() },
  },
  sandbox_busy: {
    status: 409,
    meaning: "the sandbox still runs something (executions, processes, unfinished jobs)",
    details: { sandbox_id: Type.String() },
  },
  job_id_conflict: {
    status: 409,
    meaning: "a job id already names a job with other inputs; nothing admitted",
  },
  request_id_conflict: {
    status: 409,
    meaning: "a jobs request id already names other jobs; nothing admitted",
  },
  path_conflict: {
    status: 409,
    meaning: "a directory where a file goes, or a file where a directory is needed",
  },
  execution_result_unconfirmed: {
    status: 409,
    meaning: "admitted, stored result not confirmed",
    details: { execution_id: Type.String(), idempotency_key: Nullable(Type.String()) },
  },
  request_in_progress: { status: 409, meaning: "the same key is still being admitted" },
  stdin_not_enabled: {
    status: 409,
    meaning: "a stdin write to a process started without `stdin: true`",
    details: processRef,
  },
  stdin_closed: {
    status: 409,
    meaning: "a stdin write after `eof` was sent to the current run",
    details: processRef,
  },
  stdin_busy: {
    status: 409,
    meaning: "more than 1 MiB written earlier is not read yet; nothing was written",
    details: { ...processRef, pending_bytes: Count(), ...retry },
    headers: ["Retry-After"],
  },
  stale_handle: {
    status: 409,
    meaning:
      "the request names another run (`run`) or backend boot (`boot`) than the process's current run or the execution's own; nothing was done",
    details: {
      process_id: Type.Optional(Type.String({ description: "The process (signal, stdin, stop)." })),
      execution_id: Type.Optional(Type.String({ description: "The execution (cancel)." })),
      run: Type.Optional(Count({ description: "The run the request was issued against (`run`)." })),
      current_run: Type.Optional(Count({ description: "A process's run that is current now." })),
      boot: Type.Optional(Type.String({ description: "The backend boot the request was issued in (`boot`)." })),
      current_boot: Nullable(Type.String(), {
        description:
          "The boot the process's current run was started in, or the execution ran in; null for a record from before boots were recorded.",
      }),
    },
  },
  process_not_running: {
    status: 409,
    meaning: "signal or stdin while no run is alive",
    details: { process_id: Type.String(), state: Type.String() },
  },
  payload_too_large: {
    status: 413,
    meaning: "request body over the limit",
    details: { limit_bytes: Count() },
  },
  headers_too_large: {
    status: 431,
    meaning: "request headers (with the URL) over the limit; `details.limit_bytes`",
    details: { limit_bytes: Count() },
  },
  idempotency_key_reused: {
    status: 422,
    meaning: "same key, different body",
    details: { idempotency_key: Type.String() },
  },
  invalid_cursor: {
    status: 422,
    meaning: "event cursor, output offset, terminal `offset` or job `after_seq` beyond what exists",
  },
  terminal_unavailable: {
    status: 422,
    meaning: "a terminal (`tty`) asked of a sandbox whose driver cannot open one here; `details.reason`",
    details: { isolation: Type.String(), reason: Type.String() },
  },
  sandbox_not_running: {
    status: 409,
    meaning:
      "a port forward to a sandbox whose environment does not run (stopped): nothing in it listens; or a pause of one: nothing to pause",
    details: { sandbox_id: Type.String(), port: Type.Optional(Count({ description: "The port (a port forward)." })) },
  },
  volume_not_found: { status: 404, meaning: "no volume with that name", details: { volume: Type.String() } },
  volume_exists: { status: 409, meaning: "a volume with that name exists" },
  volume_in_use: {
    status: 409,
    meaning: "a volume removal while sandboxes mount it (`details.sandboxes`); nothing was removed",
    details: { volume: Type.String(), sandboxes: Type.Array(Type.String()) },
  },
  sandbox_paused: {
    status: 409,
    meaning:
      "a command (execute, process start) asked of a paused sandbox: nothing ran; resume it first (`details.next`)",
    details: {
      sandbox_id: Type.String(),
      next: Type.String({ description: "The command that resumes it: sbx sandbox resume NAME." }),
    },
  },
  pause_unavailable: {
    status: 400,
    meaning:
      "a pause where no cgroup freezer holds the sandbox's processes (isolation none, not root); `details.reason`",
    details: { reason: Type.String() },
  },
  connection_refused: {
    status: 502,
    meaning: "a port forward to a port inside the sandbox where nothing takes connections; `details.reason`",
    details: { sandbox_id: Type.String(), port: Count(), reason: Type.String() },
  },
  upgrade_required: {
    status: 426,
    meaning: "a WebSocket route (terminal, port forward) asked as plain HTTP",
    headers: ["Upgrade"],
  },
  not_a_terminal: {
    status: 409,
    meaning: "the execution or process does not run on a terminal",
  },
  internal_error: { status: 500, meaning: "a bug; the request may or may not have taken effect" },
  sandbox_start_failed: {
    status: 500,
    meaning: "the sandbox could not be set up: the command never ran (`details.cause`, without host paths)",
    details: {
      cause: Type.String({ description: "Why, as the sandbox driver said it, host paths left out." }),
      execution_id: Type.Optional(Type.String({ description: "The execution (admitted, never run)." })),
      process_id: Type.Optional(Type.String({ description: "The process (its first run never started)." })),
    },
  },
  not_started: {
    status: 503,
    meaning: "nothing ran; safe to send again with the same key",
    details: { reason: Type.String(), ...retry },
    headers: ["Retry-After"],
  },
} as const satisfies Record<ErrorCode, ErrorSpec>;

export function errorStatus(code: ErrorCode): number {
  return ERRORS[code].status;
}
