// Fault injection: a small grammar (parsed by a pure function), an injector that
// decides per request which fault fires, and the pure functions that shape an
// answer accordingly. Used to rehearse the client's recovery paths.

import { randomInt } from "node:crypto";
import { parseDuration } from "../../common/duration.js";
import { ErrorCodes } from "../../protocol/types.js";
import { ROUTE_NAMES, type RouteName } from "../../protocol/routes.js";
import { DaemonStartError } from "../errors.js";
import { notStarted } from "../refusal.js";
import { ApiError, type Reply, refusalAnswer } from "./replies.js";
import { seededRandom } from "../../common/seeded-random.js";

export const FAULT_KINDS = [
  "not_started",
  "unconfirmed",
  "record_pending",
  "stream_lost",
  "drop",
  "delay",
  "bad_gateway",
  "bare_503",
  "internal_error",
  "malformed",
  "drop_field",
  "in_progress",
  "no_exit",
  "cut_after",
  "cut_in_frame",
  "reset",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
/** Faults of an event stream; one may fire beside a delay and one other fault. */
export const STREAM_FAULT_KINDS = ["cut_after", "cut_in_frame", "reset"] as const;
export type StreamFaultKind = (typeof STREAM_FAULT_KINDS)[number];
/** A fault that changes the answer (every kind but `delay`, which only waits, and the stream faults). */
export type ActionFault = Exclude<FaultKind, "delay" | StreamFaultKind>;

export type StreamFault =
  /** Close the connection after N frames, without `end`. */
  | { kind: "cut_after"; events: number }
  /** Write half of a frame (the N-th, or the last one when null), then close the connection. */
  | { kind: "cut_in_frame"; frame: number | null }
  /** Fold the first run of output events sent into a `reset`. */
  | { kind: "reset" };

export type FaultWhen =
  | { kind: "always" }
  | { kind: "once" }
  | { kind: "times"; n: number }
  | { kind: "probability"; p: number };

export interface FaultRule {
  route: RouteName | "*";
  fault: FaultKind;
  /** Only for `delay`. */
  delayMs?: number;
  /** Only for `drop_field=NAME`. */
  field?: string;
  /** Only for `cut_after=N` and `cut_in_frame=N`. */
  count?: number;
  when: FaultWhen;
}

export interface FaultDecision {
  delayMs: number;
  action: ActionFault | null;
  /** The field `drop_field` leaves out of the answer. */
  field?: string;
  stream: StreamFault | null;
}

export const NO_FAULT: FaultDecision = { delayMs: 0, action: null, stream: null };

export { FAULT_SPEC_HELP } from "./fault-spec-help.js";

/** Routes the `*` wildcard and explicit rules may name (health and the OpenAPI document are never faulted). */
const FAULTABLE_ROUTES: readonly RouteName[] = ROUTE_NAMES.filter((r) => r !== "health" && r !== "openapi");
const MUTATIONS: readonly RouteName[] = ["execute", "sandbox.create", "sandbox.delete", "executions.cancel"];
const RECORD_ROUTES: readonly RouteName[] = ["execute", "executions.get"];
const STREAM_ROUTES: readonly RouteName[] = ["execute", "executions.stream"];

/** Where each fault makes sense. */
const APPLIES_TO: Record<FaultKind, readonly RouteName[]> = {
  not_started: FAULTABLE_ROUTES,
  unconfirmed: ["execute"],
  record_pending: RECORD_ROUTES,
  stream_lost: RECORD_ROUTES,
  drop: FAULTABLE_ROUTES,
  delay: FAULTABLE_ROUTES,
  bad_gateway: FAULTABLE_ROUTES,
  bare_503: FAULTABLE_ROUTES,
  internal_error: FAULTABLE_ROUTES,
  malformed: FAULTABLE_ROUTES,
  drop_field: FAULTABLE_ROUTES,
  in_progress: MUTATIONS,
  no_exit: RECORD_ROUTES,
  cut_after: STREAM_ROUTES,
  cut_in_frame: STREAM_ROUTES,
  reset: STREAM_ROUTES,
};

const MAX_DELAY_MS = 10 * 60_000;

export function faultApplies(fault: FaultKind, route: RouteName): boolean {
  return APPLIES_TO[fault].includes(route);
}

/** Parses a fault spec (see FAULT_SPEC_HELP). Throws DaemonStartError `invalid_fault_spec`. */
export function parseFaultSpec(spec: string): FaultRule[] {
  const trimmed = spec.trim();
  if (trimmed === "") return [];
  return trimmed.split(",").map((raw, i) => parseRule(raw.trim(), i + 1));
}

function parseRule(raw: string, index: number): FaultRule {
  const fail = (why: string): never => {
    throw new DaemonStartError("invalid_fault_spec", `fault rule ${index} ${JSON.stringify(raw)}: ${why}`);
  };
  if (raw === "") fail("empty rule (expected ROUTE:FAULT[:WHEN])");
  const parts = raw.split(":");
  if (parts.length < 2 || parts.length > 3) fail("expected ROUTE:FAULT[:WHEN]");
  const [routeText, faultText, whenText] = parts as [string, string, string | undefined];

  let route: RouteName | "*";
  if (routeText === "*") route = "*";
  else if ((FAULTABLE_ROUTES as readonly string[]).includes(routeText)) route = routeText as RouteName;
  else route = fail(`unknown route ${JSON.stringify(routeText)} (expected one of: ${FAULTABLE_ROUTES.join(", ")}, *)`);

  let fault: FaultKind;
  let delayMs: number | undefined;
  let count: number | undefined;
  let field: string | undefined;
  const counted = /^(cut_after|cut_in_frame)(?:=(.*))?$/.exec(faultText);
  if (counted) {
    fault = counted[1] as FaultKind;
    const n = counted[2];
    if (n === undefined) {
      if (fault === "cut_after") fail("cut_after needs a number of frames, e.g. cut_after=3");
    } else if (!/^[1-9][0-9]{0,8}$/.test(n)) {
      fail(`invalid ${JSON.stringify(faultText)} (${fault}=N needs a positive integer)`);
    } else {
      count = Number(n);
    }
  } else if (faultText.startsWith("drop_field=")) {
    fault = "drop_field";
    field = faultText.slice("drop_field=".length);
    if (!/^[a-z_]{1,64}$/.test(field))
      fail(`invalid field ${JSON.stringify(field)} (drop_field=NAME needs a field name)`);
  } else if (faultText === "drop_field") {
    fault = fail("drop_field needs a field name, e.g. drop_field=outcome");
  } else if (faultText.startsWith("delay=")) {
    fault = "delay";
    const ms = parseDuration(faultText.slice("delay=".length));
    if (ms === null) fail(`invalid delay ${JSON.stringify(faultText.slice(6))} (use e.g. 500ms, 2s, 1m)`);
    else if (ms > MAX_DELAY_MS) fail("delay must be at most 10m");
    delayMs = ms ?? 0;
  } else if (faultText === "delay") {
    fault = fail("delay needs a duration, e.g. delay=2s");
  } else if ((FAULT_KINDS as readonly string[]).includes(faultText)) {
    fault = faultText as FaultKind;
  } else {
    fault = fail(`unknown fault ${JSON.stringify(faultText)} (expected one of: ${faultNames()})`);
  }

  if (route !== "*" && !faultApplies(fault, route)) {
    fail(`fault ${fault} does not apply to route ${route} (it applies to: ${APPLIES_TO[fault].join(", ")})`);
  }
  const when = whenText === undefined ? ({ kind: "always" } as const) : parseWhen(whenText, fail);
  return {
    route,
    fault,
    ...(delayMs !== undefined && { delayMs }),
    ...(count !== undefined && { count }),
    ...(field !== undefined && { field }),
    when,
  };
}

const FAULT_SYNTAX: Partial<Record<FaultKind, string>> = {
  delay: "delay=DUR",
  cut_after: "cut_after=N",
  cut_in_frame: "cut_in_frame[=N]",
  drop_field: "drop_field=NAME",
};

function faultNames(): string {
  return FAULT_KINDS.map((k) => FAULT_SYNTAX[k] ?? k).join(", ");
}

function isStreamFault(kind: FaultKind): kind is StreamFaultKind {
  return (STREAM_FAULT_KINDS as readonly string[]).includes(kind);
}

function streamFaultOf(rule: FaultRule): StreamFault {
  switch (rule.fault) {
    case "cut_after":
      return { kind: "cut_after", events: rule.count ?? 1 };
    case "cut_in_frame":
      return { kind: "cut_in_frame", frame: rule.count ?? null };
    default:
      return { kind: "reset" };
  }
}

function parseWhen(text: string, fail: (why: string) => never): FaultWhen {
  if (text === "always") return { kind: "always" };
  if (text === "once") return { kind: "once" };
  if (text.startsWith("times=")) {
    const n = text.slice("times=".length);
    if (!/^[1-9][0-9]{0,8}$/.test(n)) fail(`invalid ${JSON.stringify(text)} (times=N needs a positive integer)`);
    return { kind: "times", n: Number(n) };
  }
  if (text.startsWith("p=")) {
    const p = text.slice("p=".length);
    const value = Number(p);
    if (!/^(0|1)?(\.[0-9]+)?$/.test(p) || p === "" || !(value > 0 && value <= 1)) {
      fail(`invalid ${JSON.stringify(text)} (p=P needs a probability, 0 < P <= 1)`);
    }
    return { kind: "probability", p: value };
  }
  return fail(`unknown WHEN ${JSON.stringify(text)} (expected always, once, times=N or p=P)`);
}

/** Decides, per request, which rules fire. Counts `once` and `times=N` as they fire. */
export class FaultInjector {
  private readonly rules: readonly FaultRule[];
  private readonly remaining: Array<number | null>;
  private readonly random: () => number;

  constructor(rules: readonly FaultRule[], opts: { seed?: number } = {}) {
    this.rules = rules;
    this.remaining = rules.map((r) => (r.when.kind === "once" ? 1 : r.when.kind === "times" ? r.when.n : null));
    this.random = seededRandom(opts.seed ?? randomInt(2 ** 31));
  }

  get active(): boolean {
    return this.rules.length > 0;
  }

  decide(route: RouteName): FaultDecision {
    let delayMs = 0;
    let delayChosen = false;
    let action: ActionFault | null = null;
    let field: string | undefined;
    let stream: StreamFault | null = null;
    for (const [i, rule] of this.rules.entries()) {
      if (rule.route !== "*" && rule.route !== route) continue;
      if (!faultApplies(rule.fault, route)) continue;
      const category = rule.fault === "delay" ? "delay" : isStreamFault(rule.fault) ? "stream" : "action";
      const taken = category === "delay" ? delayChosen : category === "stream" ? stream !== null : action !== null;
      if (taken) continue;
      if (!this.fires(rule, i)) continue;
      if (category === "delay") {
        delayChosen = true;
        delayMs = rule.delayMs ?? 0;
      } else if (category === "stream") {
        stream = streamFaultOf(rule);
      } else {
        action = rule.fault as ActionFault;
        field = rule.field;
      }
    }
    return { delayMs, action, stream, ...(field !== undefined && { field }) };
  }

  private fires(rule: FaultRule, i: number): boolean {
    const left = this.remaining[i];
    if (left === 0) return false;
    if (rule.when.kind === "probability" && this.random() >= rule.when.p) return false;
    if (left !== null && left !== undefined) this.remaining[i] = left - 1;
    return true;
  }
}

const BAD_GATEWAY_PAGE =
  "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n";

/** The answer of a fault that pre-empts handling (nothing runs, nothing is stored), or null. */
export function preemptingReply(action: ActionFault | null): Reply | null {
  switch (action) {
    case "not_started":
      return refusalAnswer(
        notStarted(
          "fault_injected",
          "the request was not started (fault injected); send it again later with the same Idempotency-Key",
        ),
      ).toReply();
    case "bad_gateway":
      return { kind: "text", status: 502, contentType: "text/html", body: BAD_GATEWAY_PAGE };
    case "internal_error":
      return new ApiError(500, ErrorCodes.internal, "internal error in the backend (fault injected)").toReply();
    case "bare_503":
      return { kind: "text", status: 503, contentType: "text/plain", body: "Service Unavailable\n" };
    case "in_progress":
      return new ApiError(
        409,
        ErrorCodes.requestInProgress,
        "a request with this Idempotency-Key is still in progress (fault injected)",
      ).toReply();
    default:
      return null;
  }
}

/** How a fault shapes the data of an `exit` event on a stream, or null to leave it alone. */
/** How an event's data is shaped on the way out (a fault); null when it is not. */
export type EventShaper = (type: string, data: Record<string, unknown>) => Record<string, unknown>;

/** The `no_exit` fault of one request: its exit event says failed, without exit_code or signal. */
export function exitEventShaper(action: ActionFault | null): EventShaper | null {
  if (action !== "no_exit") return null;
  return (type, data) => (type === "exit" ? { ...data, outcome: "failed", exit_code: null, signal: null } : data);
}

/** How long an execution answered `record_pending` reads so after its end was first answered. */
export const DEFAULT_RECORD_PENDING_PUBLISH_MS = 3000;

/** The lost end an execution answered `stream_lost` reads as, record and exit event alike. */
const LOST_END = { outcome: "unknown", exit_code: null, signal: null, system_error: "exec_stream_lost" } as const;

/**
 * What an execute fault said of an execution, kept at the edge for the reads that
 * follow (the stored record stays the real one): an execution answered `stream_lost`
 * reads lost — unknown, exec_stream_lost, its event log ending incomplete — for this
 * backend's life; one answered `record_pending` reads record_pending until
 * `publishMs` after its end was first answered.
 */
export class FaultMemory {
  private readonly lost = new Set<string>();
  /** record_pending executions: when their end was first answered (performance.now), or null. */
  private readonly unpublished = new Map<string, number | null>();

  constructor(private readonly publishMs: number) {}

  /** After an execute request's fault: remembers the ones that last. */
  remember(executionId: string, action: ActionFault | null): void {
    if (action === "stream_lost") this.lost.add(executionId);
    else if (action === "record_pending") this.unpublished.set(executionId, null);
  }

  /** An execution's record as this backend answers it. */
  record<R extends { execution_id: string; outcome: string; record_pending?: boolean }>(record: R): R {
    if (record.outcome === "pending") return record;
    if (this.lost.has(record.execution_id)) return { ...record, ...LOST_END };
    return this.pending(record.execution_id) ? { ...record, record_pending: true } : record;
  }

  /** How an execution's events are answered, or null when nothing of it is remembered. */
  events(executionId: string): EventShaper | null {
    if (this.lost.has(executionId)) {
      return (type, data) =>
        type === "exit"
          ? { ...data, ...LOST_END }
          : type === "end"
            ? { state: "incomplete", reason: LOST_END.system_error }
            : data;
    }
    if (!this.unpublished.has(executionId)) return null;
    return (type, data) => (type === "exit" && this.pending(executionId) ? { ...data, record_pending: true } : data);
  }

  private pending(executionId: string): boolean {
    if (!this.unpublished.has(executionId)) return false;
    const since = this.unpublished.get(executionId) ?? null;
    const now = performance.now();
    if (since === null) this.unpublished.set(executionId, now);
    else if (now - since >= this.publishMs) {
      this.unpublished.delete(executionId);
      return false;
    }
    return true;
  }
}

/** Both shapers in turn (one request's fault after what is remembered). */
export function bothShapers(a: EventShaper | null, b: EventShaper | null): EventShaper | null {
  if (a === null || b === null) return a ?? b;
  return (type, data) => b(type, a(type, data));
}

function isRecordBody(body: unknown): body is Record<string, unknown> & { execution_id: string } {
  return (
    typeof body === "object" && body !== null && typeof (body as { execution_id?: unknown }).execution_id === "string"
  );
}

/**
 * Shapes a handled request's answer by a fault. Only successful JSON answers are
 * changed; errors pass through as they are.
 */
export function applyAnswerFault(action: ActionFault | null, reply: Reply, field?: string): Reply {
  if (action === null || reply.kind !== "json" || reply.status < 200 || reply.status >= 300) return reply;
  const body = reply.body;
  switch (action) {
    case "drop":
      return { kind: "drop" };
    case "drop_field": {
      // An answer off the contract on purpose: the validating run must catch it (test/contract/).
      if (typeof body !== "object" || body === null || field === undefined || !(field in body)) return reply;
      const { [field]: _, ...rest } = body as Record<string, unknown>;
      return { ...reply, body: rest };
    }
    case "malformed": {
      const text = JSON.stringify(body);
      // Cut mid-document: a body that starts like the real one but never parses.
      return {
        kind: "text",
        status: reply.status,
        contentType: "application/json",
        body: text.slice(0, Math.max(1, Math.floor(text.length / 2))),
      };
    }
    case "unconfirmed":
      if (!isRecordBody(body)) return reply;
      return new ApiError(
        409,
        ErrorCodes.executionResultUnconfirmed,
        "the execution was admitted but its stored result could not be confirmed (fault injected)",
        { execution_id: body.execution_id, idempotency_key: body.idempotency_key ?? null },
      ).toReply();
    case "no_exit":
      if (!isRecordBody(body)) return reply;
      return { ...reply, body: { ...body, outcome: "failed", exit_code: null, signal: null } };
    case "stream_lost":
      if (!isRecordBody(body)) return reply;
      return {
        ...reply,
        body: { ...body, outcome: "unknown", system_error: "exec_stream_lost", exit_code: null, signal: null },
      };
    case "record_pending":
      if (!isRecordBody(body)) return reply;
      return { ...reply, body: { ...body, record_pending: true } };
    default:
      return reply;
  }
}
