// The classifier beyond a dispatch's answer: jobs submissions and process starts,
// reads (which teach nothing when they fail), a running execution whose record is
// gone (afterRead), which observation decides a receipt, and the helpers.

import { describe, expect, it } from "vitest";
import type { Classification } from "../../src/receipts/classifications.js";
import {
  afterRead,
  classifyObservation,
  decidingObservation,
  exitCodeFor,
  mayHaveRun,
  type Observed,
  type PreviousRead,
  retryHintMs,
  signalNumber,
} from "../../src/receipts/classify.js";
import { apiError, json, raw, rec, transport } from "../support/observations.js";

describe("a jobs submission (kind jobs_submit)", () => {
  const admitted = {
    request_id: "ci-1",
    sandbox_id: "sbx_1",
    jobs: [{ job_id: "job_1", name: "a", status: "queued" }],
  };

  it.each<{ name: string; observed: Observed; classification: Classification; exit: number }>([
    { name: "201 listing the admitted jobs", observed: json(201, admitted), classification: "admitted", exit: 0 },
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

  it("admission carries the request id in its own field; settled only once its jobs ended", () => {
    expect(classifyObservation(json(201, admitted), "dispatch", "jobs_submit")).toMatchObject({
      classification: "admitted",
      definitive: false,
      outcome: "pending",
      request_id: "ci-1",
      execution_id: null,
      process_id: null,
    });
    // `jobs run`: the same answer means its job is admitted and not over: running, not in doubt.
    expect(classifyObservation(json(201, admitted), "dispatch", "jobs_run")).toMatchObject({
      classification: "running",
      definitive: false,
      request_id: "ci-1",
      job_id: "job_1",
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

  it("says what it got: the documented error, or the bare status", () => {
    expect(classifyObservation(raw(502, "<html>Bad Gateway</html>", "text/html"), "read").error).toEqual({
      code: "http_502",
      message: "HTTP 502",
    });
    expect(classifyObservation(apiError(404, "execution_not_found"), "read").error).toEqual({
      code: "execution_not_found",
      message: "execution_not_found happened",
    });
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
      name: "running, then a 500 that says sandbox_not_found (only a 404 from the backend says it)",
      before: "running",
      observed: apiError(500, "sandbox_not_found"),
      previous: null,
      gone: false,
    },
    {
      name: "running, a bare 404, then 404 execution_not_found (not twice the same)",
      before: "running",
      observed: apiError(404, "execution_not_found"),
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
      const code = (observed.kind === "answer" && JSON.parse(observed.body).error.code) as string;
      expect(c.error).toEqual({
        code: "record_gone",
        message: `the backend no longer has the execution (${code}): its sandbox was removed or its record expired`,
      });
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

describe("a process start (kind process_start)", () => {
  it("a 201 with its process record: succeeded, definitive, with the process id in its own field", () => {
    const c = classifyObservation(json(201, { process_id: "prc_1", state: "running" }), "dispatch", "process_start");
    expect(c).toMatchObject({
      classification: "succeeded",
      definitive: true,
      process_id: "prc_1",
      execution_id: null,
      exit_code: 0,
      error: null,
    });
  });

  it.each<[string, Observed]>([
    ["no process id", json(201, { state: "running" })],
    ["an empty process id", json(201, { process_id: "" })],
    ["a number as process id", json(201, { process_id: 7 })],
    ["a body that is not an object", json(201, "prc_1")],
    ["a body that is null", json(201, null)],
  ])("a 201 with %s: outcome_unknown, may have run", (_name, observed) => {
    const c = classifyObservation(observed, "dispatch", "process_start");
    expect(c).toMatchObject({
      classification: "outcome_unknown",
      definitive: false,
      process_id: null,
      error: { code: "undocumented_body", message: "HTTP 201 body is not a process record" },
    });
  });

  it("its refusals are the same as an execution's", () => {
    expect(classifyObservation(apiError(400, "invalid_request"), "dispatch", "process_start").classification).toBe(
      "rejected",
    );
  });
});

describe("a jobs submission's answer, when it is not the documented one", () => {
  const job = { job_id: "job_1", name: "a", status: "queued" };
  it.each<[string, unknown]>([
    ["an empty request id", { request_id: "", jobs: [job] }],
    ["no request id", { jobs: [job] }],
    ["jobs that are not a list", { request_id: "ci-1", jobs: { job_1: job } }],
    ["a job without a job id", { request_id: "ci-1", jobs: [job, { name: "b" }] }],
    ["a job that is null", { request_id: "ci-1", jobs: [job, null] }],
    ["a job that is a string", { request_id: "ci-1", jobs: ["job_1"] }],
    ["a body that is not an object", "ci-1"],
    ["a body that is null", null],
  ])("201 with %s: outcome_unknown, nothing claimed", (_name, body) => {
    const c = classifyObservation(json(201, body), "dispatch", "jobs_submit");
    expect(c).toMatchObject({
      classification: "outcome_unknown",
      definitive: false,
      request_id: null,
      error: { code: "undocumented_body", message: "HTTP 201 body is not a jobs submission answer" },
    });
  });
});

describe("decidingObservation", () => {
  const o = (classification: Classification | null, definitive: boolean, n: number) => ({
    classification,
    definitive,
    n,
  });

  it("is the latest definitive observation, though informative ones came after it", () => {
    const list = [o("running", false, 1), o("succeeded", true, 2), o("outcome_unknown", false, 3), o(null, false, 4)];
    expect(decidingObservation(list)?.n).toBe(2);
    expect(decidingObservation([o("failed", true, 1), o("succeeded", true, 2)])?.n).toBe(2);
  });

  it("else the latest informative one; a failed read (null) never erases what was learned", () => {
    expect(decidingObservation([o("outcome_unknown", false, 1), o("running", false, 2), o(null, false, 3)])?.n).toBe(2);
    expect(decidingObservation([o("running", false, 1), o(null, true, 2)])?.n).toBe(1);
  });

  it("is null while nothing was learned (dispatched)", () => {
    expect(decidingObservation([])).toBeNull();
    expect(decidingObservation([o(null, false, 1), o(null, false, 2)])).toBeNull();
  });
});

describe("the helpers, at their edges", () => {
  it("retryHintMs: whole milliseconds from the body; whole seconds of the header, spaces around allowed", () => {
    expect(retryHintMs({ retry_after_ms: 1200.6 }, {})).toBe(1201);
    expect(retryHintMs({ retry_after_ms: 0 }, { "retry-after": "9" })).toBe(0);
    expect(retryHintMs({ retry_after_ms: Number.POSITIVE_INFINITY }, { "retry-after": "9" })).toBe(9000);
    expect(retryHintMs({ retry_after_ms: "1200" }, {})).toBeNull();
    expect(retryHintMs({}, { "retry-after": " 12 " })).toBe(12_000);
    for (const header of ["9a", "a9", "1.5", "", "-3"])
      expect(retryHintMs({}, { "retry-after": header }), header).toBeNull();
  });

  it("exitCodeFor failed: the exit code from 1 to 255, else 128+signal, else 255", () => {
    const failed = (exit_code: number | null, signal: string | null = null) =>
      exitCodeFor({ classification: "failed", exit_code, signal });
    expect(failed(1)).toBe(1);
    expect(failed(255)).toBe(255);
    expect(failed(0, "SIGTERM")).toBe(143);
    expect(failed(256, "SIGTERM")).toBe(143);
    expect(failed(-1)).toBe(255);
    expect(failed(null, "SIGNOTREAL")).toBe(255);
    expect(exitCodeFor({ classification: "running", exit_code: null, signal: null })).toBe(255);
  });

  it("a transport failure: before sending, or one that can only happen before sending, is not_started", () => {
    expect(classifyObservation(transport("ECONNREFUSED", true), "dispatch").classification).toBe("not_started");
    expect(classifyObservation(transport("ECONNRESET", false), "dispatch").classification).toBe("not_started");
    expect(classifyObservation(transport("ECONNRESET", true), "dispatch").classification).toBe("outcome_unknown");
    expect(classifyObservation(transport("ECONNRESET", true), "read")).toMatchObject({
      classification: null,
      error: { code: "ECONNRESET", message: "ECONNRESET" },
    });
  });

  it("a deadline says whether anything had been sent", () => {
    expect(classifyObservation({ kind: "deadline", sent: false }, "dispatch").error).toEqual({
      code: "local_deadline",
      message: "the client's deadline passed before a definitive answer; nothing had been sent",
    });
    expect(classifyObservation({ kind: "deadline", sent: true }, "dispatch").error).toEqual({
      code: "local_deadline",
      message: "the client's deadline passed before a definitive answer",
    });
  });
});

describe("the backend boot an answer names (docs/protocol.md, 'Ownership fences')", () => {
  const boot = "boot_0123456789abcdef";
  it.each<[string, Observed, "dispatch" | "read", "execute" | "process_start"]>([
    ["an execution record", rec({ outcome: "succeeded", exit_code: 0, boot }), "dispatch", "execute"],
    ["an execution record read back", rec({ outcome: "pending", exit_code: null, boot }), "read", "execute"],
    ["a process start's record", json(201, { process_id: "prc_1", boot }), "dispatch", "process_start"],
    ["a stream's started event, detached", { kind: "started", execution_id: "exe_1", boot }, "dispatch", "execute"],
    [
      "a stream with its exit event",
      {
        kind: "stream",
        execution_id: "exe_1",
        boot,
        exit: { outcome: "succeeded", exit_code: 0, signal: null, system_error: null, record_pending: false },
        stdout: "",
        stderr: "",
      },
      "dispatch",
      "execute",
    ],
  ])("is kept from %s", (_name, observed, purpose, kind) => {
    expect(classifyObservation(observed, purpose, kind).boot).toBe(boot);
  });

  it.each<[string, Observed]>([
    ["a record without one (a backend without boots)", rec({ outcome: "succeeded", exit_code: 0 })],
    ["a record from before boots were recorded", rec({ outcome: "succeeded", exit_code: 0, boot: null })],
    ["a boot that is not a string", rec({ outcome: "succeeded", exit_code: 0, boot: 7 })],
    ["an error answer", apiError(409, "stale_handle", { execution_id: "exe_1", boot, current_boot: "boot_x" })],
  ])("is null from %s", (_name, observed) => {
    expect(classifyObservation(observed, "dispatch").boot).toBeNull();
  });
});
