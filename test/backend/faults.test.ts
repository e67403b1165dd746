import { describe, expect, it } from "vitest";
import { ROUTE_NAMES } from "../../src/protocol/routes.js";
import {
  applyAnswerFault,
  FAULT_SPEC_HELP,
  FaultInjector,
  parseFaultSpec,
  preemptingReply,
} from "../../src/backend/http/faults.js";
import type { Reply } from "../../src/backend/http/replies.js";

describe("parseFaultSpec", () => {
  it.each([
    ["", []],
    ["   ", []],
    ["execute:not_started", [{ route: "execute", fault: "not_started", when: { kind: "always" } }]],
    ["execute:unconfirmed:once", [{ route: "execute", fault: "unconfirmed", when: { kind: "once" } }]],
    [
      "executions.get:stream_lost:always",
      [{ route: "executions.get", fault: "stream_lost", when: { kind: "always" } }],
    ],
    ["sandbox.create:drop:times=3", [{ route: "sandbox.create", fault: "drop", when: { kind: "times", n: 3 } }]],
    ["*:bare_503:p=0.25", [{ route: "*", fault: "bare_503", when: { kind: "probability", p: 0.25 } }]],
    [
      "executions.get:drop_field=outcome:once",
      [{ route: "executions.get", fault: "drop_field", field: "outcome", when: { kind: "once" } }],
    ],
    ["*:internal_error", [{ route: "*", fault: "internal_error", when: { kind: "always" } }]],
    ["*:unconfirmed:p=1", [{ route: "*", fault: "unconfirmed", when: { kind: "probability", p: 1 } }]],
    ["execute:delay=2s", [{ route: "execute", fault: "delay", delayMs: 2000, when: { kind: "always" } }]],
    ["execute:delay=500ms:once", [{ route: "execute", fault: "delay", delayMs: 500, when: { kind: "once" } }]],
    [
      " execute:record_pending , executions.get:no_exit:once ",
      [
        { route: "execute", fault: "record_pending", when: { kind: "always" } },
        { route: "executions.get", fault: "no_exit", when: { kind: "once" } },
      ],
    ],
    [
      "execute:bad_gateway,execute:malformed,execute:in_progress",
      [
        { route: "execute", fault: "bad_gateway", when: { kind: "always" } },
        { route: "execute", fault: "malformed", when: { kind: "always" } },
        { route: "execute", fault: "in_progress", when: { kind: "always" } },
      ],
    ],
    [
      "executions.stream:cut_after=3:once,execute:cut_in_frame,executions.stream:cut_in_frame=2,*:reset:times=2",
      [
        { route: "executions.stream", fault: "cut_after", count: 3, when: { kind: "once" } },
        { route: "execute", fault: "cut_in_frame", when: { kind: "always" } },
        { route: "executions.stream", fault: "cut_in_frame", count: 2, when: { kind: "always" } },
        { route: "*", fault: "reset", when: { kind: "times", n: 2 } },
      ],
    ],
    [
      "executions.cancel:in_progress,executions.output:drop,executions.events:delay=1s",
      [
        { route: "executions.cancel", fault: "in_progress", when: { kind: "always" } },
        { route: "executions.output", fault: "drop", when: { kind: "always" } },
        { route: "executions.events", fault: "delay", delayMs: 1000, when: { kind: "always" } },
      ],
    ],
  ])("parses %j", (spec, rules) => {
    expect(parseFaultSpec(spec)).toEqual(rules);
  });

  it.each([
    ["execute", 'fault rule 1 "execute": expected ROUTE:FAULT[:WHEN]'],
    ["execute:drop:once:again", 'fault rule 1 "execute:drop:once:again": expected ROUTE:FAULT[:WHEN]'],
    ["execute:drop,", 'fault rule 2 "": empty rule (expected ROUTE:FAULT[:WHEN])'],
    [
      "exec:drop",
      `fault rule 1 "exec:drop": unknown route "exec" (expected one of: ${ROUTE_NAMES.filter((r) => r !== "health" && r !== "openapi").join(", ")}, *)`,
    ],
    ["health:drop", 'fault rule 1 "health:drop": unknown route "health"'],
    ["execute:boom", 'fault rule 1 "execute:boom": unknown fault "boom" (expected one of: not_started, unconfirmed,'],
    ["execute:delay", 'fault rule 1 "execute:delay": delay needs a duration, e.g. delay=2s'],
    ["execute:drop_field", 'fault rule 1 "execute:drop_field": drop_field needs a field name, e.g. drop_field=outcome'],
    [
      "execute:drop_field=Outcome!",
      'fault rule 1 "execute:drop_field=Outcome!": invalid field "Outcome!" (drop_field=NAME needs a field name)',
    ],
    ["execute:delay=2", 'fault rule 1 "execute:delay=2": invalid delay "2" (use e.g. 500ms, 2s, 1m)'],
    ["execute:delay=11m", 'fault rule 1 "execute:delay=11m": delay must be at most 10m'],
    [
      "execute:drop:twice",
      'fault rule 1 "execute:drop:twice": unknown WHEN "twice" (expected always, once, times=N or p=P)',
    ],
    [
      "execute:drop:times=0",
      'fault rule 1 "execute:drop:times=0": invalid "times=0" (times=N needs a positive integer)',
    ],
    ["execute:drop:p=0", 'fault rule 1 "execute:drop:p=0": invalid "p=0" (p=P needs a probability, 0 < P <= 1)'],
    ["execute:drop:p=1.5", 'invalid "p=1.5"'],
    ["execute:drop:p=abc", 'invalid "p=abc"'],
    [
      "sandbox.create:unconfirmed",
      'fault rule 1 "sandbox.create:unconfirmed": fault unconfirmed does not apply to route sandbox.create (it applies to: execute)',
    ],
    ["executions.get:in_progress", "fault in_progress does not apply to route executions.get"],
    ["execute:cut_after", 'fault rule 1 "execute:cut_after": cut_after needs a number of frames, e.g. cut_after=3'],
    [
      "execute:cut_after=0",
      'fault rule 1 "execute:cut_after=0": invalid "cut_after=0" (cut_after=N needs a positive integer)',
    ],
    ["execute:cut_in_frame=x", 'invalid "cut_in_frame=x" (cut_in_frame=N needs a positive integer)'],
    [
      "executions.get:reset",
      'fault rule 1 "executions.get:reset": fault reset does not apply to route executions.get (it applies to: execute, executions.stream)',
    ],
    ["executions.events:cut_after=1", "fault cut_after does not apply to route executions.events"],
  ])("rejects %j", (spec, message) => {
    let caught: unknown;
    try {
      parseFaultSpec(spec);
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ name: "DaemonStartError", code: "invalid_fault_spec" });
    expect((caught as Error).message).toContain(message);
  });

  it("documents every fault kind in its help text", () => {
    for (const word of [
      "not_started",
      "unconfirmed",
      "record_pending",
      "stream_lost",
      "drop",
      "delay=DUR",
      "bad_gateway",
      "bare_503",
      "malformed",
      "in_progress",
      "no_exit",
      "cut_after=N",
      "cut_in_frame[=N]",
      "reset",
      "executions.stream",
      "executions.cancel",
      "times=N",
      "p=P",
    ]) {
      expect(FAULT_SPEC_HELP).toContain(word);
    }
  });
});

describe("delay durations (read like every duration: src/common/duration.ts)", () => {
  it.each([
    ["500ms", 500],
    ["2s", 2000],
    ["1.5s", 1500],
    ["1m", 60_000],
    ["0ms", 0],
  ])("delay=%s waits %d ms", (text, ms) => {
    expect(parseFaultSpec(`execute:delay=${text}`)[0]).toMatchObject({ fault: "delay", delayMs: ms });
  });

  it.each([
    ["2", "invalid delay"],
    ["s", "invalid delay"],
    ["-1s", "invalid delay"],
    ["1h", "delay must be at most 10m"],
  ])("refuses delay=%s", (text, message) => {
    expect(() => parseFaultSpec(`execute:delay=${text}`)).toThrow(message);
  });
});

describe("FaultInjector", () => {
  it("fires once, times=N and always as counted", () => {
    const injector = new FaultInjector(parseFaultSpec("execute:drop:once,execute:malformed:times=2,execute:bare_503"));
    const actions = Array.from({ length: 5 }, () => injector.decide("execute").action);
    expect(actions).toEqual(["drop", "malformed", "malformed", "bare_503", "bare_503"]);
  });

  it("combines a delay with one other fault", () => {
    const injector = new FaultInjector(parseFaultSpec("execute:delay=1s,execute:not_started:once"));
    expect(injector.decide("execute")).toEqual({ delayMs: 1000, action: "not_started", stream: null });
    expect(injector.decide("execute")).toEqual({ delayMs: 1000, action: null, stream: null });
  });

  it("fires a stream fault beside a delay and one other fault", () => {
    const injector = new FaultInjector(
      parseFaultSpec("execute:delay=1s:once,execute:no_exit:once,execute:cut_after=2:once,execute:reset"),
    );
    expect(injector.decide("execute")).toEqual({
      delayMs: 1000,
      action: "no_exit",
      stream: { kind: "cut_after", events: 2 },
    });
    expect(injector.decide("execute")).toEqual({ delayMs: 0, action: null, stream: { kind: "reset" } });
    expect(new FaultInjector(parseFaultSpec("*:cut_in_frame")).decide("executions.stream").stream).toEqual({
      kind: "cut_in_frame",
      frame: null,
    });
    expect(new FaultInjector(parseFaultSpec("*:cut_in_frame")).decide("executions.get").stream).toBeNull();
  });

  it("applies * only where the fault makes sense, never to health", () => {
    const injector = new FaultInjector(parseFaultSpec("*:unconfirmed"));
    expect(injector.decide("execute").action).toBe("unconfirmed");
    expect(injector.decide("sandbox.create").action).toBeNull();
    expect(injector.decide("health").action).toBeNull();
  });

  it("does not spend a once rule on other routes", () => {
    const injector = new FaultInjector(parseFaultSpec("execute:drop:once"));
    expect(injector.decide("executions.get").action).toBeNull();
    expect(injector.decide("execute").action).toBe("drop");
    expect(injector.decide("execute").action).toBeNull();
  });

  it("is repeatable for p= with a seed", () => {
    const run = () => {
      const injector = new FaultInjector(parseFaultSpec("execute:drop:p=0.5"), { seed: 42 });
      return Array.from({ length: 40 }, () => injector.decide("execute").action === "drop");
    };
    const first = run();
    expect(run()).toEqual(first);
    const fired = first.filter(Boolean).length;
    expect(fired).toBeGreaterThan(5);
    expect(fired).toBeLessThan(35);
  });
});

describe("answers shaped by faults", () => {
  const record: Reply = {
    kind: "json",
    status: 200,
    body: { execution_id: "exe_1", idempotency_key: "k1", outcome: "succeeded", exit_code: 0, signal: null },
  };

  it("answers not_started with the documented retry hint", () => {
    expect(preemptingReply("not_started")).toEqual({
      kind: "json",
      status: 503,
      headers: { "Retry-After": "2" },
      body: {
        error: {
          code: "not_started",
          message: expect.any(String),
          details: { reason: "fault_injected", retry_after_ms: 2000 },
        },
      },
    });
    expect(preemptingReply("bad_gateway")).toMatchObject({ status: 502, contentType: "text/html" });
    expect(preemptingReply("bare_503")).toMatchObject({ status: 503, contentType: "text/plain" });
    expect(preemptingReply("in_progress")).toMatchObject({ status: 409 });
    expect(preemptingReply("internal_error")).toMatchObject({
      status: 500,
      body: { error: { code: "internal_error" } },
    });
    expect(preemptingReply("drop")).toBeNull();
    expect(preemptingReply(null)).toBeNull();
  });

  it("rewrites a record answer", () => {
    expect(applyAnswerFault("unconfirmed", record)).toMatchObject({
      status: 409,
      body: {
        error: { code: "execution_result_unconfirmed", details: { execution_id: "exe_1", idempotency_key: "k1" } },
      },
    });
    expect(applyAnswerFault("no_exit", record)).toMatchObject({
      body: { outcome: "failed", exit_code: null, signal: null },
    });
    expect(applyAnswerFault("stream_lost", record)).toMatchObject({
      body: { outcome: "unknown", system_error: "exec_stream_lost", exit_code: null, signal: null },
    });
    expect(applyAnswerFault("record_pending", record)).toMatchObject({ body: { record_pending: true } });
    expect(applyAnswerFault("drop", record)).toEqual({ kind: "drop" });
    const malformed = applyAnswerFault("malformed", record);
    expect(malformed).toMatchObject({ kind: "text", status: 200 });
    expect(() => JSON.parse((malformed as { body: string }).body)).toThrow();
    const dropped = applyAnswerFault("drop_field", record, "outcome") as { body: Record<string, unknown> };
    expect(dropped.body).not.toHaveProperty("outcome");
    expect(dropped.body).toMatchObject({ execution_id: "exe_1" });
    expect(applyAnswerFault("drop_field", record, "no_such_field")).toBe(record);
  });

  it("leaves error answers alone", () => {
    const error: Reply = { kind: "json", status: 404, body: { error: { code: "x", message: "y" } } };
    for (const action of ["unconfirmed", "malformed", "drop", "no_exit"] as const) {
      expect(applyAnswerFault(action, error)).toBe(error);
    }
  });
});
