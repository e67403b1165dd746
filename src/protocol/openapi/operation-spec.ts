// The shapes an operation of the OpenAPI document is described in (operations.ts and
// sandbox-operations.ts), and the small helpers both use.

import { StringEnum, type TSchema, Type } from "../schemas/base.js";
import { type ErrorCode, IDEMPOTENCY_KEY_PATTERN } from "../types.js";

export interface ParameterSpec {
  schema: TSchema;
  description: string;
  required?: boolean;
}

export interface ResponseSpec {
  description: string;
  /** Media type → schema. `text/event-stream` is described by the execution event schemas. */
  content?: Record<string, TSchema>;
  headers?: Record<string, ParameterSpec>;
}

export interface OperationSpec {
  summary: string;
  description?: string;
  tag: "system" | "sandboxes" | "files" | "executions" | "processes" | "jobs";
  query?: Record<string, ParameterSpec>;
  /** Request headers besides Idempotency-Key (every mutation takes that one) and Authorization. */
  headers?: Record<string, ParameterSpec>;
  body?: { required: boolean; description?: string; content: Record<string, TSchema> };
  /** Successful answers by status. */
  responses: Record<number, ResponseSpec>;
  /**
   * Error codes of this route beyond those every route may answer (document.ts adds
   * those: the not-found code of each path parameter, invalid_request where a route takes
   * input, the idempotency conflicts of mutations, 401, 500 and 503 not_started).
   */
  errors: readonly ErrorCode[];
}

const JSON_TYPE = "application/json";
export const EVENT_STREAM = "text/event-stream";

export function int(min: number, max: number, description: string, dflt?: number): ParameterSpec {
  return {
    schema: Type.Integer({ minimum: min, maximum: max, ...(dflt !== undefined && { default: dflt }) }),
    description,
  };
}

export function flag(description: string): ParameterSpec {
  return { schema: StringEnum(["true", "false", "1", "0"]), description };
}

export const key = (description: string): ParameterSpec => ({
  schema: Type.String({ pattern: IDEMPOTENCY_KEY_PATTERN }),
  description,
});

export const json = (schema: TSchema) => ({ [JSON_TYPE]: schema });
export const header = (description: string, schema: TSchema = Type.String()): ParameterSpec => ({
  schema,
  description,
});

/** The header of an answer replayed for a repeated Idempotency-Key. */
export const replayed = {
  "Idempotent-Replayed": header(
    "true: the answer of an earlier request with the same Idempotency-Key.",
    Type.Literal("true"),
  ),
};
