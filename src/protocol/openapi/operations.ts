// What each route of the table (routes.ts) takes and answers, for the OpenAPI
// document (document.ts builds it from this, the route table, the wire schemas and
// the error table); the sandbox routes' are in sandbox-operations.ts. A new route: its line in routes.ts, then its entry here (the
// type checker asks for it); a new error code a route answers: its name in `errors`.
// See docs/protocol.md, "The OpenAPI document".

import { JOB_OUTPUT_PAGE_DEFAULT, JOB_OUTPUT_PAGE_MAX, JOB_STATUSES_ALL, JOB_WAIT_MAX_MS } from "../jobs.js";
import type { RouteName } from "../routes.js";
import { Outcome, StringEnum, Type } from "../schemas/base.js";
import {
  CancelAnswer,
  CancelRequest,
  ExecuteRequest,
  ExecutionEventPage,
  ExecutionList,
  ExecutionOutputChunk,
  ExecutionRecord,
} from "../schemas/executions.js";
import {
  JobCancelAnswer,
  JobCancelRequest,
  JobList,
  JobRecord,
  JobSubmitAnswer,
  JobSubmitRequest,
} from "../schemas/jobs.js";
import {
  ProcessList,
  ProcessLogChunk,
  ProcessRecord,
  ProcessResult,
  ProcessSignalAnswer,
  ProcessSignalRequest,
  ProcessStartRequest,
  ProcessStdinAnswer,
  ProcessStdinRequest,
  ProcessStopAnswer,
} from "../schemas/processes.js";
import { FileStat, FileUpload, Health, StorageReport } from "../schemas/system.js";
import {
  BOOT_PATTERN,
  EXECUTION_EVENTS_LIMIT_DEFAULT,
  EXECUTION_EVENTS_LIMIT_MAX,
  EXECUTION_LIST_LIMIT_DEFAULT,
  EXECUTION_LIST_LIMIT_MAX,
  EXECUTION_OUTPUT_LIMIT_DEFAULT,
  EXECUTION_OUTPUT_LIMIT_MAX,
  FILE_MODE_HEADER,
  FILE_TYPE_HEADER,
  OCTET_STREAM,
  PROCESS_LOG_LIMIT_DEFAULT,
  PROCESS_LOG_LIMIT_MAX,
  PROCESS_LOG_RAW_LIMIT_MAX,
  PROCESS_LOG_WAIT_MAX_MS,
  PROCESS_STOP_GRACE_DEFAULT_MS,
  PROCESS_STOP_GRACE_MAX_MS,
  RAW_HEADERS,
  TAR_CONTENT_TYPE,
  WAIT_MAX_MS,
} from "../types.js";
import {
  EVENT_STREAM,
  flag,
  header,
  int,
  json,
  key,
  type OperationSpec,
  type ParameterSpec,
  type ResponseSpec,
  replayed,
} from "./operation-spec.js";
import { filesGet, filesPut } from "./files-operations.js";
import { SANDBOX_OPERATIONS } from "./sandbox-operations.js";

export { EVENT_STREAM, type OperationSpec, type ParameterSpec, type ResponseSpec };

const streamParam: ParameterSpec = {
  schema: StringEnum(["stdout", "stderr"], { default: "stdout" }),
  description: "Which stream.",
};
const acceptRaw = {
  Accept: header(`\`${OCTET_STREAM}\` for the bytes themselves (their place in the Sbx-* headers) instead of JSON.`),
};

/** The raw read's headers (docs/protocol.md, "Raw reads"). */
const rawHeaders = (extra: Record<string, ParameterSpec>): Record<string, ParameterSpec> => ({
  [RAW_HEADERS.stream]: header("stdout or stderr", StringEnum(["stdout", "stderr"])),
  [RAW_HEADERS.offset]: header("Where the bytes start.", Type.String({ pattern: "^[0-9]+$" })),
  [RAW_HEADERS.nextOffset]: header("Read on from here.", Type.String({ pattern: "^[0-9]+$" })),
  [RAW_HEADERS.eof]: header("true once everything was read.", StringEnum(["true", "false"])),
  ...extra,
});

/** A terminal route (docs/protocol.md, "Terminals"): a WebSocket to `what`'s terminal. */
function terminalOperation(tag: "executions" | "processes", summary: string, what: string): OperationSpec {
  return {
    summary,
    description: `A WebSocket (Connection: Upgrade, Upgrade: websocket) to ${what}: binary messages are the terminal's output from \`offset\` one way and input the other; text messages are JSON control messages (resize; attached, gap, detached, exit). The last client to attach is the one attached. See docs/protocol.md, "Terminals".`,
    tag,
    query: {
      offset: int(
        0,
        Number.MAX_SAFE_INTEGER,
        "Transcript byte offset to send from (default: its end, what comes next; 0 replays all of it).",
      ),
    },
    headers: {
      Upgrade: { schema: StringEnum(["websocket"]), description: "Required: the route is a WebSocket." },
    },
    responses: { 101: { description: "Switching Protocols: the terminal's WebSocket." } },
    errors: ["not_a_terminal", "upgrade_required", "invalid_cursor"],
  };
}

const run: ParameterSpec = {
  schema: Type.Integer({ minimum: 0 }),
  description:
    "The run (generation) this request was issued against: refused with 409 stale_handle, nothing done, while another run is current.",
};

const boot = (of: string): ParameterSpec => ({
  schema: Type.String({ pattern: BOOT_PATTERN }),
  description: `The backend boot this request was issued in (\`boot\` of an answer): refused with 409 stale_handle, nothing done, unless ${of}.`,
});
const processBoot = boot("the process's current run was started in it");

const stream = (description: string): ResponseSpec => ({ description, content: { [EVENT_STREAM]: Type.String() } });

export const OPERATIONS: Record<RouteName, OperationSpec> = {
  health: {
    summary: "Health, version and isolation",
    tag: "system",
    responses: { 200: { description: "The backend answers.", content: json(Health) } },
    errors: [],
  },
  openapi: {
    summary: "This OpenAPI document",
    tag: "system",
    responses: {
      200: {
        description: "The OpenAPI 3.1 document of /api/v1.",
        content: json(Type.Object({ openapi: Type.Literal("3.1.0") }, { additionalProperties: true })),
      },
    },
    errors: [],
  },
  storage: {
    summary: "What the backend keeps, its size and its retention (sbx)",
    tag: "system",
    responses: { 200: { description: "The storage report.", content: json(StorageReport) } },
    errors: [],
  },
  ...SANDBOX_OPERATIONS,
  execute: {
    summary: "Run one bounded command",
    description:
      "`stream: false` answers the execution record once the command ended; `stream: true` answers the execution's events as they happen (text/event-stream).",
    tag: "executions",
    body: { required: true, content: json(ExecuteRequest) },
    responses: {
      200: {
        description: "The execution record, or its event stream (`stream: true`).",
        content: { ...json(ExecutionRecord), [EVENT_STREAM]: Type.String() },
        headers: replayed,
      },
    },
    errors: [
      "isolation_unavailable",
      "execution_result_unconfirmed",
      "sandbox_start_failed",
      "terminal_unavailable",
      "sandbox_paused",
    ],
  },
  "executions.list": {
    summary: "Executions of a sandbox, newest first",
    tag: "executions",
    query: {
      limit: int(1, EXECUTION_LIST_LIMIT_MAX, "Records per page.", EXECUTION_LIST_LIMIT_DEFAULT),
      cursor: {
        schema: Type.String({ pattern: "^[0-9]+$" }),
        description: "next_cursor of the previous page.",
      },
      outcome: { schema: Outcome, description: "Only executions with this outcome." },
      idempotency_key: key("The execution this key created (recovery when no id was received)."),
      id_prefix: key("Only executions whose id starts with this (a short form or any prefix)."),
    },
    responses: { 200: { description: "A page of records.", content: json(ExecutionList) } },
    errors: [],
  },
  "executions.get": {
    summary: "An execution record",
    tag: "executions",
    query: {
      wait_ms: int(0, WAIT_MAX_MS, "Wait server-side for a terminal outcome (else wait_timeout: true).", 0),
    },
    responses: { 200: { description: "The record.", content: json(ExecutionRecord) } },
    errors: [],
  },
  "executions.stream": {
    summary: "The execution's events: replay, then follow (SSE)",
    tag: "executions",
    query: { after: int(0, Number.MAX_SAFE_INTEGER, "Events after this sequence (like Last-Event-ID).") },
    headers: { "Last-Event-ID": header("Resume after this event's sequence.", Type.String({ pattern: "^[0-9]+$" })) },
    responses: { 200: stream("The events, then `end`.") },
    errors: ["invalid_cursor"],
  },
  "executions.events": {
    summary: "A page of the execution's events",
    tag: "executions",
    query: {
      after_sequence: int(0, Number.MAX_SAFE_INTEGER, "Events after this sequence.", 0),
      limit: int(1, EXECUTION_EVENTS_LIMIT_MAX, "Events per page.", EXECUTION_EVENTS_LIMIT_DEFAULT),
    },
    responses: { 200: { description: "A page of events.", content: json(ExecutionEventPage) } },
    errors: ["invalid_cursor"],
  },
  "executions.output": {
    summary: "The full output of a stream by byte offset (sbx)",
    tag: "executions",
    query: {
      stream: streamParam,
      offset: int(0, Number.MAX_SAFE_INTEGER, "Byte offset in the stream.", 0),
      limit: int(
        1,
        Number.MAX_SAFE_INTEGER,
        `Bytes at most (JSON: up to ${EXECUTION_OUTPUT_LIMIT_MAX}, default ${EXECUTION_OUTPUT_LIMIT_DEFAULT}; raw: all there is by default).`,
      ),
    },
    headers: acceptRaw,
    responses: {
      200: {
        description: "A chunk (JSON), or the bytes themselves (Accept: application/octet-stream).",
        content: { ...json(ExecutionOutputChunk), [OCTET_STREAM]: Type.String({ format: "binary" }) },
        headers: rawHeaders({
          [RAW_HEADERS.streamBytes]: header(
            "Raw reads: bytes the command wrote to the stream, kept or not.",
            Type.String({ pattern: "^[0-9]+$" }),
          ),
          [RAW_HEADERS.keptBytes]: header(
            "Raw reads: bytes of the stream the backend keeps (fewer than Sbx-Stream-Bytes past its output cap).",
            Type.String({ pattern: "^[0-9]+$" }),
          ),
          [RAW_HEADERS.egressDenied]: header(
            "Raw reads: connections its sandbox's egress policy refused while the execution ran (as its record's egress_denied.total); absent when none.",
            Type.String({ pattern: "^[0-9]+$" }),
          ),
        }),
      },
    },
    errors: ["invalid_cursor", "output_not_found"],
  },
  "executions.cancel": {
    summary: "Cancel an execution",
    tag: "executions",
    query: { boot: boot("the execution ran in it") },
    body: { required: false, content: json(CancelRequest) },
    responses: { 202: { description: "Acknowledged (not proof of termination).", content: json(CancelAnswer) } },
    errors: ["stale_handle"],
  },
  "executions.terminal": terminalOperation(
    "executions",
    "Attach to an execution's terminal (WebSocket; sbx)",
    "an execution run with `tty`",
  ),
  "process.start": {
    summary: "Start a supervised process",
    tag: "processes",
    body: { required: true, content: json(ProcessStartRequest) },
    responses: { 201: { description: "The process.", content: json(ProcessRecord), headers: replayed } },
    errors: [
      "isolation_unavailable",
      "sandbox_start_failed",
      "terminal_unavailable",
      "process_name_in_use",
      "sandbox_paused",
    ],
  },
  "processes.list": {
    summary: "Supervised processes of a sandbox",
    tag: "processes",
    query: { idempotency_key: key("The process this key started.") },
    responses: { 200: { description: "The processes.", content: json(ProcessList) } },
    errors: [],
  },
  "process.get": {
    summary: "A supervised process",
    tag: "processes",
    responses: { 200: { description: "The process.", content: json(ProcessRecord) } },
    errors: [],
  },
  "process.stop": {
    summary: "Stop a supervised process (TERM, then KILL after the grace)",
    tag: "processes",
    query: {
      grace_ms: int(0, PROCESS_STOP_GRACE_MAX_MS, "Between TERM and KILL.", PROCESS_STOP_GRACE_DEFAULT_MS),
      remove: flag("Also remove its record and logs."),
      run,
      boot: processBoot,
    },
    responses: { 200: { description: "The process once stopped.", content: json(ProcessStopAnswer) } },
    errors: ["stale_handle"],
  },
  "process.result": {
    summary: "A supervised process's result",
    tag: "processes",
    query: { wait_ms: int(0, PROCESS_LOG_WAIT_MAX_MS, "Wait server-side for the process to end.", 0) },
    responses: { 200: { description: "The result.", content: json(ProcessResult) } },
    errors: [],
  },
  "process.logs": {
    summary: "A process's log by logical byte offset",
    tag: "processes",
    query: {
      stream: streamParam,
      offset: int(0, Number.MAX_SAFE_INTEGER, "Logical byte offset since the process was created.", 0),
      limit: int(
        1,
        PROCESS_LOG_RAW_LIMIT_MAX,
        `Bytes at most: ${PROCESS_LOG_LIMIT_MAX} in JSON, ${PROCESS_LOG_RAW_LIMIT_MAX} raw (Accept: application/octet-stream).`,
        PROCESS_LOG_LIMIT_DEFAULT,
      ),
      wait_ms: int(0, PROCESS_LOG_WAIT_MAX_MS, "Long-poll for new bytes.", 0),
    },
    headers: acceptRaw,
    responses: {
      200: {
        description: "A chunk (JSON), or the bytes themselves (Accept: application/octet-stream).",
        content: { ...json(ProcessLogChunk), [OCTET_STREAM]: Type.String({ format: "binary" }) },
        headers: rawHeaders({
          [RAW_HEADERS.rotated]: header(
            "Raw reads: the offset asked for was rotated away.",
            StringEnum(["true", "false"]),
          ),
          [RAW_HEADERS.oldestOffset]: header(
            "Raw reads: the oldest offset kept.",
            Type.String({ pattern: "^[0-9]+$" }),
          ),
          [RAW_HEADERS.generation]: header(
            "Raw reads: the process's current run.",
            Type.String({ pattern: "^[0-9]+$" }),
          ),
        }),
      },
    },
    errors: ["invalid_cursor"],
  },
  "process.stdin": {
    summary: "Write to a process's stdin",
    tag: "processes",
    query: { eof: flag("Raw bodies: close stdin after the bytes."), run, boot: processBoot },
    body: {
      // An empty raw body with ?eof=true only closes stdin.
      required: false,
      content: { ...json(ProcessStdinRequest), [OCTET_STREAM]: Type.String({ format: "binary" }) },
    },
    responses: { 200: { description: "Written.", content: json(ProcessStdinAnswer) } },
    errors: ["stdin_not_enabled", "stdin_closed", "stdin_busy", "process_not_running", "stale_handle"],
  },
  "process.signal": {
    summary: "Signal a process's group",
    tag: "processes",
    query: { run, boot: processBoot },
    body: { required: true, content: json(ProcessSignalRequest) },
    responses: { 202: { description: "Sent.", content: json(ProcessSignalAnswer) } },
    errors: ["process_not_running", "stale_handle"],
  },
  "process.terminal": terminalOperation(
    "processes",
    "Attach to a supervised process's terminal (WebSocket; sbx)",
    "a process started with `tty` (the current run's terminal; a restarted run gets a new one)",
  ),
  "files.put": filesPut("/workspace"),
  "files.get": filesGet("/workspace"),
  "jobs.submit": {
    summary: "Submit jobs (one-shot commands with dependencies)",
    tag: "jobs",
    body: { required: true, content: json(JobSubmitRequest) },
    responses: { 201: { description: "The jobs admitted.", content: json(JobSubmitAnswer), headers: replayed } },
    errors: ["job_id_conflict", "request_id_conflict", "isolation_unavailable"],
  },
  "jobs.list": {
    summary: "Jobs of a sandbox",
    tag: "jobs",
    query: {
      request_id: key("Only the jobs of this submission."),
      id_prefix: key("Only jobs whose id starts with this."),
      status: { schema: StringEnum(JOB_STATUSES_ALL), description: "Only jobs in this status." },
      wait_ms: int(0, JOB_WAIT_MAX_MS, "Wait server-side until every listed job ended.", 0),
    },
    responses: { 200: { description: "The jobs.", content: json(JobList) } },
    errors: [],
  },
  "jobs.get": {
    summary: "A job with its output",
    tag: "jobs",
    query: {
      after_seq: int(0, Number.MAX_SAFE_INTEGER, "Output chunks after this one.", 0),
      output_limit: int(0, JOB_OUTPUT_PAGE_MAX, "Output bytes at most.", JOB_OUTPUT_PAGE_DEFAULT),
      wait_ms: int(0, JOB_WAIT_MAX_MS, "Wait server-side for the job to end (or, with after_seq, for new output).", 0),
    },
    responses: { 200: { description: "The job.", content: json(JobRecord) } },
    errors: ["invalid_cursor"],
  },
  "jobs.cancel": {
    summary: "Cancel a job (and its dependents)",
    tag: "jobs",
    body: { required: false, content: json(JobCancelRequest) },
    responses: { 202: { description: "Acknowledged; read until terminal.", content: json(JobCancelAnswer) } },
    errors: [],
  },
};
