// Runtime checks of wire documents, shared by client (to refuse bad input before
// dispatch, and to judge answers) and backend (to answer 400 with details.field).

import path from "node:path/posix";
import {
  type ExecuteRequest,
  type ExecutionRecord,
  type Outcome,
  TIMEOUT_MAX_MS,
  TIMEOUT_MIN_MS,
  WORKSPACE,
} from "./types.js";

export interface FieldProblem {
  field: string;
  message: string;
}

const IDEMPOTENCY_KEY = /^[A-Za-z0-9_:.-]{1,255}$/;
/** Sandbox ids and names: no path separators, no dots-only names, no spaces. */
const SANDBOX_REF = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function isValidIdempotencyKey(key: string): boolean {
  return IDEMPOTENCY_KEY.test(key);
}

export function isValidSandboxRef(ref: string): boolean {
  return SANDBOX_REF.test(ref) && !ref.includes("..");
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
    if (typeof req.env !== "object" || req.env === null || Array.isArray(req.env)) {
      return { field: "env", message: "env must be an object of strings" };
    }
    for (const [k, v] of Object.entries(req.env)) {
      if (!isValidEnvName(k)) return { field: "env", message: `invalid variable name ${JSON.stringify(k)}` };
      if (typeof v !== "string") return { field: "env", message: `env.${k} must be a string` };
    }
  }
  if (req.stream !== undefined && typeof req.stream !== "boolean") {
    return { field: "stream", message: "stream must be a boolean" };
  }
  if (req.timeout !== undefined) {
    const t = req.timeout;
    if (typeof t !== "number" || !Number.isInteger(t) || t < TIMEOUT_MIN_MS || t > TIMEOUT_MAX_MS) {
      return {
        field: "timeout",
        message: `timeout must be an integer from ${TIMEOUT_MIN_MS} to ${TIMEOUT_MAX_MS} ms`,
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
  if (req.name !== undefined) {
    if (typeof req.name !== "string" || !isValidSandboxRef(req.name)) {
      return {
        field: "name",
        message: "name must be 1-63 characters of A-Z a-z 0-9 _ . - starting with a letter or digit",
      };
    }
  }
  if (req.isolation !== undefined && req.isolation !== "none" && req.isolation !== "bwrap") {
    return { field: "isolation", message: 'isolation must be "none" or "bwrap"' };
  }
  if (req.network !== undefined && typeof req.network !== "boolean") {
    return { field: "network", message: "network must be a boolean" };
  }
  return null;
}
