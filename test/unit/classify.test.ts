// The classifier, one row per row of docs/classification.md.

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
  retryHintMs,
  signalNumber,
} from "../../src/receipts/classify.js";
import { executionRecord } from "../support/misbehaving-server.js";

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Observed => ({
  kind: "answer",
  status,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});
const raw = (status: number, body: string, contentType = "text/plain"): Observed => ({
  kind: "answer",
  status,
  headers: { "content-type": contentType },
  body,
});
const rec = (over: Record<string, unknown>) => json(200, executionRecord(null, { execution_id: "exe_1", ...over }));
const apiError = (status: number, code: string, details?: Record<string, unknown>, headers?: Record<string, string>) =>
  json(status, { error: { code, message: `${code} happened`, ...(details ? { details } : {}) } }, headers);

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
];

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

describe("a jobs submission (kind jobs_submit)", () => {
  const admitted = {
    request_id: "ci-1",
    sandbox_id: "sbx_1",
    jobs: [{ job_id: "job_1", name: "a", status: "queued" }],
  };

  it.each<{ name: string; observed: Observed; classification: Classification; exit: number }>([
    { name: "201 listing the admitted jobs", observed: json(201, admitted), classification: "succeeded", exit: 0 },
    { name: "409 job_id_conflict", observed: apiError(409, "job_id_conflict"), classification: "rejected", exit: 125 },
    {
      name: "409 request_id_conflict",
      observed: apiError(409, "request_id_conflict"),
      classification: "rejected",
      exit: 125,
    },
    { name: "400 a cycle", observed: apiError(400, "invalid_request"), classification: "rejected", exit: 125 },
    {
      name: "201 without jobs",
      observed: json(201, { request_id: "ci-1", jobs: [] }),
      classification: "outcome_unknown",
      exit: 255,
    },
    {
      name: "200 that is an execution record",
      observed: rec({ outcome: "succeeded", exit_code: 0 }),
      classification: "outcome_unknown",
      exit: 255,
    },
    {
      name: "a reset after sending",
      observed: { kind: "transport", sent: true, code: "ECONNRESET", message: "reset" },
      classification: "outcome_unknown",
      exit: 255,
    },
  ])("$name → $classification, exit $exit", ({ observed, classification, exit }) => {
    const c = classifyObservation(observed, "dispatch", "jobs_submit");
    expect(c.classification).toBe(classification);
    expect(exitCodeFor(c)).toBe(exit);
  });

  it("admission is definitive and carries the request id in its own field, not as an execution id", () => {
    expect(classifyObservation(json(201, admitted), "dispatch", "jobs_submit")).toMatchObject({
      definitive: true,
      request_id: "ci-1",
      execution_id: null,
      process_id: null,
      exit_code: 0,
    });
    // Elsewhere a 409 other than the refusals stays in doubt.
    expect(classifyObservation(apiError(409, "something_else"), "dispatch").classification).toBe("outcome_unknown");
  });
});

describe("a receipt written but never answered: dispatched", () => {
  it("may have run; exec has no exit code of its own for it (255 if asked)", () => {
    expect(mayHaveRun("dispatched")).toBe(true);
    expect(exitCodeFor({ classification: "dispatched", exit_code: null, signal: null })).toBe(255);
  });
});

describe("classifyObservation (purpose: read) — a failed read teaches nothing", () => {
  it.each<{ name: string; observed: Observed }>([
    { name: "ECONNREFUSED", observed: { kind: "transport", sent: false, code: "ECONNREFUSED", message: "refused" } },
    { name: "ECONNRESET", observed: { kind: "transport", sent: true, code: "ECONNRESET", message: "reset" } },
    { name: "404 execution_not_found", observed: apiError(404, "execution_not_found") },
    { name: "bare 503", observed: raw(503, "Service Unavailable") },
    { name: "503 not_started", observed: apiError(503, "not_started", { retry_after_ms: 1000 }) },
    { name: "409 request_in_progress", observed: apiError(409, "request_in_progress") },
    { name: "502 gateway page", observed: raw(502, "<html>Bad Gateway</html>", "text/html") },
    { name: "local deadline", observed: { kind: "deadline", sent: true } },
  ])("$name → classification null", ({ observed }) => {
    const c = classifyObservation(observed, "read");
    expect(c.classification).toBeNull();
    expect(c.definitive).toBe(false);
    expect(c.error).not.toBeNull();
  });

  it("a 200 record read is classified like an answer", () => {
    const c = classifyObservation(rec({ outcome: "failed", exit_code: 2 }), "read");
    expect(c).toMatchObject({ classification: "failed", exit_code: 2, definitive: true });
    expect(classifyObservation(rec({ outcome: "pending", exit_code: null }), "read").classification).toBe("running");
  });
});

describe("afterRead: a running execution whose record is gone", () => {
  const read = (observed: Observed) => classifyObservation(observed, "read");
  const missing: PreviousRead = { http_status: 404, error_code: "execution_not_found" };
  it.each<{
    name: string;
    before: Classification | null;
    observed: Observed;
    previous: PreviousRead | null;
    gone: boolean;
  }>([
    {
      name: "running, then 404 sandbox_not_found",
      before: "running",
      observed: apiError(404, "sandbox_not_found"),
      previous: null,
      gone: true,
    },
    {
      name: "running, then a second 404 execution_not_found",
      before: "running",
      observed: apiError(404, "execution_not_found"),
      previous: missing,
      gone: true,
    },
    {
      name: "running, then a first 404 execution_not_found (published late?)",
      before: "running",
      observed: apiError(404, "execution_not_found"),
      previous: null,
      gone: false,
    },
    {
      name: "running, a 503, then 404 execution_not_found",
      before: "running",
      observed: apiError(404, "execution_not_found"),
      previous: { http_status: 503, error_code: "not_started" },
      gone: false,
    },
    {
      name: "record_pending, then 404s (not published yet)",
      before: "record_pending",
      observed: apiError(404, "execution_not_found"),
      previous: missing,
      gone: false,
    },
    {
      name: "local_timeout, then 404 sandbox_not_found",
      before: "local_timeout",
      observed: apiError(404, "sandbox_not_found"),
      previous: null,
      gone: false,
    },
    {
      name: "never answered, then 404s",
      before: null,
      observed: apiError(404, "execution_not_found"),
      previous: missing,
      gone: false,
    },
    {
      name: "running, then bare 404s (a proxy, not the backend)",
      before: "running",
      observed: raw(404, "Not Found"),
      previous: { http_status: 404, error_code: "http_404" },
      gone: false,
    },
    {
      name: "running, then 503",
      before: "running",
      observed: apiError(503, "not_started"),
      previous: null,
      gone: false,
    },
    {
      name: "running, then ECONNREFUSED",
      before: "running",
      observed: { kind: "transport", sent: false, code: "ECONNREFUSED", message: "refused" },
      previous: null,
      gone: false,
    },
  ])("$name → gone: $gone", ({ before, observed, previous, gone }) => {
    const c = afterRead(before, read(observed), previous);
    if (gone) {
      expect(c).toMatchObject({ classification: "outcome_unknown", system_error: null, definitive: false });
      expect(c.error?.code).toBe("record_gone");
      expect(mayHaveRun(c.classification!)).toBe(true);
    } else {
      expect(c).toEqual(read(observed));
    }
  });

  it("leaves a record that was read alone", () => {
    const c = read(rec({ outcome: "succeeded", exit_code: 0 }));
    expect(afterRead("running", c, missing)).toEqual(c);
  });
});

describe("helpers", () => {
  it("retryHintMs prefers the body, then Retry-After seconds, else null", () => {
    expect(retryHintMs({ retry_after_ms: 1200 }, { "retry-after": "9" })).toBe(1200);
    expect(retryHintMs({}, { "retry-after": "9" })).toBe(9000);
    expect(retryHintMs({}, { "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT" })).toBeNull();
    expect(retryHintMs({ retry_after_ms: -1 }, {})).toBeNull();
    expect(retryHintMs({}, {})).toBeNull();
  });

  it("signalNumber maps names to numbers", () => {
    expect(signalNumber("SIGKILL")).toBe(9);
    expect(signalNumber("SIGTERM")).toBe(15);
    expect(signalNumber("SIGNOTREAL")).toBeNull();
  });

  it("exitCodeFor: failed with an out-of-range exit code and no signal is 255", () => {
    expect(exitCodeFor({ classification: "failed", exit_code: null, signal: null })).toBe(255);
    expect(exitCodeFor({ classification: "failed", exit_code: null, signal: "SIGKILL" })).toBe(137);
  });
});
