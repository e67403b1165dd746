// Wire schemas of supervised processes (docs/protocol.md, "Supervised processes"),
// each declared once (see base.ts).

import { TerminalSize } from "./executions.js";
import {
  Base64,
  Command,
  Count,
  CommandUsage,
  EndReason,
  Env,
  named,
  Nullable,
  Outcome,
  type Static,
  StringEnum,
  Timestamp,
  Type,
} from "./base.js";
import {
  NAME_PATTERN,
  PROCESS_SIGNALS,
  PROCESS_STATES,
  PROCESS_TIMEOUT_MAX_MS,
  RESTART_BACKOFF_MAX_MS,
  RESTART_MAX_RESTARTS_MAX,
  RESTART_POLICY_NAMES,
} from "../types.js";

const restartFields = {
  policy: StringEnum(RESTART_POLICY_NAMES),
  max_restarts: Type.Integer({
    minimum: 0,
    maximum: RESTART_MAX_RESTARTS_MAX,
    description: "Restarts allowed in one window (a run that stays up 30 s opens a new window).",
  }),
  backoff_ms: Type.Integer({
    minimum: 1,
    maximum: RESTART_BACKOFF_MAX_MS,
    description: "The first back-off; it doubles with each restart in the window.",
  }),
  max_backoff_ms: Type.Integer({ minimum: 1, maximum: RESTART_BACKOFF_MAX_MS }),
};

export const RestartPolicy = named("RestartPolicy", Type.Object(restartFields));
export type RestartPolicy = Static<typeof RestartPolicy>;

export const ProcessStartRequest = named(
  "ProcessStartRequest",
  Type.Object(
    {
      command: Command,
      working_dir: Type.Optional(Type.String()),
      env: Type.Optional(Env),
      name: Type.Optional(Nullable(Type.String({ pattern: NAME_PATTERN }))),
      stdin: Type.Optional(
        Type.Boolean({ default: false, description: "A pipe to write to later (POST …/stdin); otherwise /dev/null." }),
      ),
      timeout_ms: Type.Optional(
        Nullable(Type.Integer({ minimum: 1, maximum: PROCESS_TIMEOUT_MAX_MS }), {
          description: "Limit on the process's whole life (all restarts), from its first start; null: none.",
        }),
      ),
      restart: Type.Optional(
        Type.Partial(Type.Object(restartFields), {
          additionalProperties: false,
          description: "Missing fields take defaults.",
        }),
      ),
      tty: Type.Optional(TerminalSize),
    },
    { additionalProperties: false },
  ),
);
export type ProcessStartRequest = Static<typeof ProcessStartRequest>;

/**
 * Why a process ended for good: `exited` (its policy does not restart that end),
 * `max_restarts` (the restart budget was spent), `stopped` (DELETE), `timed_out`
 * (timeout_ms), `backend_shutdown` (the daemon stopped it on its way down; `always`
 * processes start again with the daemon), `backend_lost` (it was running when the
 * daemon died; its outcome is unknown), `start_failed` (its sandbox could not be set up:
 * the command never ran, and it is not started again; sbx), `out_of_memory` (its last run
 * was killed by the kernel at its sandbox's memory limit and its policy does not start it
 * again; sbx).
 */
export const ProcessEndReason = named(
  "ProcessEndReason",
  StringEnum([
    "exited",
    "max_restarts",
    "stopped",
    "timed_out",
    "backend_shutdown",
    "backend_lost",
    "start_failed",
    "out_of_memory",
  ]),
);
export type ProcessEndReason = Static<typeof ProcessEndReason>;

/** One run (generation) of a process that ended. */
export const ProcessRunSummary = named(
  "ProcessRunSummary",
  Type.Object({
    generation: Count(),
    outcome: Outcome,
    exit_code: Nullable(Type.Integer()),
    signal: Nullable(Type.String()),
    end_reason: Type.Optional(
      Nullable(EndReason, { description: "out_of_memory: the kernel killed it at its sandbox's memory limit (sbx)." }),
    ),
    usage: Type.Optional(
      Nullable(CommandUsage, {
        description:
          'What it used, measured for it alone (docs/operations.md, "Per-command usage"); null until it ended, when it never started, or for a record from before usage was measured (sbx).',
      }),
    ),
    started_at: Nullable(Timestamp()),
    ended_at: Nullable(Timestamp()),
  }),
);
export type ProcessRunSummary = Static<typeof ProcessRunSummary>;

const processFields = {
  process_id: Type.String({ description: "prc_…" }),
  sandbox_id: Type.String(),
  name: Nullable(Type.String()),
  idempotency_key: Nullable(Type.String()),
  command: Command,
  working_dir: Type.String(),
  state: StringEnum(PROCESS_STATES),
  boot: Type.Optional(
    Nullable(Type.String(), {
      description:
        "The backend boot the current (or last) run was started in (a handle: `?boot=` on signal, stdin and stop); null before a run started or for a record kept from before boots were recorded (sbx).",
    }),
  ),
  os_pid: Nullable(Type.Integer(), {
    description: "pid of the current run's leader (its process group id); null when none runs.",
  }),
  restarts: Count({ description: "Restarts so far; also the current generation." }),
  restart: RestartPolicy,
  stdin_enabled: Type.Boolean(),
  tty: Type.Optional(
    Type.Boolean({ description: "Each run on a terminal of its own; its stdout log is the transcript (sbx)." }),
  ),
  timeout_ms: Nullable(Type.Integer()),
  outcome: Outcome,
  exit_code: Nullable(Type.Integer()),
  signal: Nullable(Type.String()),
  end_reason: Nullable(ProcessEndReason),
  last_run: Nullable(ProcessRunSummary, { description: "The last run that ended (null before one did)." }),
  next_restart_at: Nullable(Timestamp(), { description: "When the next run starts (state `backoff`)." }),
  recovery: Type.Optional(
    Nullable(Type.String(), {
      description: "What a restarted backend found of the process group of a run it had lost, or null (sbx).",
    }),
  ),
  created_at: Timestamp(),
  started_at: Nullable(Timestamp(), { description: "Start of the current (or last) run." }),
  ended_at: Nullable(Timestamp(), { description: "When the process ended for good." }),
};

export const ProcessRecord = named("ProcessRecord", Type.Object(processFields));
export type ProcessRecord = Static<typeof ProcessRecord>;

/** DELETE …/processes/{pid}: the record once stopped; `removed` with `&remove=true`. */
export const ProcessStopAnswer = named(
  "ProcessStopAnswer",
  Type.Object({ ...processFields, removed: Type.Optional(Type.Literal(true)) }),
);

export const ProcessList = named("ProcessList", Type.Object({ processes: Type.Array(ProcessRecord) }));
export type ProcessList = Static<typeof ProcessList>;

export const ProcessStreamCapture = named(
  "ProcessStreamCapture",
  Type.Object({
    bytes: Count({ description: "Bytes the stream produced over the process's life." }),
    oldest_offset: Count(),
    rotated: Type.Boolean({ description: "Some of the stream was rotated away (oldest_offset > 0)." }),
  }),
);
export type ProcessStreamCapture = Static<typeof ProcessStreamCapture>;

export const ProcessResult = named(
  "ProcessResult",
  Type.Object({
    process_id: Type.String(),
    outcome: Outcome,
    exit_code: Nullable(Type.Integer()),
    signal: Nullable(Type.String()),
    end_reason: Nullable(ProcessEndReason),
    complete: Type.Boolean({ description: "The process ended for good and its logs are closed." }),
    output_capture: Type.Object({ stdout: ProcessStreamCapture, stderr: ProcessStreamCapture }),
    started_at: Nullable(Timestamp()),
    ended_at: Nullable(Timestamp()),
    restarts: Count(),
    stdout_tail: Type.String({ description: "The last 4096 bytes of stdout, UTF-8 with invalid bytes replaced." }),
    stderr_tail: Type.String(),
    wait_timeout: Type.Optional(Type.Boolean()),
  }),
);
export type ProcessResult = Static<typeof ProcessResult>;

/** GET …/processes/{pid}/logs */
export const ProcessLogChunk = named(
  "ProcessLogChunk",
  Type.Object({
    process_id: Type.String(),
    stream: StringEnum(["stdout", "stderr"]),
    offset: Count({
      description: "Where `data` starts: the offset asked for, or oldest_offset when that was rotated away.",
    }),
    next_offset: Count(),
    data: Base64(),
    eof: Type.Boolean({ description: "The process ended for good and next_offset is the end of the stream." }),
    rotated: Type.Boolean(),
    oldest_offset: Count(),
    generation: Count({ description: "The process's current generation (its restarts)." }),
  }),
);
export type ProcessLogChunk = Static<typeof ProcessLogChunk>;

/** POST …/processes/{pid}/stdin as JSON (raw bytes go as application/octet-stream, `?eof=true`). */
export const ProcessStdinRequest = named(
  "ProcessStdinRequest",
  Type.Object({ data: Type.Optional(Base64()), eof: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
);
export type ProcessStdinRequest = Static<typeof ProcessStdinRequest>;

export const ProcessStdinAnswer = named(
  "ProcessStdinAnswer",
  Type.Object({ process_id: Type.String(), generation: Count(), bytes_written: Count(), eof: Type.Boolean() }),
);
export type ProcessStdinAnswer = Static<typeof ProcessStdinAnswer>;

export const ProcessSignalRequest = named(
  "ProcessSignalRequest",
  Type.Object(
    {
      signal: StringEnum([...PROCESS_SIGNALS, ...PROCESS_SIGNALS.map((s) => `SIG${s}`)], {
        description: "With or without the SIG prefix.",
      }),
    },
    { additionalProperties: false },
  ),
);
export interface ProcessSignalRequest {
  /** A name from PROCESS_SIGNALS, with or without the SIG prefix. */
  signal: string;
}

export const ProcessSignalAnswer = named(
  "ProcessSignalAnswer",
  Type.Object({
    process_id: Type.String(),
    signal: Type.String({ description: 'As Node names it: "SIGTERM".' }),
    generation: Count(),
    os_pid: Type.Integer(),
  }),
);
export type ProcessSignalAnswer = Static<typeof ProcessSignalAnswer>;
