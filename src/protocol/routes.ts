// Every route of /api/v1, once (docs/protocol.md, "Routes"): its name (the one the
// fault grammar uses), method and path. The backend's router attaches a handler to
// each name (src/backend/http/router.ts); the client builds its paths with routePath.

import { API_PREFIX } from "./types.js";

interface RouteSpec {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Segments after /api/v1; `:name` is a parameter (`id` a sandbox id or name). */
  path: string;
  /** Changes state, so honours Idempotency-Key (docs/protocol.md, "Idempotency"). */
  mutation: boolean;
}

/** In the order a request is matched: an earlier route wins. */
export const ROUTES = {
  health: { method: "GET", path: "health", mutation: false },
  openapi: { method: "GET", path: "openapi.json", mutation: false },
  storage: { method: "GET", path: "storage", mutation: false },
  "sandbox.create": { method: "POST", path: "sandbox/create", mutation: true },
  "sandboxes.list": { method: "GET", path: "sandboxes", mutation: false },
  "sandbox.get": { method: "GET", path: "sandbox/:id", mutation: false },
  "sandbox.update": { method: "PATCH", path: "sandbox/:id", mutation: true },
  "sandbox.delete": { method: "DELETE", path: "sandbox/:id", mutation: true },
  "sandbox.stop": { method: "POST", path: "sandbox/:id/stop", mutation: true },
  "sandbox.start": { method: "POST", path: "sandbox/:id/start", mutation: true },
  "sandbox.egress": { method: "GET", path: "sandbox/:id/egress", mutation: false },
  "sandbox.pause": { method: "POST", path: "sandbox/:id/pause", mutation: true },
  "sandbox.resume": { method: "POST", path: "sandbox/:id/resume", mutation: true },
  "sandbox.stats": { method: "GET", path: "sandbox/:id/stats", mutation: false },
  "volume.create": { method: "POST", path: "volume/create", mutation: true },
  "volumes.list": { method: "GET", path: "volumes", mutation: false },
  "volume.get": { method: "GET", path: "volume/:volume", mutation: false },
  "volume.delete": { method: "DELETE", path: "volume/:volume", mutation: true },
  "volume.files.put": { method: "PUT", path: "volume/:volume/files", mutation: true },
  "volume.files.get": { method: "GET", path: "volume/:volume/files", mutation: false },
  "sandbox.portforward": { method: "GET", path: "sandbox/:id/port-forward/:port", mutation: false },
  execute: { method: "POST", path: "sandbox/:id/execute", mutation: true },
  "executions.list": { method: "GET", path: "sandbox/:id/executions", mutation: false },
  "executions.get": { method: "GET", path: "sandbox/:id/executions/:eid", mutation: false },
  "executions.stream": { method: "GET", path: "sandbox/:id/executions/:eid/stream", mutation: false },
  "executions.events": { method: "GET", path: "sandbox/:id/executions/:eid/events", mutation: false },
  "executions.output": { method: "GET", path: "sandbox/:id/executions/:eid/output", mutation: false },
  "executions.cancel": { method: "POST", path: "sandbox/:id/executions/:eid/cancel", mutation: true },
  "executions.terminal": { method: "GET", path: "sandbox/:id/executions/:eid/terminal", mutation: false },
  "process.start": { method: "POST", path: "sandbox/:id/processes", mutation: true },
  "processes.list": { method: "GET", path: "sandbox/:id/processes", mutation: false },
  "process.get": { method: "GET", path: "sandbox/:id/processes/:pid", mutation: false },
  "process.stop": { method: "DELETE", path: "sandbox/:id/processes/:pid", mutation: true },
  "process.result": { method: "GET", path: "sandbox/:id/processes/:pid/result", mutation: false },
  "process.logs": { method: "GET", path: "sandbox/:id/processes/:pid/logs", mutation: false },
  "process.stdin": { method: "POST", path: "sandbox/:id/processes/:pid/stdin", mutation: true },
  "process.signal": { method: "POST", path: "sandbox/:id/processes/:pid/signal", mutation: true },
  "process.terminal": { method: "GET", path: "sandbox/:id/processes/:pid/terminal", mutation: false },
  "files.put": { method: "PUT", path: "sandbox/:id/files", mutation: true },
  "files.get": { method: "GET", path: "sandbox/:id/files", mutation: false },
  "jobs.submit": { method: "POST", path: "sandbox/:id/jobs", mutation: true },
  "jobs.list": { method: "GET", path: "sandbox/:id/jobs", mutation: false },
  "jobs.get": { method: "GET", path: "sandbox/:id/jobs/:jid", mutation: false },
  "jobs.cancel": { method: "POST", path: "sandbox/:id/jobs/:jid/cancel", mutation: true },
} as const satisfies Record<string, RouteSpec>;

export type RouteName = keyof typeof ROUTES;

/** Every route's name, in the table's order. */
export const ROUTE_NAMES = Object.keys(ROUTES) as RouteName[];

type SegmentParam<S extends string> = S extends `:${infer Name}` ? Name : never;
type PathParams<P extends string> = P extends `${infer Head}/${infer Rest}`
  ? SegmentParam<Head> | PathParams<Rest>
  : SegmentParam<P>;

/** The parameters a route's path takes: `{id, eid}` for `sandbox/:id/executions/:eid`. */
export type RouteParams<N extends RouteName> = Record<PathParams<(typeof ROUTES)[N]["path"]>, string>;

/** Query parameters; one that is undefined or false is left out (a flag not set is not sent). */
export type QueryParams = Record<string, string | number | boolean | undefined>;

/**
 * The path of a route with its parameters filled in (each encoded as one segment),
 * and the query string when one is given: `routePath("process.logs", {id, pid},
 * {stream: "stdout", offset: 0})`.
 */
export function routePath<N extends RouteName>(name: N, params: RouteParams<N>, query: QueryParams = {}): string {
  const values = params as Record<string, string>;
  const segments = ROUTES[name].path.split("/").map((s) => {
    if (!s.startsWith(":")) return s;
    const value = values[s.slice(1)];
    if (value === undefined) throw new Error(`route ${name} needs its ${s.slice(1)} parameter`);
    return encodeURIComponent(value);
  });
  return `${API_PREFIX}/${segments.join("/")}${queryString(query)}`;
}

function queryString(query: QueryParams): string {
  const pairs = Object.entries(query).flatMap(([k, v]) =>
    v === undefined || v === false ? [] : [`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`],
  );
  return pairs.length === 0 ? "" : `?${pairs.join("&")}`;
}
