// The OpenAPI 3.1 document of /api/v1, built from the route table (routes.ts), what
// each route takes and answers (operations.ts), the wire schemas (types.ts,
// processes.ts, jobs.ts) and the error table (errors.ts): nothing in it is written
// twice. The daemon serves it at GET /api/v1/openapi.json; `npm run generate` writes
// it to docs/openapi.json (a test keeps the two equal). docs/protocol.md, "The OpenAPI
// document", says how to add a route or an error code.

import { VERSION } from "../../version.js";
import { ERRORS, type ErrorSpec } from "../errors.js";
import { ROUTE_NAMES, ROUTES, type RouteName } from "../routes.js";
import { NAMED_SCHEMAS, type TSchema, Type } from "../schemas/base.js";
import { EVENT_DATA } from "../schemas/executions.js";
import { API_PREFIX, type ErrorCode, IDEMPOTENCY_KEY_PATTERN, PROTOCOL_VERSION } from "../types.js";
import { EVENT_STREAM, OPERATIONS, type OperationSpec, type ParameterSpec, type ResponseSpec } from "./operations.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** The extension on a `text/event-stream` media type naming each event type's `data` schema. */
export const SSE_EVENTS_EXTENSION = "x-sse-events";

/** What each path parameter is, and the code a route answers when it names nothing. */
const PATH_PARAMETERS: Record<string, { description: string; notFound: ErrorCode; schema?: TSchema }> = {
  id: { description: "A sandbox id (sbx_…) or name.", notFound: "sandbox_not_found" },
  eid: { description: "An execution id (exe_…).", notFound: "execution_not_found" },
  pid: { description: "A process id (prc_…).", notFound: "process_not_found" },
  jid: { description: "A job id.", notFound: "job_not_found" },
  volume: { description: "A volume's name.", notFound: "volume_not_found" },
  port: {
    description: "A TCP port on the sandbox's own loopback (1–65535).",
    notFound: "invalid_request",
    schema: Type.String({ pattern: "^[0-9]{1,5}$" }),
  },
};

/** Routes the fault injection never touches, so never answer 503 not_started. */
const NEVER_NOT_STARTED: readonly RouteName[] = ["health", "openapi"];

const TAGS: Record<OperationSpec["tag"], string> = {
  system: "The backend itself.",
  sandboxes: "Sandboxes: where commands run, each with its own /workspace.",
  files: "Files in and out of a sandbox's workspace.",
  executions: "Executions: one bounded command, its record, its events and its output.",
  processes: "Supervised processes: background workers with restart policies and logs.",
  jobs: "Jobs: one-shot commands with dependencies and queue keys.",
};

/** The error codes a route may answer: its own, and those every route of its kind may. */
export function routeErrors(name: RouteName): ErrorCode[] {
  const route = ROUTES[name];
  const op = OPERATIONS[name];
  const codes = new Set<ErrorCode>(["unauthorized", "headers_too_large", "internal_error"]);
  if (!NEVER_NOT_STARTED.includes(name)) codes.add("not_started");
  for (const segment of route.path.split("/")) {
    if (segment.startsWith(":")) codes.add(PATH_PARAMETERS[segment.slice(1)]!.notFound);
  }
  // Every route refuses a query parameter it does not take (docs/protocol.md), so every
  // route may answer invalid_request, even one that takes no input.
  codes.add("invalid_request");
  if (route.mutation) {
    codes.add("request_in_progress");
    codes.add("idempotency_key_reused");
  }
  if (op.body !== undefined) codes.add("payload_too_large");
  for (const code of op.errors) codes.add(code);
  return [...codes];
}

/** `ErrorBody` of one code: `InvalidRequestError` for invalid_request. */
export function errorComponentName(code: ErrorCode): string {
  return `${code.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase())}Error`;
}

function errorSchema(code: ErrorCode, spec: ErrorSpec): TSchema {
  const details = spec.details ?? {};
  return Type.Object(
    {
      error: Type.Object({
        code: Type.Literal(code),
        message: Type.String(),
        details: Type.Object(details, { additionalProperties: true }),
      }),
    },
    { description: `${spec.status} ${code}: ${spec.meaning}` },
  );
}

class Builder {
  readonly components: Record<string, Json> = {};

  /** A schema as JSON, each named schema in it replaced by a reference to its component. */
  schema(schema: TSchema, top = true): Json {
    const id = (schema as { $id?: unknown }).$id;
    if (typeof id === "string" && !top) {
      const canonical = NAMED_SCHEMAS.get(id);
      if (canonical === undefined) throw new Error(`schema ${id} is not named`);
      this.component(id, canonical);
      const ref: JsonObject = { $ref: `#/components/schemas/${id}` };
      if (typeof schema.description === "string" && schema.description !== canonical.description) {
        ref.description = schema.description;
      }
      return ref;
    }
    const { $id: _, ...rest } = schema as TSchema & { $id?: unknown };
    return this.plain(rest, false) as Json;
  }

  component(id: string, schema: TSchema): void {
    if (id in this.components) return;
    this.components[id] = null; // reserved: a schema that refers to itself ends here
    this.components[id] = this.schema(schema);
  }

  private plain(value: unknown, nested = true): unknown {
    if (Array.isArray(value)) return value.map((v) => this.plain(v));
    if (typeof value !== "object" || value === null) return value;
    const id = (value as { $id?: unknown }).$id;
    if (nested && typeof id === "string" && NAMED_SCHEMAS.has(id)) return this.schema(value as TSchema, false);
    const out: JsonObject = {};
    // Own string keys only: TypeBox's symbols (Kind, Optional) are not JSON Schema.
    for (const [k, v] of Object.entries(value)) out[k] = this.plain(v) as Json;
    return out;
  }

  /** A schema used inline (at the top of a media type or parameter): a named one becomes a reference. */
  ref(schema: TSchema): Json {
    const id = (schema as { $id?: unknown }).$id;
    return typeof id === "string" && NAMED_SCHEMAS.has(id) ? this.schema(schema, false) : this.schema(schema);
  }
}

function openApiPath(path: string): string {
  return `${API_PREFIX}/${path
    .split("/")
    .map((s) => (s.startsWith(":") ? `{${s.slice(1)}}` : s))
    .join("/")}`;
}

function parameter(b: Builder, name: string, where: "path" | "query" | "header", spec: ParameterSpec): Json {
  return {
    name,
    in: where,
    description: spec.description,
    required: where === "path" ? true : (spec.required ?? false),
    schema: b.ref(spec.schema),
  };
}

function headers(b: Builder, specs: Record<string, ParameterSpec>): JsonObject {
  const out: JsonObject = {};
  for (const [name, spec] of Object.entries(specs)) {
    out[name] = { description: spec.description, required: spec.required ?? false, schema: b.ref(spec.schema) };
  }
  return out;
}

function sseMediaType(b: Builder): JsonObject {
  const events: JsonObject = {};
  for (const [type, schema] of Object.entries(EVENT_DATA)) events[type] = b.ref(schema);
  return {
    schema: { type: "string" },
    [SSE_EVENTS_EXTENSION]: events,
  };
}

function content(b: Builder, media: Record<string, TSchema>): JsonObject {
  const out: JsonObject = {};
  for (const [type, schema] of Object.entries(media)) {
    out[type] = type === EVENT_STREAM ? sseMediaType(b) : { schema: b.ref(schema) };
  }
  return out;
}

function success(b: Builder, spec: ResponseSpec): JsonObject {
  return {
    description: spec.description,
    ...(spec.headers && { headers: headers(b, spec.headers) }),
    ...(spec.content && { content: content(b, spec.content) }),
  };
}

const ERROR_HEADERS: Record<string, ParameterSpec> = {
  "Retry-After": {
    schema: Type.String({ pattern: "^[0-9]+$" }),
    description: "Seconds to wait before sending it again.",
  },
  "WWW-Authenticate": { schema: Type.String(), description: "How to authenticate." },
  Allow: { schema: Type.String(), description: "The methods the path takes." },
  Upgrade: { schema: Type.String(), description: "The protocol the route speaks (websocket)." },
};

function errorResponse(b: Builder, codes: ErrorCode[]): JsonObject {
  const refs = codes.map((code) => {
    const name = errorComponentName(code);
    if (!(name in b.components)) b.components[name] = b.schema(errorSchema(code, ERRORS[code]));
    return { $ref: `#/components/schemas/${name}` };
  });
  const headerNames = [...new Set(codes.flatMap((c) => (ERRORS[c] as ErrorSpec).headers ?? []))];
  const described: Record<string, ParameterSpec> = {};
  for (const h of headerNames) described[h] = ERROR_HEADERS[h]!;
  return {
    description: codes.map((c) => `\`${c}\`: ${ERRORS[c].meaning}`).join("; "),
    ...(headerNames.length > 0 && { headers: headers(b, described) }),
    content: { "application/json": { schema: refs.length === 1 ? refs[0]! : { anyOf: refs } } },
  };
}

function operation(b: Builder, name: RouteName): JsonObject {
  const route = ROUTES[name];
  const op: OperationSpec = OPERATIONS[name];
  const params: Json[] = [];
  for (const segment of route.path.split("/")) {
    if (!segment.startsWith(":")) continue;
    const p = segment.slice(1);
    params.push(
      parameter(b, p, "path", {
        schema: PATH_PARAMETERS[p]!.schema ?? Type.String({ minLength: 1 }),
        description: PATH_PARAMETERS[p]!.description,
      }),
    );
  }
  for (const [q, spec] of Object.entries(op.query ?? {})) params.push(parameter(b, q, "query", spec));
  if (route.mutation) {
    params.push({ $ref: "#/components/parameters/IdempotencyKey" });
  }
  for (const [h, spec] of Object.entries(op.headers ?? {})) params.push(parameter(b, h, "header", spec));

  const responses: JsonObject = {};
  for (const [status, spec] of Object.entries(op.responses)) responses[status] = success(b, spec);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrors(name)) {
    const status = ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort((x, y) => x[0] - y[0])) {
    responses[String(status)] = errorResponse(b, codes.sort());
  }
  return {
    operationId: name,
    summary: op.summary,
    ...(op.description && { description: op.description }),
    tags: [op.tag],
    ...(params.length > 0 && { parameters: params }),
    ...(op.body && {
      requestBody: {
        required: op.body.required,
        ...(op.body.description && { description: op.body.description }),
        content: content(b, op.body.content),
      },
    }),
    responses,
  };
}

const DESCRIPTION = `The wire contract of sbx: spoken by the \`sbx\` client to any backend and served by the
embedded backend (\`sbx daemon\`) on its Unix socket (and, with a token, on TCP).
Built from the route table and the wire schemas of sbx's source; docs/protocol.md is the
prose beside it. Clients must ignore unknown fields.

Errors have the shape \`{"error": {"code", "message", "details"}}\` with a stable code (each
code's body is a schema below). Any other path answers 404 \`not_found\`; another method on
a listed path answers 405 \`method_not_allowed\` with \`Allow\`. A request whose headers (with
the URL) exceed the backend's limit answers 431 \`headers_too_large\` before any route sees it.

Event streams (\`text/event-stream\`): each event is \`id: <sequence>\`, \`event: <type>\`,
\`data: <one-line JSON>\` and a blank line; the \`${SSE_EVENTS_EXTENSION}\` extension of the media
type names the schema of each type's data. A comment line \`: ping\` comes every 15 s.`;

/** The whole document. Built once per process (it depends on nothing at run time). */
export function buildOpenApiDocument(): JsonObject {
  const b = new Builder();
  const paths: Record<string, JsonObject> = {};
  for (const name of ROUTE_NAMES) {
    const route = ROUTES[name];
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path]![route.method.toLowerCase()] = operation(b, name);
  }
  // Every error code is a component, also those no route lists (not_found, method_not_allowed).
  const codes = Object.keys(ERRORS) as ErrorCode[];
  for (const code of codes) {
    const name = errorComponentName(code);
    if (!(name in b.components)) b.components[name] = b.schema(errorSchema(code, ERRORS[code]));
  }
  const sortedComponents: JsonObject = {};
  for (const k of Object.keys(b.components).sort()) sortedComponents[k] = b.components[k]!;
  return {
    openapi: "3.1.0",
    info: {
      title: "sbx /api/v1",
      version: VERSION,
      summary: `Protocol ${PROTOCOL_VERSION}: sandboxes, executions with durable receipts, supervised processes and jobs.`,
      description: DESCRIPTION,
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [
      { url: "http://sbx", description: "The embedded backend: curl --unix-socket <daemon.sock> http://sbx/…" },
    ],
    security: [{}, { token: [] }, { apiKey: [] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: sortedComponents,
      parameters: {
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description:
            "Makes the mutation safe to send again: the same key and body answer the first response again (Idempotent-Replayed: true).",
          schema: { type: "string", pattern: IDEMPOTENCY_KEY_PATTERN },
        },
      },
      securitySchemes: {
        token: { type: "http", scheme: "bearer", description: "The daemon's TCP token (none on its Unix socket)." },
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "Authorization",
          description: "`ApiKey <key>`: a remote backend's key.",
        },
      },
    },
  };
}

let cached: string | null = null;

/** The document as served (and as docs/openapi.json holds it): two-space JSON with a final newline. */
export function openApiText(): string {
  cached ??= `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
  return cached;
}
