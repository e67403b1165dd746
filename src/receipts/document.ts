// The receipt document: the documented --json contract of exec, receipts show and
// receipts list. Built from stored rows; internal rows are never dumped as they are.

import type { Classification } from "./classifications.js";
import { decidingObservation, exitCodeFor, mayHaveRun, RECORD_GONE } from "./classify.js";
import { JOB_INTERRUPTED, JOB_LOST } from "./classify-jobs.js";
import { CERTIFICATE_HINT, isCertificateRefused } from "../client/observed.js";
import type { ObservationRow, StoredReceipt } from "./store.js";

export interface ReceiptDocument {
  receipt_id: string;
  kind: string;
  /** null: sent with --api-url or SBX_API_URL where no profile points; api_url says where. */
  profile: string | null;
  api_url: string;
  sandbox_id: string;
  idempotency_key: string;
  /** The MCP tool call it was made for (`sbx mcp`, docs/agents.md): the tool's name; null otherwise. */
  mcp_tool: string | null;
  /** The MCP request id of that call (as text); null otherwise. */
  mcp_request_id: string | null;
  /** The execution an `execute` receipt started. */
  execution_id: string | null;
  /** The supervised process a `process_start` receipt created. */
  process_id: string | null;
  /** The request id of the jobs a `jobs_submit` receipt admitted. */
  request_id: string | null;
  /**
   * The backend boot its execution ran in, or its process's run was started in, as the
   * start answered (the first answer that named one): sbx sends it with what it does to
   * them through this receipt (docs/protocol.md, "Ownership fences"). null: none named.
   */
  boot: string | null;
  request: { method: string; path: string; body: unknown; body_sha256: string };
  classification: Classification;
  may_have_run: boolean;
  exit: number | null;
  outcome: string | null;
  exit_code: number | null;
  signal: string | null;
  system_error: string | null;
  /** `out_of_memory`: the kernel killed the command at its sandbox's memory limit; else null. */
  end_reason: string | null;
  /** The manifest digest of the image its sandbox's root was made from (docs/images.md, "Evidence"); null: the host's. */
  image_digest: string | null;
  /** What the command used (docs/operations.md, "Per-command usage"), as its answer said; null when it said nothing. */
  usage: Record<string, unknown> | null;
  /**
   * The connections its sandbox's egress proxy refused while it ran (docs/network.md,
   * "Evidence"): `{total, first: [{at, host, port, protocol, reason}]}`, as its answer said; null: none.
   */
  egress_denied: Record<string, unknown> | null;
  record_pending: boolean;
  http_status: number | null;
  error: { code: string; message: string } | null;
  retry_after_ms: number | null;
  stdout: string | null;
  stderr: string | null;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  created_at: string;
  dispatched_at: string;
  answered_at: string | null;
  next: string | null;
}

export interface AttemptDocument {
  attempt: number;
  dispatched_at: string;
  body_sha256: string;
}

export interface ObservationDocument {
  at: string;
  source: string;
  attempt: number | null;
  classification: Classification | null;
  http_status: number | null;
  execution_id: string | null;
  process_id: string | null;
  request_id: string | null;
  /** The job whose end this observation carries (a jobs submission's); null otherwise. */
  job_id: string | null;
  boot: string | null;
  outcome: string | null;
  exit_code: number | null;
  signal: string | null;
  system_error: string | null;
  end_reason: string | null;
  image_digest: string | null;
  usage: Record<string, unknown> | null;
  egress_denied: Record<string, unknown> | null;
  record_pending: boolean;
  error: { code: string; message: string } | null;
  retry_after_ms: number | null;
}

export interface DetailedReceiptDocument extends ReceiptDocument {
  attempts: AttemptDocument[];
  observations: ObservationDocument[];
}

/** The exact next command a person should run, for a receipt that is not settled. */
export function nextStep(c: Classification, receiptId: string, errorCode: string | null = null): string | null {
  // Nothing more can be read back: no command helps; explain() says what to check.
  if (errorCode === RECORD_GONE || errorCode === JOB_INTERRUPTED || errorCode === JOB_LOST) return null;
  switch (c) {
    case "dispatched":
    case "local_timeout":
    case "result_unconfirmed":
    case "in_progress":
    case "record_pending":
    case "outcome_unknown":
    case "running":
      return `sbx receipts wait ${receiptId}`;
    case "not_started":
      return `sbx receipts resubmit ${receiptId}`;
    default:
      return null;
  }
}

/** The boot a receipt keeps: the first one an answer named (its start's, when that answer came). */
export function receiptBoot(observations: readonly Pick<ObservationRow, "boot">[]): string | null {
  return observations.find((o) => o.boot !== null)?.boot ?? null;
}

/** What a receipt's request created, named for what it is; id null until known. */
export function createdBy(doc: Pick<ReceiptDocument, "kind" | "execution_id" | "process_id" | "request_id">): {
  noun: "execution" | "process" | "request";
  id: string | null;
} {
  if (doc.kind === "process_start") return { noun: "process", id: doc.process_id };
  if (doc.kind === "jobs_submit" || doc.kind === "jobs_run") return { noun: "request", id: doc.request_id };
  return { noun: "execution", id: doc.execution_id };
}

/** One line for stderr that says what is known and what to do next. */
export function explain(doc: ReceiptDocument): string {
  const id = doc.receipt_id;
  const created = createdBy(doc);
  const exe = created.id ? ` (${created.noun} ${created.id})` : "";
  switch (doc.classification) {
    case "record_pending":
      return `sbx: ${id}${exe} ran, but the backend has not published its result yet; do not resubmit. Next: ${doc.next}`;
    case "outcome_unknown":
      if (doc.error?.code === JOB_INTERRUPTED || doc.error?.code === JOB_LOST) {
        return `sbx: ${id}${exe} was admitted, but ${doc.error.message}. Check what it should have done (sbx jobs list --request ${doc.request_id ?? doc.idempotency_key}); submit it again only if running it twice is safe.`;
      }
      if (doc.error?.code === RECORD_GONE) {
        return `sbx: ${id}${exe} was running, but the backend no longer has it (its sandbox was removed or its record expired): what it did cannot be read back. Check what it should have done; resubmit only if running it twice is safe.`;
      }
      return doc.system_error
        ? `sbx: ${id}${exe} may have run; the backend lost it (${doc.system_error}). Check the sandbox's state; resubmit only if running it twice is safe. Look again: ${doc.next}`
        : `sbx: ${id}${exe} may have run; no definitive answer (${doc.error?.message ?? "unknown"}). Next: ${doc.next}`;
    case "result_unconfirmed":
      return `sbx: ${id}${exe} was admitted but its result could not be confirmed; it may have run. Next: ${doc.next}`;
    case "in_progress":
      return `sbx: ${id}${exe} is still in progress. Next: ${doc.next}`;
    case "local_timeout":
      return doc.error?.code === "interrupted"
        ? `sbx: ${id}${exe}: you stopped waiting before an answer; it may still be running. Follow it: ${doc.next}`
        : `sbx: ${id}${exe}: the local deadline passed before an answer; it may still be running. Next: ${doc.next}`;
    case "running":
      return `sbx: ${id}${exe} is running.${
        doc.execution_id ? ` Follow it: sbx logs ${doc.execution_id} -f;` : ""
      } its result: ${doc.next}`;
    case "dispatched":
      return `sbx: ${id}${exe} was sent but no answer was recorded; it may have run. Next: ${doc.next}`;
    case "not_started":
      return `sbx: ${id}: nothing ran (${doc.error?.message || doc.error?.code || "not started"})${
        doc.retry_after_ms === null ? "" : `; retry after ${Math.ceil(doc.retry_after_ms / 1000)}s`
      }.${
        isCertificateRefused(doc.error?.code ?? "")
          ? ` ${CERTIFICATE_HINT[0]!.toUpperCase()}${CERTIFICATE_HINT.slice(1)}.`
          : ""
      } Safe to send again with the same key: ${doc.next}`;
    case "rejected":
      return `sbx: ${id}: refused by the backend (HTTP ${doc.http_status ?? "?"} ${doc.error?.code ?? ""}: ${
        doc.error?.message ?? ""
      }); nothing ran.${
        doc.error?.code === "sandbox_not_found"
          ? ` Create it first (sbx sandbox create ${doc.sandbox_id}) or pick one of sbx sandbox list.`
          : ""
      }`;
    case "admitted":
      return `sbx: ${id}${exe} was admitted; its jobs: sbx jobs list --request ${doc.request_id ?? doc.idempotency_key}`;
    case "timed_out":
      return `sbx: ${id}${exe} was killed at its timeout.`;
    case "cancelled":
      return `sbx: ${id}${exe} was cancelled.`;
    default:
      return `sbx: ${id}${exe} ${doc.classification}.`;
  }
}

function parseBody(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch {
    return { base64: bytes.toString("base64") };
  }
}

function observationDocument(o: ObservationRow): ObservationDocument {
  return {
    at: o.at,
    source: o.source,
    attempt: o.attempt,
    classification: o.classification,
    http_status: o.http_status,
    execution_id: o.execution_id,
    process_id: o.process_id,
    request_id: o.request_id,
    job_id: o.job_id,
    boot: o.boot,
    outcome: o.outcome,
    exit_code: o.exit_code,
    signal: o.signal,
    system_error: o.system_error,
    end_reason: o.end_reason,
    image_digest: o.image_digest,
    usage: parseUsage(o.usage),
    egress_denied: parseUsage(o.egress_denied),
    record_pending: o.record_pending,
    error: o.error_code === null ? null : { code: o.error_code, message: o.error_message ?? "" },
    retry_after_ms: o.retry_after_ms,
  };
}

export function receiptDocument(stored: StoredReceipt): ReceiptDocument {
  const { receipt: r, attempts, observations } = stored;
  const deciding = decidingObservation(observations);
  const classification: Classification = deciding?.classification ?? "dispatched";
  const answered = deciding && deciding.source !== "dispatch" ? deciding : null;
  const lastAttempt = attempts[attempts.length - 1];
  return {
    receipt_id: r.receipt_id,
    kind: r.kind,
    profile: r.profile,
    api_url: r.api_url,
    sandbox_id: r.sandbox_id,
    idempotency_key: r.idempotency_key,
    mcp_tool: r.mcp_tool ?? null,
    mcp_request_id: r.mcp_request_id ?? null,
    execution_id: r.execution_id,
    process_id: r.process_id,
    request_id: r.request_id,
    boot: receiptBoot(observations),
    request: { method: r.method, path: r.path, body: parseBody(r.body), body_sha256: r.body_sha256 },
    classification,
    may_have_run: mayHaveRun(classification),
    // No exit yet: nothing was answered, or the command is still running.
    exit:
      classification === "dispatched" || classification === "running"
        ? null
        : exitCodeFor({ classification, exit_code: answered?.exit_code ?? null, signal: answered?.signal ?? null }),
    outcome: answered?.outcome ?? null,
    exit_code: answered?.exit_code ?? null,
    signal: answered?.signal ?? null,
    system_error: answered?.system_error ?? null,
    end_reason: answered?.end_reason ?? null,
    image_digest: observations.find((o) => o.image_digest !== null)?.image_digest ?? null,
    usage: parseUsage(answered?.usage ?? null),
    egress_denied: parseUsage(answered?.egress_denied ?? null),
    record_pending: answered?.record_pending ?? false,
    http_status: answered?.http_status ?? null,
    error: answered?.error_code ? { code: answered.error_code, message: answered.error_message ?? "" } : null,
    retry_after_ms: answered?.retry_after_ms ?? null,
    stdout: answered?.stdout ?? null,
    stderr: answered?.stderr ?? null,
    stdout_truncated: answered?.stdout_truncated ?? false,
    stderr_truncated: answered?.stderr_truncated ?? false,
    created_at: r.created_at,
    dispatched_at: lastAttempt?.dispatched_at ?? r.created_at,
    answered_at: answered?.at ?? null,
    next: nextStep(classification, r.receipt_id, answered?.error_code ?? null),
  };
}

export function detailedReceiptDocument(stored: StoredReceipt): DetailedReceiptDocument {
  return {
    ...receiptDocument(stored),
    attempts: stored.attempts.map((a) => ({
      attempt: a.attempt,
      dispatched_at: a.dispatched_at,
      body_sha256: a.body_sha256,
    })),
    observations: stored.observations.map(observationDocument),
  };
}

/** A stored usage or egress_denied (JSON text, as the answer said it) as the object it was; null when none or unreadable. */
function parseUsage(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const doc: unknown = JSON.parse(text);
    return typeof doc === "object" && doc !== null && !Array.isArray(doc) ? (doc as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
