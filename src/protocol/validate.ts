// Runtime checks of wire documents, shared by client (to refuse bad input before
// dispatch, and to judge answers) and backend (to answer 400 with details.field).

import { mountsProblem } from "./volumes.js";
import path from "node:path/posix";
import {
  type ExecuteRequest,
  type ExecutionRecord,
  type Outcome,
  PROCESS_SIGNALS,
  PROCESS_TIMEOUT_MAX_MS,
  TERMINAL_SIZE_MAX,
  TTY_TIMEOUT_MAX_MS,
  RESTART_BACKOFF_MAX_MS,
  RESTART_DEFAULTS,
  RESTART_MAX_RESTARTS_MAX,
  RESTART_POLICY_NAMES,
  type RestartPolicy,
  type RestartPolicyName,
  TIMEOUT_MAX_MS,
  TIMEOUT_MIN_MS,
  WORKSPACE,
  IDEMPOTENCY_KEY_PATTERN,
  NAME_PATTERN,
} from "./types.js";
import { checkLabels } from "./labels.js";
import { checkIdleTimeout } from "./idle.js";

export interface FieldProblem {
  field: string;
  message: string;
}

const IDEMPOTENCY_KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);
const NAME = new RegExp(NAME_PATTERN);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The fields each request object may carry (the `properties` of its schema in
 * src/protocol/schemas, each `additionalProperties: false`): anything else is refused,
 * never ignored, so that a misspelt field never silently becomes a default.
 */
export const KNOWN_FIELDS = {
  ExecuteRequest: ["command", "working_dir", "env", "stream", "timeout", "stdin", "tty"],
  TerminalSize: ["cols", "rows"],
  CancelRequest: ["reason"],
  SandboxCreateRequest: [
    "name",
    "isolation",
    "network",
    "network_mode",
    "egress",
    "publish",
    "limits",
    "labels",
    "idle_timeout_ms",
    "image",
    "volumes",
  ],
  EgressPolicyRequest: ["allow_domains", "deny_domains", "allow_cidrs"],
  PublishRequest: ["port", "host_port", "host_ip"],
  VolumeMount: ["name", "path", "read_only"],
  VolumeCreateRequest: ["name", "size_bytes"],
  SandboxLimitsRequest: ["memory_bytes", "pids", "cpus", "tmp_bytes", "workspace_bytes"],
  SandboxUpdateRequest: ["limits", "labels", "egress", "idle_timeout_ms"],
  ProcessStartRequest: ["command", "working_dir", "env", "name", "stdin", "timeout_ms", "restart", "tty"],
  RestartPolicy: ["policy", "max_restarts", "backoff_ms", "max_backoff_ms"],
  ProcessStdinRequest: ["data", "eof"],
  ProcessSignalRequest: ["signal"],
  JobCancelRequest: ["dependents"],
  JobSubmitRequest: ["request_id", "jobs"],
  JobSpec: [
    "job_id",
    "name",
    "command",
    "working_dir",
    "env",
    "stdin",
    "timeout_ms",
    "depends_on",
    "dependency_policy",
    "queue_key",
  ],
} as const satisfies Record<string, readonly string[]>;

/**
 * The problem of an object with fields outside `known`, naming every one of them
 * (`at`: where the object is, "limits." or "jobs[0]."), or null.
 */
export function unknownFields(obj: object, known: readonly string[], at = ""): FieldProblem | null {
  const extra = Object.keys(obj).filter((k) => !known.includes(k));
  if (extra.length === 0) return null;
  const names = extra.map((k) => JSON.stringify(`${at}${k}`)).join(", ");
  return {
    field: `${at}${extra[0]}`,
    message: `unknown field${extra.length > 1 ? "s" : ""} ${names} (known: ${known.join(", ")})`,
  };
}

export function isValidIdempotencyKey(key: string): boolean {
  return IDEMPOTENCY_KEY.test(key);
}

export function isValidName(name: string): boolean {
  return NAME.test(name);
}

/** A sandbox id or name: a valid name, and never a path (no ".."). */
export function isValidSandboxRef(ref: string): boolean {
  return isValidName(ref) && !ref.includes("..");
}

export function isValidEnvName(name: string): boolean {
  return ENV_NAME.test(name);
}

/**
 * Resolves a working directory inside /workspace. Relative paths are taken from
 * /workspace. Returns null when the path escapes it.
 */
export function resolveWorkingDir(dir: string | undefined): string | null {
  if (dir === undefined || dir === "") return WORKSPACE;
  if (dir.includes("\0")) return null;
  const resolved = path.resolve(WORKSPACE, dir);
  if (resolved === WORKSPACE || resolved.startsWith(`${WORKSPACE}/`)) return resolved;
  return null;
}

/** Validates an execute body; returns the first problem or null. */
export function checkExecuteRequest(body: unknown): FieldProblem | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { field: "body", message: "body must be a JSON object" };
  }
  const req = body as Record<string, unknown>;
  const unknown = unknownFields(req, KNOWN_FIELDS.ExecuteRequest);
  if (unknown) return unknown;
  const { command } = req;
  if (typeof command === "string") {
    if (command.trim() === "") return { field: "command", message: "command must not be empty" };
  } else if (Array.isArray(command)) {
    if (command.length === 0) return { field: "command", message: "command must not be empty" };
    if (!command.every((a) => typeof a === "string")) {
      return { field: "command", message: "command must be an array of strings" };
    }
    if ((command[0] as string) === "") {
      return { field: "command", message: "command[0] must not be empty" };
    }
  } else {
    return { field: "command", message: "command must be an argv array or a string" };
  }
  if (req.working_dir !== undefined) {
    if (typeof req.working_dir !== "string" || resolveWorkingDir(req.working_dir) === null) {
      return { field: "working_dir", message: `working_dir must be inside ${WORKSPACE}` };
    }
  }
  if (req.env !== undefined) {
    const env = checkEnv(req.env);
    if (env) return env;
  }
  if (req.stream !== undefined && typeof req.stream !== "boolean") {
    return { field: "stream", message: "stream must be a boolean" };
  }
  if (req.tty !== undefined) {
    const size = checkTerminalSize(req.tty, "tty");
    if (size) return size;
    if (req.stdin !== undefined) {
      return { field: "stdin", message: "stdin cannot be sent with tty: type at the terminal (…/terminal)" };
    }
  }
  if (req.timeout !== undefined) {
    const t = req.timeout;
    const max = req.tty === undefined ? TIMEOUT_MAX_MS : TTY_TIMEOUT_MAX_MS;
    if (typeof t !== "number" || !Number.isInteger(t) || t < TIMEOUT_MIN_MS || t > max) {
      return {
        field: "timeout",
        message: `timeout must be an integer from ${TIMEOUT_MIN_MS} to ${max} ms`,
      };
    }
  }
  if (req.stdin !== undefined) {
    if (typeof req.stdin !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(req.stdin)) {
      return { field: "stdin", message: "stdin must be base64" };
    }
  }
  return null;
}

/**
 * A terminal's size (`tty` of an execute, `resize` on …/terminal): whole columns and
 * rows, 1 to TERMINAL_SIZE_MAX, and no other field than `known`.
 */
export function checkTerminalSize(
  v: unknown,
  field: string,
  known: readonly string[] = KNOWN_FIELDS.TerminalSize,
): FieldProblem | null {
  const ok = (n: unknown) => typeof n === "number" && Number.isInteger(n) && n >= 1 && n <= TERMINAL_SIZE_MAX;
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    return { field, message: `${field} must be an object {cols, rows}` };
  }
  const unknown = unknownFields(v, known, `${field}.`);
  if (unknown) return unknown;
  const { cols, rows } = v as Record<string, unknown>;
  if (!ok(cols) || !ok(rows)) {
    return { field, message: `${field} must have whole cols and rows from 1 to ${TERMINAL_SIZE_MAX}` };
  }
  return null;
}

export function asExecuteRequest(body: unknown): ExecuteRequest {
  return body as ExecuteRequest;
}

const OUTCOMES: readonly Outcome[] = ["pending", "succeeded", "failed", "timed_out", "cancelled", "unknown"];

/**
 * Checks that an answer body is a documented execution record, so that a 200 with
 * a surprising body can never be read as success. Returns the problem, or null.
 */
export function checkExecutionRecord(doc: unknown): string | null {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return "body is not a JSON object";
  const r = doc as Record<string, unknown>;
  if (typeof r.execution_id !== "string" || r.execution_id === "") return "execution_id missing";
  if (typeof r.outcome !== "string" || !OUTCOMES.includes(r.outcome as Outcome)) return "outcome missing or unknown";
  if (r.exit_code !== undefined && r.exit_code !== null && !Number.isInteger(r.exit_code)) {
    return "exit_code is not an integer";
  }
  if (r.signal !== undefined && r.signal !== null && typeof r.signal !== "string") return "signal is not a string";
  if (r.record_pending !== undefined && typeof r.record_pending !== "boolean") return "record_pending is not a boolean";
  return null;
}

export function asExecutionRecord(doc: unknown): ExecutionRecord {
  return doc as ExecutionRecord;
}

/** Validates a sandbox create body; returns the first problem or null. */
export function checkSandboxCreateRequest(body: unknown): FieldProblem | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { field: "body", message: "body must be a JSON object" };
  }
  const req = body as Record<string, unknown>;
  const unknown = unknownFields(req, KNOWN_FIELDS.SandboxCreateRequest);
  if (unknown) return unknown;
  if (req.name !== undefined) {
    if (typeof req.name !== "string" || !isValidSandboxRef(req.name)) {
      return {
        field: "name",
        message: "name must be 1-63 characters of A-Z a-z 0-9 _ . - starting with a letter or digit",
      };
    }
  }
  if (
    req.isolation !== undefined &&
    req.isolation !== "auto" &&
    req.isolation !== "none" &&
    req.isolation !== "bwrap" &&
    req.isolation !== "slurm"
  ) {
    return { field: "isolation", message: 'isolation must be "auto", "bwrap", "none" or "slurm"' };
  }
  if (req.network !== undefined && typeof req.network !== "boolean") {
    return { field: "network", message: "network must be a boolean" };
  }
  if (req.image !== undefined && (typeof req.image !== "string" || req.image === "" || req.image.length > 4096)) {
    return { field: "image", message: "image must be an image reference (1-4096 characters)" };
  }
  if (req.network_mode !== undefined && !["none", "allow-list", "user", "host"].includes(req.network_mode as string)) {
    return { field: "network_mode", message: 'network_mode must be "none", "allow-list", "user" or "host"' };
  }
  if (req.egress !== undefined) {
    const problem = checkEgressPolicy(req.egress);
    if (problem !== null) return problem;
  }
  if (req.volumes !== undefined) {
    const problem = mountsProblem(req.volumes);
    if (problem !== null) {
      return { field: problem.index < 0 ? "volumes" : `volumes[${problem.index}]`, message: problem.message };
    }
  }
  if (req.publish !== undefined) {
    if (!Array.isArray(req.publish)) return { field: "publish", message: "publish must be an array" };
    for (const [i, p] of (req.publish as unknown[]).entries()) {
      if (typeof p === "object" && p !== null && !Array.isArray(p)) {
        const extra = unknownFields(p, KNOWN_FIELDS.PublishRequest, `publish[${i}].`);
        if (extra) return extra;
      }
      const problem = checkPublish(p);
      if (problem !== null) return { field: "publish", message: problem };
    }
  }
  if (req.labels !== undefined) {
    const problem = checkLabels(req.labels, false);
    if (problem) return problem;
  }
  if (req.idle_timeout_ms !== undefined) {
    const problem = checkIdleTimeout(req.idle_timeout_ms, false);
    if (problem) return problem;
  }
  if (req.limits !== undefined) return checkSandboxLimits(req.limits);
  return null;
}

/** One published port of a create request: `{port, host_port?, host_ip?}`. */
function checkPublish(p: unknown): string | null {
  if (typeof p !== "object" || p === null || Array.isArray(p))
    return "each published port is an object {port, host_port?, host_ip?}";
  const { port, host_port, host_ip } = p as Record<string, unknown>;
  const isPort = (v: unknown, min: number) => typeof v === "number" && Number.isInteger(v) && v >= min && v <= 65535;
  if (!isPort(port, 1)) return "port must be an integer from 1 to 65535";
  if (host_port !== undefined && !isPort(host_port, 0)) return "host_port must be an integer from 0 to 65535";
  if (host_ip !== undefined && typeof host_ip !== "string") return "host_ip must be a string";
  return null;
}

/** The smallest value of each limit that still starts a sandbox (bwrap, its init and a shell). */
export const LIMIT_MINIMUM = {
  memory_bytes: 16 * 1024 * 1024,
  pids: 8,
  cpus: 0.01,
  tmp_bytes: 1024 * 1024,
  workspace_bytes: 16 * 1024 * 1024,
} as const;

/** Why requested limits (SandboxLimitsRequest) cannot be used, or null: known fields, numbers at or over their minimum, or null. */
export function checkSandboxLimits(asked: unknown): FieldProblem | null {
  if (typeof asked !== "object" || asked === null || Array.isArray(asked)) {
    return { field: "limits", message: "limits must be a JSON object" };
  }
  const unknown = unknownFields(asked, KNOWN_FIELDS.SandboxLimitsRequest, "limits.");
  if (unknown) return unknown;
  for (const [key, value] of Object.entries(asked)) {
    if (value === null) continue;
    const whole = key !== "cpus";
    if (typeof value !== "number" || !Number.isFinite(value) || (whole && !Number.isSafeInteger(value))) {
      return {
        field: `limits.${key}`,
        message: `limits.${key} must be ${whole ? "a whole number" : "a number"} or null (no limit)`,
      };
    }
    const min = LIMIT_MINIMUM[key as keyof typeof LIMIT_MINIMUM];
    if (value < min) return { field: `limits.${key}`, message: `limits.${key} must be at least ${min}` };
  }
  return null;
}

/** A PATCH of a sandbox (SandboxUpdateRequest): `limits`, checked as at create, and `labels` (null removes one). */
export function checkSandboxUpdateRequest(body: unknown): FieldProblem | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { field: "body", message: "body must be a JSON object" };
  }
  const unknown = unknownFields(body, KNOWN_FIELDS.SandboxUpdateRequest);
  if (unknown) {
    return {
      ...unknown,
      message: `${unknown.message}: only limits, labels, egress and idle_timeout_ms can be changed`,
    };
  }
  const { limits, labels, egress, idle_timeout_ms } = body as Record<string, unknown>;
  if (idle_timeout_ms !== undefined) {
    const problem = checkIdleTimeout(idle_timeout_ms, true);
    if (problem) return problem;
  }
  if (labels !== undefined) {
    const problem = checkLabels(labels, true);
    if (problem) return problem;
  }
  if (egress !== undefined) {
    const problem = checkEgressPolicy(egress);
    if (problem !== null) return problem;
  }
  return limits === undefined ? null : checkSandboxLimits(limits);
}

/** An egress policy's shape (EgressPolicyRequest): lists of strings; what each entry says is the backend's to check. */
function checkEgressPolicy(egress: unknown): FieldProblem | null {
  if (typeof egress !== "object" || egress === null || Array.isArray(egress)) {
    return { field: "egress", message: "egress must be an object" };
  }
  const extra = unknownFields(egress, KNOWN_FIELDS.EgressPolicyRequest, "egress.");
  if (extra) return extra;
  for (const key of KNOWN_FIELDS.EgressPolicyRequest) {
    const list = (egress as Record<string, unknown>)[key];
    if (list === undefined) continue;
    if (
      !Array.isArray(list) ||
      list.length > 256 ||
      !list.every((e) => typeof e === "string" && e.length > 0 && e.length <= 255)
    ) {
      return { field: `egress.${key}`, message: `egress.${key} must be a list of at most 256 non-empty strings` };
    }
  }
  return null;
}

// ── supervised processes ──

/** A command: an argv array (no shell) or a string for /bin/sh -c, without NUL bytes. */
export function checkCommand(command: unknown): FieldProblem | null {
  if (typeof command === "string") {
    if (command.trim() === "") return { field: "command", message: "command must not be empty" };
    if (command.includes("\0")) return { field: "command", message: "command must not contain NUL bytes" };
    return null;
  }
  if (!Array.isArray(command)) return { field: "command", message: "command must be an argv array or a string" };
  if (command.length === 0) return { field: "command", message: "command must not be empty" };
  if (!command.every((a) => typeof a === "string")) {
    return { field: "command", message: "command must be an array of strings" };
  }
  if (command[0] === "") return { field: "command", message: "command[0] must not be empty" };
  if (command.some((a: string) => a.includes("\0"))) {
    return { field: "command", message: "command must not contain NUL bytes" };
  }
  return null;
}

/** An env object: valid variable names, string values without NUL bytes. */
export function checkEnv(env: unknown): FieldProblem | null {
  if (typeof env !== "object" || env === null || Array.isArray(env)) {
    return { field: "env", message: "env must be an object of strings" };
  }
  for (const [k, v] of Object.entries(env)) {
    if (!isValidEnvName(k)) return { field: "env", message: `invalid variable name ${JSON.stringify(k)}` };
    if (typeof v !== "string") return { field: "env", message: `env.${k} must be a string` };
    if (v.includes("\0")) return { field: "env", message: `env.${k} must not contain NUL bytes` };
  }
  return null;
}

export function isIntIn(value: unknown, min: number, max: number): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}

const RESTART_POLICIES: readonly RestartPolicyName[] = RESTART_POLICY_NAMES;

/** Validates a process start body; returns the first problem or null. */
export function checkProcessStartRequest(body: unknown): FieldProblem | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { field: "body", message: "body must be a JSON object" };
  }
  const req = body as Record<string, unknown>;
  const unknown = unknownFields(req, KNOWN_FIELDS.ProcessStartRequest);
  if (unknown) return unknown;
  if (req.tty !== undefined) {
    const size = checkTerminalSize(req.tty, "tty");
    if (size) return size;
  }
  const command = checkCommand(req.command);
  if (command) return command;
  if (req.working_dir !== undefined) {
    if (typeof req.working_dir !== "string" || resolveWorkingDir(req.working_dir) === null) {
      return { field: "working_dir", message: `working_dir must be inside ${WORKSPACE}` };
    }
  }
  if (req.env !== undefined) {
    const env = checkEnv(req.env);
    if (env) return env;
  }
  if (req.name !== undefined && req.name !== null) {
    if (typeof req.name !== "string" || !isValidSandboxRef(req.name)) {
      return {
        field: "name",
        message: "name must be 1-63 characters of A-Z a-z 0-9 _ . - starting with a letter or digit",
      };
    }
  }
  if (req.stdin !== undefined && typeof req.stdin !== "boolean") {
    return { field: "stdin", message: "stdin must be a boolean (true: a pipe to write to later)" };
  }
  if (req.timeout_ms !== undefined && req.timeout_ms !== null && !isIntIn(req.timeout_ms, 1, PROCESS_TIMEOUT_MAX_MS)) {
    return {
      field: "timeout_ms",
      message: `timeout_ms must be null or an integer from 1 to ${PROCESS_TIMEOUT_MAX_MS}`,
    };
  }
  if (req.restart !== undefined) return checkRestartPolicy(req.restart);
  return null;
}

function checkRestartPolicy(value: unknown): FieldProblem | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { field: "restart", message: "restart must be an object" };
  }
  const r = value as Record<string, unknown>;
  const unknown = unknownFields(r, KNOWN_FIELDS.RestartPolicy, "restart.");
  if (unknown) return unknown;
  if (r.policy !== undefined && !RESTART_POLICIES.includes(r.policy as RestartPolicyName)) {
    return { field: "restart.policy", message: `restart.policy must be one of ${RESTART_POLICIES.join(", ")}` };
  }
  if (r.max_restarts !== undefined && !isIntIn(r.max_restarts, 0, RESTART_MAX_RESTARTS_MAX)) {
    return {
      field: "restart.max_restarts",
      message: `restart.max_restarts must be an integer from 0 to ${RESTART_MAX_RESTARTS_MAX}`,
    };
  }
  if (r.backoff_ms !== undefined && !isIntIn(r.backoff_ms, 1, RESTART_BACKOFF_MAX_MS)) {
    return {
      field: "restart.backoff_ms",
      message: `restart.backoff_ms must be an integer from 1 to ${RESTART_BACKOFF_MAX_MS}`,
    };
  }
  if (r.max_backoff_ms !== undefined && !isIntIn(r.max_backoff_ms, 1, RESTART_BACKOFF_MAX_MS)) {
    return {
      field: "restart.max_backoff_ms",
      message: `restart.max_backoff_ms must be an integer from 1 to ${RESTART_BACKOFF_MAX_MS}`,
    };
  }
  const policy = withRestartDefaults(r as Partial<RestartPolicy>);
  if (policy.max_backoff_ms < policy.backoff_ms) {
    return {
      field: "restart.max_backoff_ms",
      message: "restart.max_backoff_ms must not be less than restart.backoff_ms",
    };
  }
  return null;
}

/**
 * A validated (partial) restart policy with its defaults filled in. When only
 * backoff_ms is given and exceeds the default cap, the cap rises to it.
 */
export function withRestartDefaults(partial: Partial<RestartPolicy> | undefined): RestartPolicy {
  const backoff = partial?.backoff_ms ?? RESTART_DEFAULTS.backoff_ms;
  return {
    policy: partial?.policy ?? RESTART_DEFAULTS.policy,
    max_restarts: partial?.max_restarts ?? RESTART_DEFAULTS.max_restarts,
    backoff_ms: backoff,
    max_backoff_ms: partial?.max_backoff_ms ?? Math.max(RESTART_DEFAULTS.max_backoff_ms, backoff),
  };
}

/** Validates a JSON stdin body ({data: base64, eof?}); returns the first problem or null. */
export function checkProcessStdinRequest(body: unknown): FieldProblem | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { field: "body", message: "body must be a JSON object {data: <base64>, eof?: bool}" };
  }
  const req = body as Record<string, unknown>;
  const unknown = unknownFields(req, KNOWN_FIELDS.ProcessStdinRequest);
  if (unknown) return unknown;
  if (req.data !== undefined && (typeof req.data !== "string" || !BASE64.test(req.data))) {
    return { field: "data", message: "data must be base64" };
  }
  if (req.eof !== undefined && typeof req.eof !== "boolean") return { field: "eof", message: "eof must be a boolean" };
  if (req.data === undefined && req.eof !== true) {
    return { field: "data", message: "data is required unless eof is true" };
  }
  return null;
}

/** The Node name ("SIGTERM") of a signal a process may be sent ("TERM" or "SIGTERM"), or null. */
export function processSignalName(text: unknown): NodeJS.Signals | null {
  if (typeof text !== "string") return null;
  const bare = text.startsWith("SIG") ? text.slice(3) : text;
  return (PROCESS_SIGNALS as readonly string[]).includes(bare) ? (`SIG${bare}` as NodeJS.Signals) : null;
}

/** Validates a signal body; returns the first problem or null. */
export function checkProcessSignalRequest(body: unknown): FieldProblem | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { field: "body", message: "body must be a JSON object {signal}" };
  }
  const unknown = unknownFields(body, KNOWN_FIELDS.ProcessSignalRequest);
  if (unknown) return unknown;
  if (processSignalName((body as Record<string, unknown>).signal) === null) {
    return { field: "signal", message: `signal must be one of ${PROCESS_SIGNALS.join(", ")}` };
  }
  return null;
}
