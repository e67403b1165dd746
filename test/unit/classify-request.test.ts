// A receipt of kind `request` (an MCP tool's file write, stdin write, signal, stop,
// cancel, sandbox create or stop: src/cli/mcp/evidence.ts): succeeded once the backend
// accepted it, rejected or not_started when nothing was done, in doubt when the answer
// was lost; a read of one teaches nothing (nothing of it can be read back by key).

import { describe, expect, it } from "vitest";
import { classifyObservation, type Observed } from "../../src/receipts/classify.js";
import { apiError, json, raw, transport } from "../support/observations.js";

const cases: Array<[string, Observed, string | null, boolean]> = [
  ["201 files written", json(201, { path: "/workspace/a", bytes: 1, sha256: "x" }), "succeeded", true],
  ["202 signal sent", json(202, { process_id: "prc_1", signal: "TERM" }), "succeeded", true],
  ["200 with a body that is no execution record", json(200, { anything: true }), "succeeded", true],
  ["404 process_not_found", apiError(404, "process_not_found"), "rejected", false],
  ["409 stdin_not_enabled", apiError(409, "stdin_not_enabled"), "rejected", false],
  ["503 not_started", apiError(503, "not_started", { reason: "busy", retry_after_ms: 100 }), "not_started", false],
  ["502 from a proxy", raw(502, "bad gateway"), "outcome_unknown", false],
  ["connection refused before sending", transport("ECONNREFUSED", false), "not_started", false],
  ["connection reset after sending", transport("ECONNRESET", true), "outcome_unknown", false],
  ["the client's deadline", { kind: "deadline", sent: true }, "local_timeout", false],
];

describe("classifying a request receipt's answer", () => {
  it.each(cases)("%s", (_name, observed, classification, definitive) => {
    const c = classifyObservation(observed, "dispatch", "request");
    expect(c.classification).toBe(classification);
    expect(c.definitive).toBe(definitive);
    // Never mistaken for an execution's answer.
    expect(c.execution_id).toBeNull();
    expect(c.outcome).toBeNull();
  });

  it("teaches nothing on a read, whatever the answer", () => {
    expect(classifyObservation(json(200, {}), "read", "request").classification).toBeNull();
    expect(classifyObservation(apiError(404, "process_not_found"), "read", "request").classification).toBeNull();
  });
});
