// The classifier: docs/classification.md read row by row (every row of its table has
// cases here, classified by the code, and each agrees with the row's classification,
// "may have run" and exit code), then the edge cases of each row in tables of their own.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLASSIFICATIONS, type Classification, IN_DOUBT } from "../../src/receipts/classifications.js";
import {
  afterRead,
  type Classified,
  classifyObservation,
  exitCodeFor,
  mayHaveRun,
  type Observed,
  type PreviousRead,
  signalNumber,
} from "../../src/receipts/classify.js";
import { apiError, json, raw, rec, transport } from "../support/observations.js";
import { REPO_ROOT } from "../support/repo.js";

interface Row {
  name: string;
  observed: Observed;
  classification: Classification;
  mayHaveRun: boolean;
  exit: number;
  /** Fields of the classified result that must be kept. */
  keeps?: Partial<Classified>;
}

const rows: Row[] = [
  {
    name: "200 record_pending: true comes first, even with outcome succeeded",
    observed: rec({ outcome: "succeeded", exit_code: 0, record_pending: true }),
    classification: "record_pending",
    mayHaveRun: true,
    exit: 255,
    keeps: { record_pending: true, execution_id: "exe_1", definitive: false },
  },
  {
    name: "200 record_pending: true on an otherwise undocumented body",
    observed: json(200, { record_pending: true, execution_id: "exe_odd" }),
    classification: "record_pending",
    mayHaveRun: true,
    exit: 255,
    keeps: { record_pending: true, execution_id: "exe_odd" },
  },
  {
    name: "200 outcome succeeded, exit_code 0",
    observed: rec({ outcome: "succeeded", exit_code: 0, stdout: "hi\n" }),
    classification: "succeeded",
    mayHaveRun: true,
    exit: 0,
    keeps: { definitive: true, exit_code: 0, execution_id: "exe_1", stdout: "hi\n", outcome: "succeeded" },
  },
  {
    name: "200 outcome failed, exit_code 3",
    observed: rec({ outcome: "failed", exit_code: 3 }),
    classification: "failed",
    mayHaveRun: true,
    exit: 3,
    keeps: { definitive: true, exit_code: 3 },
  },
  {
    name: "200 outcome failed, exit_code 255",
    observed: rec({ outcome: "failed", exit_code: 255 }),
    classification: "failed",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "200 outcome failed, killed by SIGKILL → 128+9",
    observed: rec({ outcome: "failed", exit_code: null, signal: "SIGKILL" }),
    classification: "failed",
    mayHaveRun: true,
    exit: 137,
    keeps: { signal: "SIGKILL", exit_code: null, definitive: true },
  },
  {
    name: "200 outcome failed, killed by SIGTERM → 128+15",
    observed: rec({ outcome: "failed", exit_code: null, signal: "SIGTERM" }),
    classification: "failed",
    mayHaveRun: true,
    exit: 143,
  },
  {
    name: "200 outcome timed_out",
    observed: rec({ outcome: "timed_out", exit_code: null, signal: "SIGKILL" }),
    classification: "timed_out",
    mayHaveRun: true,
    exit: 124,
    keeps: { definitive: true },
  },
  {
    name: "200 outcome cancelled",
    observed: rec({ outcome: "cancelled", exit_code: null, signal: "SIGTERM" }),
    classification: "cancelled",
    mayHaveRun: true,
    exit: 130,
    keeps: { definitive: true },
  },
  {
    name: "200 outcome unknown with system_error exec_stream_lost",
    observed: rec({ outcome: "unknown", exit_code: null, system_error: "exec_stream_lost" }),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
    keeps: { system_error: "exec_stream_lost", execution_id: "exe_1", definitive: false },
  },
  {
    name: "200 whose body is not JSON",
    observed: raw(200, "OK, it ran (probably)", "application/json"),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
    keeps: { definitive: false, http_status: 200 },
  },
  {
    name: "200 JSON that is not an execution record",
    observed: json(200, { ok: true }),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "200 outcome succeeded without exit_code",
    observed: rec({ outcome: "succeeded", exit_code: null }),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
    keeps: { definitive: false },
  },
  {
    name: "200 outcome succeeded with exit_code 1",
    observed: rec({ outcome: "succeeded", exit_code: 1 }),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "200 terminal failed with neither exit_code nor signal",
    observed: rec({ outcome: "failed", exit_code: null, signal: null }),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
    keeps: { definitive: false },
  },
  {
    name: "200 terminal failed with an unknown signal name",
    observed: rec({ outcome: "failed", exit_code: null, signal: "SIGNOTREAL" }),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "200 terminal timed_out with neither exit_code nor signal",
    observed: rec({ outcome: "timed_out", exit_code: null, signal: null }),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "409 execution_result_unconfirmed keeps details.execution_id",
    observed: apiError(409, "execution_result_unconfirmed", { execution_id: "exe_unc", idempotency_key: "k1" }),
    classification: "result_unconfirmed",
    mayHaveRun: true,
    exit: 255,
    keeps: { execution_id: "exe_unc", http_status: 409 },
  },
  {
    name: "409 request_in_progress",
    observed: apiError(409, "request_in_progress"),
    classification: "in_progress",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "503 not_started keeps details.retry_after_ms",
    observed: apiError(503, "not_started", { reason: "draining", retry_after_ms: 2500 }, { "retry-after": "3" }),
    classification: "not_started",
    mayHaveRun: false,
    exit: 75,
    keeps: { retry_after_ms: 2500, http_status: 503 },
  },
  {
    name: "503 not_started keeps the Retry-After header when the body has no hint",
    observed: apiError(503, "not_started", { reason: "draining" }, { "retry-after": "7" }),
    classification: "not_started",
    mayHaveRun: false,
    exit: 75,
    keeps: { retry_after_ms: 7000 },
  },
  {
    name: "transport ECONNREFUSED before sending",
    observed: { kind: "transport", sent: false, code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:1" },
    classification: "not_started",
    mayHaveRun: false,
    exit: 75,
    keeps: { error: { code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:1" } },
  },
  {
    name: "transport ENOTFOUND (name not resolved)",
    observed: { kind: "transport", sent: false, code: "ENOTFOUND", message: "getaddrinfo ENOTFOUND nowhere.invalid" },
    classification: "not_started",
    mayHaveRun: false,
    exit: 75,
  },
  ...([400, 401, 403, 404] as const).map(
    (status): Row => ({
      name: `${status} with a documented error body`,
      observed: apiError(status, status === 400 ? "invalid_request" : `http_${status}_code`),
      classification: "rejected",
      mayHaveRun: false,
      exit: 125,
      keeps: { http_status: status },
    }),
  ),
  {
    name: "422 idempotency_key_reused",
    observed: apiError(422, "idempotency_key_reused"),
    classification: "rejected",
    mayHaveRun: false,
    exit: 125,
    keeps: { error: { code: "idempotency_key_reused", message: "idempotency_key_reused happened" } },
  },
  {
    name: "401 with a plain-text body",
    observed: raw(401, "Unauthorized"),
    classification: "rejected",
    mayHaveRun: false,
    exit: 125,
  },
  {
    name: "500 internal error",
    observed: apiError(500, "internal_error"),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "bare 503 (text/plain, not the documented not_started)",
    observed: raw(503, "Service Unavailable"),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
    keeps: { retry_after_ms: null },
  },
  {
    name: "502 gateway HTML page",
    observed: raw(502, "<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "504 gateway timeout",
    observed: raw(504, "<html><body><h1>504 Gateway Time-out</h1></body></html>", "text/html"),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "409 with an undocumented code",
    observed: apiError(409, "something_else"),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "ECONNRESET after sending",
    observed: { kind: "transport", sent: true, code: "ECONNRESET", message: "read ECONNRESET" },
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "socket closed after sending (undici UND_ERR_SOCKET)",
    observed: { kind: "transport", sent: true, code: "UND_ERR_SOCKET", message: "other side closed" },
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "the client's own deadline passes after sending",
    observed: { kind: "deadline", sent: true },
    classification: "local_timeout",
    mayHaveRun: true,
    exit: 255,
    keeps: { error: { code: "local_deadline", message: "the client's deadline passed before a definitive answer" } },
  },
  {
    name: "interrupted (Ctrl-C) before a definitive answer",
    observed: { kind: "deadline", sent: true, interrupted: true },
    classification: "local_timeout",
    mayHaveRun: true,
    exit: 255,
    keeps: { error: { code: "interrupted", message: "sbx was interrupted before a definitive answer" } },
  },
  {
    name: "the deadline passes before a byte was sent",
    observed: { kind: "deadline", sent: false },
    classification: "not_started",
    mayHaveRun: false,
    exit: 75,
  },
  {
    name: "interrupted before a byte was sent",
    observed: { kind: "deadline", sent: false, interrupted: true },
    classification: "not_started",
    mayHaveRun: false,
    exit: 75,
  },
  {
    name: "exec --detach: the stream's `started` event (the execution runs)",
    observed: { kind: "started", execution_id: "exe_d" },
    classification: "running",
    mayHaveRun: true,
    exit: 255,
    keeps: { execution_id: "exe_d", outcome: "pending", definitive: false },
  },
  {
    name: "200 with outcome pending: the backend says it runs",
    observed: rec({ outcome: "pending", exit_code: null, finished_at: null }),
    classification: "running",
    mayHaveRun: true,
    exit: 255,
    keeps: { execution_id: "exe_1", definitive: false },
  },
  {
    name: "any 2xx carries the record (299)",
    observed: { ...(rec({ outcome: "succeeded", exit_code: 0 }) as object), status: 299 } as Observed,
    classification: "succeeded",
    mayHaveRun: true,
    exit: 0,
  },
  {
    name: "a 300 is not an answer, even with a record as its body",
    observed: { ...(rec({ outcome: "succeeded", exit_code: 0 }) as object), status: 300 } as Observed,
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
    keeps: { error: { code: "http_300", message: "HTTP 300 without a documented error body" } },
  },
  {
    name: "truncated output is said, and changes nothing else",
    observed: rec({ outcome: "succeeded", exit_code: 0, stdout_truncated: true, stderr_truncated: true }),
    classification: "succeeded",
    mayHaveRun: true,
    exit: 0,
    keeps: { stdout_truncated: true, stderr_truncated: true },
  },
  {
    name: "200 outcome failed, exit_code 0 (not a failure's code)",
    observed: rec({ outcome: "failed", exit_code: 0 }),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "200 outcome failed, exit_code 256 (out of range)",
    observed: rec({ outcome: "failed", exit_code: 256 }),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "200 outcome failed, exit_code 255 and a signal: the exit code wins",
    observed: rec({ outcome: "failed", exit_code: 255, signal: "SIGKILL" }),
    classification: "failed",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "200 outcome cancelled with neither exit_code nor signal",
    observed: rec({ outcome: "cancelled", exit_code: null, signal: null }),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "409 with an undocumented code keeps that code",
    observed: apiError(409, "something_else"),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
    keeps: { error: { code: "something_else", message: "something_else happened" } },
  },
  {
    name: "400 whose error is not documented (a number as its code)",
    observed: json(400, { error: { code: 5 } }),
    classification: "rejected",
    mayHaveRun: false,
    exit: 125,
    keeps: { error: { code: "http_400", message: "HTTP 400 without a documented error body" } },
  },
  {
    name: "400 whose error is null",
    observed: json(400, { error: null }),
    classification: "rejected",
    mayHaveRun: false,
    exit: 125,
  },
  {
    name: "422 whose error has no message",
    observed: json(422, { error: { code: "idempotency_key_reused" } }),
    classification: "rejected",
    mayHaveRun: false,
    exit: 125,
    keeps: { error: { code: "idempotency_key_reused", message: "" } },
  },
  {
    name: "503 not_started whose details are null",
    observed: json(503, { error: { code: "not_started", message: "m", details: null } }),
    classification: "not_started",
    mayHaveRun: false,
    exit: 75,
    keeps: { retry_after_ms: null },
  },
  {
    name: "a 1xx is not an answer, even with a record as its body",
    observed: { ...(rec({ outcome: "succeeded", exit_code: 0 }) as object), status: 199 } as Observed,
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
  },
  {
    name: "200 whose body is null",
    observed: json(200, null),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
    keeps: {
      error: {
        code: "undocumented_body",
        message: "HTTP 200 body is not an execution record: body is not a JSON object",
      },
    },
  },
  {
    name: "200 record_pending: true without an execution id",
    observed: json(200, { record_pending: true }),
    classification: "record_pending",
    mayHaveRun: true,
    exit: 255,
    keeps: { execution_id: null },
  },
  {
    name: "200 record without stdout or stderr, or with one that is not text",
    observed: json(200, { execution_id: "exe_2", outcome: "succeeded", exit_code: 0, stderr: 5 }),
    classification: "succeeded",
    mayHaveRun: true,
    exit: 0,
    keeps: { stdout: null, stderr: null },
  },
  {
    name: "409 with a plain body",
    observed: raw(409, "Conflict"),
    classification: "outcome_unknown",
    mayHaveRun: true,
    exit: 255,
    keeps: { error: { code: "http_409", message: "HTTP 409 without a documented error body" } },
  },
  ...(["execution_result_unconfirmed", "job_id_conflict", "request_in_progress", "not_started"] as const).map(
    (code): Row => ({
      name: `500 saying ${code} (only its documented status means that)`,
      observed: apiError(500, code),
      classification: "outcome_unknown",
      mayHaveRun: true,
      exit: 255,
      keeps: { error: { code, message: `${code} happened` } },
    }),
  ),
  {
    name: "503 not_started with a negative hint and a Retry-After header: the header",
    observed: apiError(503, "not_started", { retry_after_ms: -5 }, { "retry-after": "7" }),
    classification: "not_started",
    mayHaveRun: false,
    exit: 75,
    keeps: { retry_after_ms: 7000 },
  },
];

// ── docs/classification.md, row by row ────────────────────────────────────────

interface DocRow {
  observed: string;
  classification: string;
  mayHaveRun: boolean;
  /** A number, "N" (the command's exit code), "128+S" (its signal), or null (no exit code of the row's own). */
  exit: number | "N" | "128+S" | null;
}

/** The rows of the page's first table, as written. */
function documentedRows(): DocRow[] {
  const page = fs.readFileSync(path.join(REPO_ROOT, "docs", "classification.md"), "utf8");
  const table = page.slice(page.indexOf("| what was observed |"));
  const lines = table.slice(0, table.indexOf("\n\n")).split("\n").slice(2);
  return lines.map((line) => {
    const cells = line.split(" | ").map((c) => c.replace(/^\| ?| ?\|$/g, "").trim());
    if (cells.length !== 4) throw new Error(`docs/classification.md: a row without four cells: ${line}`);
    const [observed, classification, mayHave, exit] = cells as [string, string, string, string];
    const name = /^`([a-z_]+)`/.exec(classification)?.[1];
    if (name === undefined) throw new Error(`docs/classification.md: no classification in "${classification}"`);
    if (mayHave !== "yes" && mayHave !== "no")
      throw new Error(`docs/classification.md: "may have run" is "${mayHave}"`);
    return {
      observed,
      classification: name,
      mayHaveRun: mayHave === "yes",
      exit: /^\d+$/.test(exit) ? Number(exit) : exit === "N" || exit === "128+S" ? exit : null,
    };
  });
}

/**
 * What the code concludes in a case: its classification, and the command's own exit
 * code or signal for N and 128+S. Classified inside the test, never while the file is
 * collected (a classifier that throws fails the row's test, not the file).
 */
type DocCase = () => Pick<Classified, "classification" | "exit_code" | "signal">;
const dispatch =
  (o: Observed, kind?: "jobs_submit" | "process_start"): DocCase =>
  () =>
    classifyObservation(o, "dispatch", kind);
const stream = (exit: Record<string, unknown> | null): DocCase =>
  dispatch({ kind: "stream", execution_id: "exe_s", exit: exit as never, stdout: "", stderr: "" });
const gone =
  (observed: Observed, previous: PreviousRead | null): DocCase =>
  () =>
    afterRead("running", classifyObservation(observed, "read"), previous);

/** Cases for every row of the page, keyed by its first cell exactly as written. */
const DOC_CASES: Record<string, DocCase[]> = {
  "200 with `record_pending: true` (whatever the outcome; this row comes first)": [
    dispatch(rec({ outcome: "succeeded", exit_code: 0, record_pending: true })),
    dispatch(rec({ outcome: "failed", exit_code: 3, record_pending: true })),
  ],
  "200, `outcome: succeeded`, `exit_code: 0`": [dispatch(rec({ outcome: "succeeded", exit_code: 0 }))],
  "200, `outcome: failed`, `exit_code: N`": [3, 1, 255].map((n) => dispatch(rec({ outcome: "failed", exit_code: n }))),
  '200, `outcome: failed`, killed by signal S (`"SIGKILL"` → 9)': ["SIGKILL", "SIGTERM", "SIGINT"].map((s) =>
    dispatch(rec({ outcome: "failed", exit_code: null, signal: s })),
  ),
  "200, `outcome: timed_out` (server killed it at its timeout)": [
    dispatch(rec({ outcome: "timed_out", exit_code: null, signal: "SIGKILL" })),
  ],
  "200, `outcome: cancelled`": [dispatch(rec({ outcome: "cancelled", exit_code: null, signal: "SIGTERM" }))],
  "200, `outcome: unknown` (e.g. `system_error: exec_stream_lost`)": [
    dispatch(rec({ outcome: "unknown", exit_code: null, system_error: "exec_stream_lost" })),
  ],
  "200 whose body is not the documented JSON, or a terminal outcome without its exit code/signal": [
    dispatch(raw(200, "not json")),
    dispatch(json(200, { hello: "world" })),
    dispatch(rec({ outcome: "failed", exit_code: null, signal: null })),
    dispatch(rec({ outcome: "succeeded", exit_code: null })),
  ],
  "409 `execution_result_unconfirmed` (keep `details.execution_id` and the key)": [
    dispatch(apiError(409, "execution_result_unconfirmed", { execution_id: "exe_9" })),
  ],
  "409 `request_in_progress` (the same key is still in flight)": [dispatch(apiError(409, "request_in_progress"))],
  "503 with the documented `not_started` error (keep its retry hint)": [
    dispatch(apiError(503, "not_started", { retry_after_ms: 500 })),
  ],
  "connection refused / name not resolved / the server's TLS certificate refused by sbx (nothing was sent)": [
    dispatch(transport("ECONNREFUSED", false)),
    dispatch(transport("ENOTFOUND", false)),
    // Refused in the handshake, before the request: not sent, whatever the transport assumed.
    dispatch(transport("DEPTH_ZERO_SELF_SIGNED_CERT", true)),
    dispatch(transport("UNABLE_TO_VERIFY_LEAF_SIGNATURE", true)),
    dispatch(transport("ERR_TLS_CERT_ALTNAME_INVALID", true)),
  ],
  "400, 401, 403, 404, 422 (`idempotency_key_reused`, validation)": [
    ...[400, 401, 403, 404].map((status) => dispatch(apiError(status, "invalid_request"))),
    dispatch(apiError(422, "idempotency_key_reused")),
  ],
  "409 `job_id_conflict` / `request_id_conflict` (a jobs submission refused), `process_name_in_use` (a process start refused)":
    [
      dispatch(apiError(409, "job_id_conflict"), "jobs_submit"),
      dispatch(apiError(409, "request_id_conflict"), "jobs_submit"),
      dispatch(apiError(409, "process_name_in_use"), "process_start"),
    ],
  "500 `sandbox_start_failed`, or a record with `outcome: unknown` and `system_error: sandbox_start_failed` (the sandbox could not be set up; the command never ran)":
    [
      dispatch(apiError(500, "sandbox_start_failed", { execution_id: "exe_s", cause: "Can't mount proc" })),
      dispatch(rec({ outcome: "unknown", exit_code: null, system_error: "sandbox_start_failed" })),
      stream({
        outcome: "unknown",
        exit_code: null,
        signal: null,
        system_error: "sandbox_start_failed",
        record_pending: false,
        finished_at: "2026-01-01T00:00:00.000Z",
      }),
    ],
  "other 5xx, a gateway page, a reset or closed socket after sending": [
    dispatch(apiError(500, "internal")),
    dispatch(raw(502, "<html>Bad Gateway</html>", "text/html")),
    dispatch(raw(503, "Service Unavailable")),
    dispatch(transport("ECONNRESET", true)),
    dispatch(transport("UND_ERR_SOCKET", true)),
  ],
  "an SSE stream that ends (or drops for good) without an `exit` event": [stream(null)],
  "the client's own deadline passes before a definitive answer": [dispatch({ kind: "deadline", sent: true })],
  "the deadline, or Ctrl-C, before a byte of the request left (a connection of its own that carried nothing)": [
    dispatch({ kind: "deadline", sent: false }),
    dispatch({ kind: "deadline", sent: false, interrupted: true }),
  ],
  "Ctrl-C twice: sbx stopped waiting (`error.code: interrupted`)": [
    dispatch({ kind: "deadline", sent: true, interrupted: true }),
  ],
  // Not an observation: the receipt store writes it before sending (src/receipts/store.ts).
  "receipt written, process died before any answer was recorded": [
    () => ({ classification: "dispatched", exit_code: null, signal: null }),
  ],
  "the execution id is known and the backend reports it still running (`exec --detach`, a wait that ran out)": [
    dispatch({ kind: "started", execution_id: "exe_d" }),
    dispatch(rec({ outcome: "pending", exit_code: null, finished_at: null })),
  ],
  // After a cancel was confirmed, the execution's record is read back (src/cli/commands/exec.ts).
  "Ctrl-C: cancellation requested and confirmed": [
    dispatch(rec({ outcome: "cancelled", exit_code: null, signal: "SIGTERM" })),
  ],
  "a read of an execution the backend had reported `running` answers 404 `sandbox_not_found`, or twice in a row `execution_not_found` (its sandbox was removed, or retention took its record)":
    [
      gone(apiError(404, "sandbox_not_found"), null),
      gone(apiError(404, "execution_not_found"), { http_status: 404, error_code: "execution_not_found" }),
    ],
};

describe("docs/classification.md, row by row", () => {
  const documented = documentedRows();

  it("has cases for every row of the page, and none for a row it does not have", () => {
    expect(documented.length).toBeGreaterThan(20);
    expect(Object.keys(DOC_CASES).sort()).toEqual(documented.map((r) => r.observed).sort());
  });

  it.each(documented.map((row) => ({ ...row, name: row.observed })))("$name → $classification", (row) => {
    for (const classify of DOC_CASES[row.observed] ?? []) {
      const c = classify();
      expect(c.classification, JSON.stringify(c)).toBe(row.classification);
      expect(mayHaveRun(c.classification!)).toBe(row.mayHaveRun);
      if (row.exit === "N") expect(exitCodeFor(c)).toBe(c.exit_code);
      else if (row.exit === "128+S") expect(exitCodeFor(c)).toBe(128 + signalNumber(c.signal!)!);
      else if (row.exit !== null) expect(exitCodeFor(c)).toBe(row.exit);
    }
  });
});

describe("classifyObservation (purpose: dispatch)", () => {
  it.each(rows)("$name → $classification, exit $exit", (row) => {
    const c = classifyObservation(row.observed, "dispatch");
    expect(c.classification).toBe(row.classification);
    expect(mayHaveRun(c.classification!)).toBe(row.mayHaveRun);
    expect(exitCodeFor(c)).toBe(row.exit);
    if (row.keeps) expect(c).toMatchObject(row.keeps);
  });

  it("is pure: the same observation classifies the same way twice", () => {
    for (const row of rows) {
      expect(classifyObservation(row.observed, "dispatch")).toEqual(classifyObservation(row.observed, "dispatch"));
    }
  });

  it("never classifies as succeeded without a documented exit_code 0", () => {
    for (const row of rows) {
      const c = classifyObservation(row.observed, "dispatch");
      if (c.classification === "succeeded") expect(c.exit_code).toBe(0);
    }
  });

  it("an SSE stream that ends (or drops for good) without an exit event → outcome_unknown, 255", () => {
    const c = classifyObservation(
      { kind: "stream", execution_id: "exe_s", exit: null, stdout: "partial", stderr: "" },
      "dispatch",
    );
    expect(c).toMatchObject({ classification: "outcome_unknown", execution_id: "exe_s", stdout: "partial" });
    expect(c.error?.code).toBe("stream_ended_without_exit");
    expect(exitCodeFor(c)).toBe(255);
    expect(mayHaveRun(c.classification!)).toBe(true);
  });

  it("an SSE stream with its exit event classifies like the record would", () => {
    const exit = { outcome: "failed", exit_code: 4, signal: null, system_error: null, record_pending: false };
    const c = classifyObservation(
      { kind: "stream", execution_id: "exe_s", exit, stdout: "o", stderr: "e" },
      "dispatch",
    );
    expect(c).toMatchObject({ classification: "failed", exit_code: 4, definitive: true, stdout: "o", stderr: "e" });
    const pending = classifyObservation(
      { kind: "stream", execution_id: "exe_s", exit: { ...exit, record_pending: true }, stdout: "", stderr: "" },
      "dispatch",
    );
    expect(pending.classification).toBe("record_pending");
    const noCode = classifyObservation(
      { kind: "stream", execution_id: "exe_s", exit: { ...exit, exit_code: null }, stdout: "", stderr: "" },
      "dispatch",
    );
    expect(noCode.classification).toBe("outcome_unknown");
  });
});

describe("in doubt, or not", () => {
  it("running is not in doubt: the backend said where the execution is", () => {
    expect(IN_DOUBT).not.toContain("running");
    expect(CLASSIFICATIONS).toContain("running");
    expect(IN_DOUBT).toEqual(
      expect.arrayContaining(["dispatched", "outcome_unknown", "local_timeout", "result_unconfirmed", "in_progress"]),
    );
  });
});

describe("the whole classified result: every field a receipt stores and shows", () => {
  // Field by field for every row above and every kind of stream end (the snapshot file
  // beside this one): an error code or message, a flag or an id that changes is seen.
  it("of every row above", () => {
    const results = Object.fromEntries(rows.map((row) => [row.name, classifyObservation(row.observed, "dispatch")]));
    expect(results).toMatchSnapshot();
  });

  it("of an event stream: without its exit event, with it, flagged truncated, or with an exit event out of shape", () => {
    const exit = { outcome: "failed", exit_code: 4, signal: null, system_error: null, record_pending: false };
    const streams: Record<string, Observed> = {
      "no exit event": { kind: "stream", execution_id: "exe_s", exit: null, stdout: "partial", stderr: "" },
      "no exit event, no id": { kind: "stream", execution_id: null, exit: null, stdout: "", stderr: "" },
      "no exit event, truncated": {
        kind: "stream",
        execution_id: "exe_s",
        exit: null,
        stdout: "partial",
        stderr: "",
        stdout_truncated: true,
        stderr_truncated: true,
      },
      "its exit event, no id": { kind: "stream", execution_id: null, exit, stdout: "o", stderr: "e" },
      "its exit event": { kind: "stream", execution_id: "exe_s", exit, stdout: "o", stderr: "e" },
      truncated: {
        kind: "stream",
        execution_id: "exe_s",
        exit,
        stdout: "o",
        stderr: "e",
        stdout_truncated: true,
        stderr_truncated: true,
      },
      "record_pending in its exit event": {
        kind: "stream",
        execution_id: "exe_s",
        exit: { ...exit, record_pending: true },
        stdout: "",
        stderr: "",
      },
      "an exit event out of shape": {
        kind: "stream",
        execution_id: "exe_s",
        exit: { ...exit, outcome: "exploded" },
        stdout: "",
        stderr: "",
      },
      "an exit event out of shape, saying record_pending": {
        kind: "stream",
        execution_id: "exe_s",
        exit: { ...exit, outcome: "exploded", record_pending: true },
        stdout: "",
        stderr: "",
      },
    } as Record<string, Observed>;
    const results = Object.fromEntries(
      Object.entries(streams).map(([name, o]) => [
        name,
        { dispatch: classifyObservation(o, "dispatch"), read: classifyObservation(o, "read") },
      ]),
    );
    expect(results).toMatchSnapshot();
  });
});
