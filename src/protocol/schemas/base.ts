// The building blocks of the wire schemas. Every wire document is declared once, with
// TypeBox (JSON Schema natively): the TypeScript type is derived from the declaration
// (`type X = Static<typeof X>`), and the OpenAPI document (openapi/document.ts) is built
// from the same objects. A schema given an `$id` with `named` becomes a component of
// the document (`#/components/schemas/<id>`); see docs/protocol.md, "The OpenAPI document".

import { type SchemaOptions, type Static, type TSchema, Type } from "@sinclair/typebox";

export { type Static, type TSchema, Type };

/** Every named schema by its id: the components of the OpenAPI document. */
export const NAMED_SCHEMAS = new Map<string, TSchema>();

/** A schema published under `#/components/schemas/<id>` wherever it is used. */
export function named<T extends TSchema>(id: string, schema: T): T {
  if (NAMED_SCHEMAS.has(id)) throw new Error(`two wire schemas are named ${id}`);
  const withId = { ...schema, $id: id };
  NAMED_SCHEMAS.set(id, withId);
  return withId;
}

/** `T` or null. */
export function Nullable<T extends TSchema>(schema: T, opts: SchemaOptions = {}) {
  return Type.Union([schema, Type.Null()], opts);
}

/** One of a list of strings, as a JSON Schema `enum`. */
export function StringEnum<const T extends readonly string[]>(values: T, opts: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...opts });
}

/** An object of string keys whose values are `T` (`additionalProperties`). */
export function StringMap<T extends TSchema>(values: T, opts: SchemaOptions = {}) {
  return Type.Unsafe<Record<string, Static<T>>>({ type: "object", additionalProperties: values, ...opts });
}

/** An RFC 3339 UTC time. */
export function Timestamp(opts: SchemaOptions = {}) {
  return Type.String({ format: "date-time", ...opts });
}

/** Bytes as standard base64. */
export function Base64(opts: SchemaOptions = {}) {
  return Type.String({ contentEncoding: "base64", ...opts });
}

/** A non-negative integer (a count, a size, an offset). */
export function Count(opts: SchemaOptions = {}) {
  return Type.Integer({ minimum: 0, ...opts });
}

export const Outcome = named(
  "Outcome",
  StringEnum(["pending", "succeeded", "failed", "timed_out", "cancelled", "unknown"], {
    description: "`pending` until the command ended; `unknown`: it may have run (see system_error).",
  }),
);
export type Outcome = Static<typeof Outcome>;

/**
 * Why a command ended when neither it nor the backend ended it (sbx): `out_of_memory`,
 * the kernel killed it at its sandbox's memory limit (its signal is SIGKILL).
 */
export const EndReason = named("EndReason", StringEnum(["out_of_memory"]));
export type EndReason = Static<typeof EndReason>;

/**
 * What one command used (sbx; docs/operations.md, "Per-command usage"): measured in a
 * cgroup of its own below its sandbox's, so a neighbour's use is never in it. A figure
 * that cannot be had here is null, and `unavailable` says why (never a zero).
 */
export const CommandUsage = named(
  "CommandUsage",
  Type.Object({
    cpu_user_us: Nullable(Count({ description: "CPU time in user mode, microseconds (its processes and theirs)." })),
    cpu_system_us: Nullable(Count({ description: "CPU time in the kernel on its behalf, microseconds." })),
    memory_peak_bytes: Nullable(
      Count({ description: "The most memory its processes held at once (pages and kernel memory charged to it)." }),
    ),
    oom_kills: Nullable(Count({ description: "Its processes the kernel's OOM killer killed." })),
    limits_hit: Type.Array(StringEnum(["memory", "pids", "host_memory"]), {
      description:
        "Limits it ran into: memory (a process of it killed at its sandbox's memory limit), pids (a fork of it refused at the sandbox's pids limit), host_memory (killed when the host ran out of memory).",
    }),
    unavailable: StringMap(Type.String(), {
      description: "Each figure that is null (or a limit that could not be watched): why, on this backend.",
    }),
    measured_by: Type.String({ description: 'How it was measured, e.g. "cgroup v1 (cpuacct, memory, pids)".' }),
  }),
);
export type CommandUsage = Static<typeof CommandUsage>;

export const Command = named(
  "Command",
  Type.Union([Type.Array(Type.String(), { minItems: 1 }), Type.String({ minLength: 1 })], {
    description: "An argv array (run with no shell) or a string run through /bin/sh -c.",
  }),
);

export const Env = StringMap(Type.String(), {
  description: "Environment variables for the command (names: [A-Za-z_][A-Za-z0-9_]*).",
});

export const OutputStream = named("OutputStream", StringEnum(["stdout", "stderr"]));
export type OutputStream = Static<typeof OutputStream>;

/** A named schema where it is used, with what it means there (`$ref` with a description). */
export function described<T extends TSchema>(schema: T, description: string): T {
  return { ...schema, description };
}
