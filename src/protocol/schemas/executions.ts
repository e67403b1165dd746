// Wire schemas of executions: the request, the record, the event log and its pages
// (docs/protocol.md, "Executions"), each declared once (see base.ts).

import {
  Base64,
  Command,
  CommandUsage,
  Count,
  described,
  EndReason,
  Env,
  named,
  Nullable,
  Outcome,
  OutputStream,
  type Static,
  StringEnum,
  StringMap,
  Timestamp,
  Type,
} from "./base.js";
import {
  EXECUTION_EVENT_TYPES,
  type ExecutionEventType,
  TIMEOUT_DEFAULT_MS,
  TERMINAL_SIZE_MAX,
  TIMEOUT_MAX_MS,
  TIMEOUT_MIN_MS,
  TTY_TIMEOUT_MAX_MS,
} from "../types.js";
import { EgressDenied, EgressDeniedEventData } from "./egress.js";

/** A terminal's window size (docs/protocol.md, "Terminals"). */
export const TerminalSize = named(
  "TerminalSize",
  Type.Object(
    {
      cols: Type.Integer({ minimum: 1, maximum: TERMINAL_SIZE_MAX }),
      rows: Type.Integer({ minimum: 1, maximum: TERMINAL_SIZE_MAX }),
    },
    {
      additionalProperties: false,
      description:
        "Run the command on a pseudo-terminal of the sandbox's own, this size: its output is one stream (stdout), its input and resizes come through …/terminal.",
    },
  ),
);
export type TerminalSize = Static<typeof TerminalSize>;

export const ExecuteRequest = named(
  "ExecuteRequest",
  Type.Object(
    {
      command: Command,
      working_dir: Type.Optional(Type.String({ description: "Inside /workspace (relative paths are taken from it)." })),
      env: Type.Optional(Env),
      stream: Type.Optional(
        Type.Boolean({ default: false, description: "true: answer text/event-stream of the execution's events." }),
      ),
      timeout: Type.Optional(
        Type.Integer({
          minimum: TIMEOUT_MIN_MS,
          maximum: TTY_TIMEOUT_MAX_MS,
          default: TIMEOUT_DEFAULT_MS,
          description: `Milliseconds: at most ${TIMEOUT_MAX_MS}, or ${TTY_TIMEOUT_MAX_MS} (the default then) with tty.`,
        }),
      ),
      stdin: Type.Optional(Base64({ description: "Bytes written once to the command's stdin." })),
      tty: Type.Optional(TerminalSize),
    },
    { additionalProperties: false },
  ),
);
export type ExecuteRequest = Static<typeof ExecuteRequest>;

export const ExecutionRecord = named(
  "ExecutionRecord",
  Type.Object({
    recovery: Type.Optional(
      Nullable(Type.String(), {
        description:
          'What a restarted backend found of the process group of an execution it had lost (e.g. "process group 1234 killed"), or that it followed the execution again (a Slurm step that outlived it), or null (sbx).',
      }),
    ),
    execution_id: Type.String({ description: "exe_…" }),
    sandbox_id: Type.String(),
    boot: Type.Optional(
      Nullable(Type.String(), {
        description:
          "The backend boot the execution ran in (its handle: `?boot=` on cancel); null for a record kept from before boots were recorded (sbx).",
      }),
    ),
    idempotency_key: Nullable(Type.String()),
    command: Command,
    working_dir: Type.String(),
    timeout: Type.Integer({ description: "Milliseconds." }),
    outcome: Outcome,
    exit_code: Nullable(Type.Integer()),
    signal: Nullable(Type.String({ description: 'A POSIX signal name as Node reports it ("SIGKILL").' })),
    system_error: Nullable(
      Type.String({
        description:
          "exec_stream_lost, exit_status_unknown, backend_shutdown, driver_error, node_failed (a Slurm node failed under it), …",
      }),
    ),
    end_reason: Type.Optional(
      Nullable(EndReason, {
        description:
          "out_of_memory: the kernel killed it at its sandbox's memory limit (signal SIGKILL); else null (sbx).",
      }),
    ),
    image_digest: Type.Optional(
      Nullable(Type.String({ pattern: "^sha256:[0-9a-f]{64}$" }), {
        description:
          "The manifest digest of the image its sandbox's root was made from (docs/images.md); null: the host's system directories (sbx).",
      }),
    ),
    usage: Type.Optional(
      Nullable(CommandUsage, {
        description:
          'What it used, measured for it alone (docs/operations.md, "Per-command usage"); null until it ended, when it never started, or for a record from before usage was measured (sbx).',
      }),
    ),
    egress_denied: Type.Optional(
      described(
        EgressDenied,
        'Connections its sandbox\'s egress proxy refused while it ran (network allow-list; docs/network.md, "Evidence"); absent when none was (sbx).',
      ),
    ),
    record_pending: Type.Boolean({
      description: "The result is kept but its summary could not be published yet; do not resubmit.",
    }),
    cancel_requested: Type.Boolean(),
    stdout: Type.String({ description: "The last 1 MiB, UTF-8 with invalid bytes replaced." }),
    stderr: Type.String(),
    stdout_bytes: Count(),
    stderr_bytes: Count(),
    stdout_truncated: Type.Boolean(),
    stderr_truncated: Type.Boolean(),
    created_at: Timestamp(),
    started_at: Nullable(Timestamp()),
    finished_at: Nullable(Timestamp()),
    duration_ms: Nullable(Count()),
    last_event_id: Count(),
    tty: Type.Optional(
      Type.Boolean({ description: "Run on a terminal: its output (stdout) is the terminal's transcript (sbx)." }),
    ),
    wait_timeout: Type.Optional(
      Type.Boolean({ description: "A wait_ms wait ran out while the execution was still pending." }),
    ),
  }),
);
export type ExecutionRecord = Static<typeof ExecutionRecord>;

export const ExecutionList = named(
  "ExecutionList",
  Type.Object({
    executions: Type.Array(ExecutionRecord, { description: "Newest first." }),
    next_cursor: Nullable(Type.String()),
    live_count: Count(),
  }),
);
export type ExecutionList = Static<typeof ExecutionList>;

// ── execution events (the durable event log, its SSE stream and its pages) ──

export const StartedEventData = named(
  "StartedEventData",
  Type.Object({
    execution_id: Type.String(),
    sandbox_id: Type.String(),
    started_at: Timestamp(),
    boot: Type.Optional(Type.String({ description: "The backend boot it runs in (sbx)." })),
  }),
);
export type StartedEventData = Static<typeof StartedEventData>;

export const OutputEventData = named(
  "OutputEventData",
  Type.Object({
    stream: OutputStream,
    offset: Count({ description: "Byte offset of this chunk in its stream." }),
    data: Base64({ description: "At most 64 KiB of raw bytes." }),
    kept: Type.Optional(
      Type.Literal(false, {
        description:
          "false: bytes past the backend's full-output cap, sent live to this reader only (an SSE frame without id); no replay has them.",
      }),
    ),
  }),
);
export type OutputEventData = Static<typeof OutputEventData>;

/** Output not put into events (past the event output budget); readable from …/output. */
export const GapEventData = named(
  "GapEventData",
  Type.Object({
    stream: OutputStream,
    offset: Count(),
    bytes: Count(),
    kept: Type.Optional(
      Type.Boolean({ description: "false: past the backend's full-output cap, these bytes were not kept at all." }),
    ),
  }),
);
export type GapEventData = Static<typeof GapEventData>;

/** Replaces what a reader accumulated: each stream's last bytes, starting at its `_offset`. */
export const ResetEventData = named(
  "ResetEventData",
  Type.Object({ stdout: Base64(), stderr: Base64(), stdout_offset: Count(), stderr_offset: Count() }),
);
export type ResetEventData = Static<typeof ResetEventData>;

export const ExitEventData = named(
  "ExitEventData",
  Type.Object({
    outcome: Outcome,
    exit_code: Nullable(Type.Integer()),
    signal: Nullable(Type.String()),
    system_error: Nullable(Type.String()),
    end_reason: Type.Optional(Nullable(EndReason, { description: "As the execution record's (sbx)." })),
    usage: Type.Optional(Nullable(CommandUsage, { description: "As the execution record's (sbx)." })),
    egress_denied: Type.Optional(EgressDenied),
    record_pending: Type.Boolean(),
    finished_at: Nullable(Timestamp()),
  }),
);
export type ExitEventData = Static<typeof ExitEventData>;

export const EndEventData = named(
  "EndEventData",
  Type.Object({
    state: StringEnum(["complete", "incomplete"]),
    reason: Type.Optional(Type.String({ description: "e.g. exec_stream_lost, driver_error" })),
  }),
);
export type EndEventData = Static<typeof EndEventData>;

/** The data of each event type: the SSE `data:` line and an event page's `data`. */
export const EVENT_DATA = {
  started: StartedEventData,
  output: OutputEventData,
  gap: GapEventData,
  reset: ResetEventData,
  egress_denied: EgressDeniedEventData,
  exit: ExitEventData,
  end: EndEventData,
} as const satisfies Record<ExecutionEventType, unknown>;

/** One event of an execution's log, as an event page carries it (its `data` per `type`). */
export const ExecutionEvent = named(
  "ExecutionEvent",
  Type.Union(
    EXECUTION_EVENT_TYPES.map((type) =>
      Type.Object({
        sequence: Type.Integer({ minimum: 1 }),
        type: Type.Literal(type),
        at: Timestamp(),
        data: EVENT_DATA[type],
      }),
    ),
  ),
);
export interface ExecutionEvent {
  sequence: number;
  type: ExecutionEventType;
  at: string;
  data: unknown;
}

/** GET …/executions/{eid}/events */
export const ExecutionEventPage = named(
  "ExecutionEventPage",
  Type.Object({
    events: Type.Array(ExecutionEvent),
    has_more: Type.Boolean({ description: "More events exist after this page already." }),
    next_cursor: Count({
      description: "The after_sequence of the next page: the last sequence in this one (or the one asked for).",
    }),
  }),
);
export interface ExecutionEventPage {
  events: ExecutionEvent[];
  has_more: boolean;
  next_cursor: number;
}

/** GET …/executions/{eid}/output: raw bytes of one stream by byte offset (our design, docs/protocol.md). */
export const ExecutionOutputChunk = named(
  "ExecutionOutputChunk",
  Type.Object({
    stream: OutputStream,
    offset: Count(),
    next_offset: Count(),
    data: Base64(),
    eof: Type.Boolean({ description: "The execution ended and next_offset is the end of its stream." }),
  }),
);
export type ExecutionOutputChunk = Static<typeof ExecutionOutputChunk>;

export const CancelRequest = named(
  "CancelRequest",
  Type.Object({ reason: Type.Optional(Type.String()) }, { additionalProperties: false }),
);
export type CancelRequest = Static<typeof CancelRequest>;

export const CancelAnswer = named(
  "CancelAnswer",
  Type.Object({
    execution_id: Type.String(),
    cancel: StringEnum(["requested", "already_terminal"]),
    cancellable: Type.Literal("hard"),
  }),
);
export type CancelAnswer = Static<typeof CancelAnswer>;

export const ErrorBody = named(
  "ErrorBody",
  Type.Object({
    error: Type.Object({
      code: Type.String({ description: "Stable; see the error codes." }),
      message: Type.String(),
      details: Type.Optional(StringMap(Type.Unknown())),
    }),
  }),
);
export type ErrorBody = Static<typeof ErrorBody>;
