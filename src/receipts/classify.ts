// The classifier: a pure function from what was observed to what it means.
// Every row of the classification table (docs/classification.md) lives here and nowhere else.

import { constants } from "node:os";
import { type HttpObserved, isBeforeSendError } from "../client/observed.js";
import type { Classification } from "./classifications.js";
import { blank, usageText } from "./blank.js";
import { isJobsKind, jobsVerdict, type JobSeen, jobsOfBody } from "./classify-jobs.js";
import { ExitCodes, signalExitCode } from "../common/exit-codes.js";
import { type ExecutionRecord, ErrorCodes, type Outcome } from "../protocol/types.js";
import { checkExecutionRecord } from "../protocol/validate.js";

/** What was observed: what one request observed (the client's HttpObserved), or what following a stream did. */
export type Observed =
  | HttpObserved
  /** The execution started and sbx stopped following it on purpose (detach). */
  | { kind: "started"; execution_id: string; boot?: string | null }
  | {
      kind: "stream";
      /** The execution id from the `started` event, if one arrived. */
      execution_id: string | null;
      /** The backend boot from the `started` event, if it named one. */
      boot?: string | null;
      /** The data of the `exit` event, or null when the stream ended without one. */
      exit: Record<string, unknown> | null;
      stdout: string;
      stderr: string;
      stdout_truncated?: boolean;
      stderr_truncated?: boolean;
    };

/**
 * dispatch: the answer to a mutation we sent (exec, resubmit).
 * read: an observation of an execution (refresh, wait); a failed read teaches nothing.
 */
export type Purpose = "dispatch" | "read";

/**
 * What the request asked for: an execution, the start of a supervised process, or a
 * submission of jobs (`jobs_run`: `sbx jobs run`'s one job, whose receipt settles to its outcome);
 * or `request`: any other request that changes something (an MCP tool's file write, stdin
 * write, signal, stop, cancel, sandbox create or stop), `succeeded` once the backend
 * accepted it. Nothing of it can be read back by key: what it changed says whether it happened.
 */
export type RequestKind = "execute" | "process_start" | "jobs_submit" | "jobs_run" | "request";

/** The kinds that start something and are sent through dispatch (a `request` is sent as it is). */
export type StartKind = Exclude<RequestKind, "request">;

export interface Classified {
  /** null: the observation taught nothing about the execution (a failed read). */
  classification: Classification | null;
  /** true when the result cannot change any more (a confirmed terminal outcome). */
  definitive: boolean;
  http_status: number | null;
  /** The execution an `execute` request started. */
  execution_id: string | null;
  /** The supervised process a `process_start` request created. */
  process_id: string | null;
  /** The request id whose jobs a `jobs_submit` request admitted. */
  request_id: string | null;
  /** The job whose end this observation carries (a jobs submission's). */
  job_id: string | null;
  outcome: Outcome | null;
  exit_code: number | null;
  signal: string | null;
  system_error: string | null;
  /** Why the command ended beyond its exit (`out_of_memory`: its sandbox's memory limit), as the answer said. */
  end_reason: string | null;
  /** The manifest digest of the image the command's sandbox root was made from, as the answer said; null: the host's. */
  image_digest: string | null;
  /**
   * What the command used, as the answer said it (its `usage`, docs/operations.md): the
   * object as JSON text, kept as received; null when the answer had none.
   */
  usage: string | null;
  /**
   * The connections its sandbox's egress proxy refused while it ran, as the answer said
   * (its `egress_denied`, docs/network.md, "Evidence"): JSON text; null when it said none.
   */
  egress_denied: string | null;
  record_pending: boolean;
  error: { code: string; message: string } | null;
  retry_after_ms: number | null;
  stdout: string | null;
  stderr: string | null;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  /** The backend boot the answer named: its execution's, or its process's current run's (a handle's part). */
  boot: string | null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorOf(doc: unknown): { code: string; message: string; details: Record<string, unknown> } | null {
  if (typeof doc !== "object" || doc === null) return null;
  const e = (doc as { error?: unknown }).error;
  if (typeof e !== "object" || e === null) return null;
  const { code, message, details } = e as { code?: unknown; message?: unknown; details?: unknown };
  if (typeof code !== "string") return null;
  return {
    code,
    message: typeof message === "string" ? message : "",
    details: typeof details === "object" && details !== null ? (details as Record<string, unknown>) : {},
  };
}

/** Retry hint in ms: the body's details.retry_after_ms, else the Retry-After header (seconds). */
export function retryHintMs(
  details: Record<string, unknown>,
  headers: Record<string, string | undefined>,
): number | null {
  const fromBody = details.retry_after_ms;
  if (typeof fromBody === "number" && Number.isFinite(fromBody) && fromBody >= 0) return Math.round(fromBody);
  const header = headers["retry-after"];
  if (header !== undefined && /^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  return null;
}

/** Signal name ("SIGKILL") to number (9); null when unknown. */
export function signalNumber(name: string): number | null {
  const n = (constants.signals as Record<string, number | undefined>)[name];
  return typeof n === "number" ? n : null;
}

/** The boot an answer names, when it names one as a string. */
function bootOf(doc: unknown): string | null {
  const boot = typeof doc === "object" && doc !== null ? (doc as { boot?: unknown }).boot : undefined;
  return typeof boot === "string" && boot !== "" ? boot : null;
}

function fromRecord(out: Classified, rec: ExecutionRecord): Classified {
  out.execution_id = rec.execution_id;
  out.boot = bootOf(rec);
  out.outcome = rec.outcome;
  out.exit_code = rec.exit_code ?? null;
  out.signal = rec.signal ?? null;
  out.system_error = rec.system_error ?? null;
  out.end_reason = typeof rec.end_reason === "string" ? rec.end_reason : null;
  out.image_digest = typeof rec.image_digest === "string" ? rec.image_digest : null;
  out.usage = usageText(rec.usage);
  out.egress_denied = usageText(rec.egress_denied);
  out.record_pending = rec.record_pending === true;
  out.stdout = typeof rec.stdout === "string" ? rec.stdout : null;
  out.stderr = typeof rec.stderr === "string" ? rec.stderr : null;
  out.stdout_truncated = rec.stdout_truncated === true;
  out.stderr_truncated = rec.stderr_truncated === true;

  if (out.record_pending) {
    out.classification = "record_pending";
    return out;
  }
  const hasExit = out.exit_code !== null;
  const hasSignal = out.signal !== null && signalNumber(out.signal) !== null;
  const unknown = (why: string): Classified => {
    out.classification = "outcome_unknown";
    out.error = { code: "undocumented_result", message: why };
    return out;
  };
  switch (rec.outcome) {
    case "pending":
      // The backend knows the execution and says it runs: not in doubt, just not over.
      out.classification = "running";
      return out;
    case "unknown":
      if (out.system_error === SANDBOX_START_FAILED) {
        // Its sandbox could not be set up: the command never ran (its stderr says why).
        out.classification = "rejected";
        out.error = { code: SANDBOX_START_FAILED, message: sandboxStartFailureText(out.stderr) };
        out.definitive = true;
        return out;
      }
      out.classification = "outcome_unknown";
      return out;
    case "succeeded":
      if (out.exit_code !== 0) return unknown("outcome succeeded without exit_code 0");
      break;
    case "failed":
      if (!hasExit && !hasSignal) return unknown("outcome failed without exit_code or a known signal");
      if (hasExit && (out.exit_code! <= 0 || out.exit_code! > 255)) {
        return unknown(`outcome failed with exit_code ${out.exit_code}`);
      }
      break;
    case "timed_out":
    case "cancelled":
      if (!hasExit && !hasSignal) return unknown(`outcome ${rec.outcome} without exit_code or signal`);
      break;
  }
  out.classification = rec.outcome;
  out.definitive = true;
  return out;
}

/** A 2xx answer to a process start: the process record proves it was created. */
function fromProcessAnswer(out: Classified, doc: unknown, status: number): Classified {
  const id = typeof doc === "object" && doc !== null ? (doc as { process_id?: unknown }).process_id : undefined;
  if (typeof id !== "string" || id === "") {
    out.classification = "outcome_unknown";
    out.error = { code: "undocumented_body", message: `HTTP ${status} body is not a process record` };
    return out;
  }
  out.process_id = id;
  out.boot = bootOf(doc);
  out.classification = "succeeded";
  out.exit_code = 0;
  out.definitive = true;
  return out;
}

/**
 * A 2xx answer to a jobs submission (or the read of what a request id admitted): the
 * jobs it lists prove it was admitted; what they say of their ends decides the rest
 * (classify-jobs.ts: a `jobs run` receipt settles to its job's outcome, a submission is `admitted`).
 */
function fromJobsAnswer(out: Classified, doc: unknown, status: number, kind: "jobs_submit" | "jobs_run"): Classified {
  const d = typeof doc === "object" && doc !== null ? (doc as { request_id?: unknown; jobs?: unknown }) : {};
  const jobs = Array.isArray(d.jobs) ? d.jobs : [];
  const documented =
    typeof d.request_id === "string" &&
    d.request_id !== "" &&
    jobs.length > 0 &&
    jobs.every((j) => typeof j === "object" && j !== null && typeof (j as { job_id?: unknown }).job_id === "string");
  if (!documented) {
    out.classification = "outcome_unknown";
    out.error = { code: "undocumented_body", message: `HTTP ${status} body is not a jobs submission answer` };
    return out;
  }
  // Jobs listed without a status are admitted and not known to have ended.
  const seen: JobSeen[] =
    jobsOfBody(doc) ??
    jobs.map((j) => ({
      job_id: (j as { job_id: string }).job_id,
      status: "",
      exit_code: null,
      signal: null,
      error: null,
    }));
  return jobsVerdict(kind, d.request_id as string, seen, status);
}

const SANDBOX_START_FAILED = ErrorCodes.sandboxStartFailed;

/** What a never-started execution's stderr says about its sandbox, for the receipt's error. */
function sandboxStartFailureText(stderr: string | null): string {
  const line = (stderr ?? "").trim().split("\n").at(-1) ?? "";
  return line.replace(/^sbx: /, "") || "the sandbox could not be set up";
}

/** 409s that refuse a request outright: nothing was admitted. */
const REFUSING_CONFLICTS: readonly string[] = [
  ErrorCodes.jobIdConflict,
  ErrorCodes.requestIdConflict,
  ErrorCodes.processNameInUse,
  ErrorCodes.sandboxPaused,
];

function classifyAnswer(obs: Extract<Observed, { kind: "answer" }>, purpose: Purpose, kind: RequestKind): Classified {
  const out = blank();
  out.http_status = obs.status;
  const doc = parseJson(obs.body);
  const err = errorOf(doc);
  if (err) {
    out.error = { code: err.code, message: err.message };
    const eid = err.details.execution_id;
    if (typeof eid === "string") out.execution_id = eid;
  }

  if (obs.status >= 200 && obs.status < 300) {
    if (kind === "request") {
      out.classification = purpose === "read" ? null : "succeeded";
      out.definitive = purpose !== "read";
      return out;
    }
    if (kind === "process_start") return fromProcessAnswer(out, doc, obs.status);
    if (isJobsKind(kind)) return fromJobsAnswer(out, doc, obs.status, kind);
    const problem = checkExecutionRecord(doc);
    if (problem !== null) {
      // A record_pending flag is honoured even on an otherwise odd body: never resubmit.
      if (typeof doc === "object" && doc !== null && (doc as { record_pending?: unknown }).record_pending === true) {
        out.record_pending = true;
        out.classification = "record_pending";
        const eid = (doc as { execution_id?: unknown }).execution_id;
        if (typeof eid === "string") out.execution_id = eid;
        return out;
      }
      out.classification = "outcome_unknown";
      out.error = {
        code: "undocumented_body",
        message: `HTTP ${obs.status} body is not an execution record: ${problem}`,
      };
      return out;
    }
    return fromRecord(out, doc as ExecutionRecord);
  }

  // Anything but a 2xx on a read teaches nothing about the execution itself.
  if (purpose === "read") {
    if (!out.error) out.error = { code: `http_${obs.status}`, message: `HTTP ${obs.status}` };
    return out;
  }

  if (obs.status === 409 && err?.code === ErrorCodes.executionResultUnconfirmed) {
    out.classification = "result_unconfirmed";
    return out;
  }
  // A request that is no start (kind `request`) refused in a documented conflict
  // (stdin_not_enabled, stdin_busy, stale_handle, a name taken...) was not done.
  const refusedRequest = kind === "request" && err !== null && err.code !== ErrorCodes.requestInProgress;
  if (obs.status === 409 && err !== null && (REFUSING_CONFLICTS.includes(err.code) || refusedRequest)) {
    out.classification = "rejected";
    return out;
  }
  if (obs.status === 409 && err?.code === ErrorCodes.requestInProgress) {
    out.classification = "in_progress";
    return out;
  }
  if (obs.status === 500 && err?.code === ErrorCodes.sandboxStartFailed) {
    // The backend says its command never ran: its sandbox could not be set up.
    out.classification = "rejected";
    out.definitive = true;
    return out;
  }
  if (obs.status === 503 && err?.code === ErrorCodes.notStarted) {
    out.classification = "not_started";
    out.retry_after_ms = retryHintMs(err.details, obs.headers);
    return out;
  }
  if (obs.status >= 400 && obs.status < 500 && obs.status !== 409) {
    out.classification = "rejected";
    if (!out.error)
      out.error = { code: `http_${obs.status}`, message: `HTTP ${obs.status} without a documented error body` };
    return out;
  }
  // Other 5xx, gateway pages, bare 503, unrecognised 409, 1xx/3xx: it may have run.
  out.classification = "outcome_unknown";
  if (!out.error)
    out.error = { code: `http_${obs.status}`, message: `HTTP ${obs.status} without a documented error body` };
  return out;
}

/** The error code of a receipt whose running execution the backend no longer has. */
export const RECORD_GONE = "record_gone";

/** What the previous read of the same receipt answered, as far as afterRead needs it. */
export interface PreviousRead {
  http_status: number | null;
  error_code: string | null;
}

/**
 * A read answered 404 for an execution the backend had reported running: its record
 * is gone, so what it did can no longer be read back. That is not "nothing learned" (a
 * failed read) but the end of what can be learned: the receipt is in doubt,
 * `outcome_unknown` with error `record_gone`. `sandbox_not_found` says so at once (a
 * sandbox does not come back); `execution_not_found` only when the previous read said
 * the same, since a backend may publish a record after it announced the start. Before a
 * record was reported (record_pending, a lost answer) a 404 may only mean "not yet" and
 * teaches nothing. Pure.
 */
export function afterRead(
  before: Classification | null,
  read: Classified,
  previous: PreviousRead | null = null,
): Classified {
  if (before !== "running" || read.classification !== null || read.http_status !== 404) return read;
  const code = read.error?.code;
  const gone =
    code === ErrorCodes.sandboxNotFound ||
    (code === ErrorCodes.executionNotFound && previous?.http_status === 404 && previous.error_code === code);
  if (!gone) return read;
  return {
    ...read,
    classification: "outcome_unknown",
    error: {
      code: RECORD_GONE,
      message: `the backend no longer has the execution (${code}): its sandbox was removed or its record expired`,
    },
  };
}

/** Classifies one observation. Pure: same input, same answer. */
export function classifyObservation(obs: Observed, purpose: Purpose, kind: RequestKind = "execute"): Classified {
  switch (obs.kind) {
    case "answer":
      return classifyAnswer(obs, purpose, kind);
    case "transport": {
      const out = blank();
      out.error = { code: obs.code, message: obs.message };
      if (purpose === "read") return out;
      out.classification = !obs.sent || isBeforeSendError(obs.code) ? "not_started" : "outcome_unknown";
      return out;
    }
    case "started": {
      const out = blank();
      out.http_status = 200;
      out.execution_id = obs.execution_id;
      out.boot = obs.boot ?? null;
      out.outcome = "pending";
      out.classification = "running";
      return out;
    }
    case "stream": {
      const out = blank();
      out.http_status = 200;
      out.execution_id = obs.execution_id;
      out.boot = obs.boot ?? null;
      out.stdout = obs.stdout;
      out.stderr = obs.stderr;
      out.stdout_truncated = obs.stdout_truncated === true;
      out.stderr_truncated = obs.stderr_truncated === true;
      if (obs.exit === null) {
        out.classification = purpose === "read" ? null : "outcome_unknown";
        out.error = { code: "stream_ended_without_exit", message: "the event stream ended without an exit event" };
        return out;
      }
      const rec = { ...obs.exit, execution_id: obs.execution_id ?? "", stdout: obs.stdout, stderr: obs.stderr };
      const problem = checkExecutionRecord(rec);
      if (problem !== null && obs.exit.record_pending === true) {
        // record_pending comes first, even on an otherwise odd exit event: never resubmit.
        out.record_pending = true;
        out.classification = "record_pending";
        return out;
      }
      if (problem !== null) {
        out.classification = "outcome_unknown";
        out.error = { code: "undocumented_exit_event", message: `exit event: ${problem}` };
        return out;
      }
      const c = fromRecord(out, rec as unknown as ExecutionRecord);
      c.boot = obs.boot ?? null;
      c.stdout_truncated = obs.stdout_truncated === true;
      c.stderr_truncated = obs.stderr_truncated === true;
      return c;
    }
    case "deadline": {
      const out = blank();
      out.error = obs.interrupted
        ? { code: "interrupted", message: "sbx was interrupted before a definitive answer" }
        : { code: "local_deadline", message: "the client's deadline passed before a definitive answer" };
      if (purpose === "read") return out;
      // Stopped before a byte left: nothing ran.
      out.classification = obs.sent ? "local_timeout" : "not_started";
      if (!obs.sent) out.error.message = `${out.error.message}; nothing had been sent`;
      return out;
    }
  }
}

/** May the command have run, given this classification? (`admitted`: its jobs may have.) */
export function mayHaveRun(c: Classification): boolean {
  return c !== "not_started" && c !== "rejected";
}

/** `sbx exec`'s exit code for a classification (docs/classification.md). */
export function exitCodeFor(c: Pick<Classified, "classification" | "exit_code" | "signal">): number {
  switch (c.classification) {
    case "succeeded":
    case "admitted":
      return ExitCodes.ok;
    case "failed": {
      if (c.exit_code !== null && c.exit_code > 0 && c.exit_code <= 255) return c.exit_code;
      const n = c.signal === null ? null : signalNumber(c.signal);
      return n === null ? ExitCodes.inDoubt : signalExitCode(n);
    }
    case "timed_out":
      return ExitCodes.timedOut;
    case "cancelled":
      return ExitCodes.cancelled;
    case "not_started":
      return ExitCodes.notStarted;
    case "rejected":
      return ExitCodes.usage;
    default:
      // In doubt, and `running` for anything but a confirmed --detach start (exec says so itself).
      return ExitCodes.inDoubt;
  }
}

/**
 * Of a receipt's observations in order, the one that decides its classification:
 * the latest definitive one, else the latest informative one; null while it is only
 * dispatched. A failed read (classification null) never erases what was learned.
 */
export function decidingObservation<O extends { classification: Classification | null; definitive: boolean }>(
  observations: readonly O[],
): O | null {
  let latestInformative: O | null = null;
  let latestDefinitive: O | null = null;
  for (const o of observations) {
    if (o.classification === null) continue;
    latestInformative = o;
    if (o.definitive) latestDefinitive = o;
  }
  return latestDefinitive ?? latestInformative;
}
