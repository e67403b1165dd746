// The route table of /api/v1 and matching a request to it.

import { API_PREFIX, ErrorCodes } from "../protocol/types.js";
import type { Handler, RouteName } from "./context.js";
import {
  cancelExecution,
  execute,
  getExecution,
  listExecutionEvents,
  listExecutions,
  readExecutionOutput,
  streamExecution,
} from "./handlers/executions.js";
import { getFile, putFile } from "./handlers/files.js";
import { health, storage } from "./handlers/health.js";
import { cancelJob, getJob, listJobs, submitJobs } from "./handlers/jobs.js";
import {
  getProcess,
  getProcessLogs,
  getProcessResult,
  listProcesses,
  signalProcess,
  startProcess,
  stopProcess,
  writeProcessStdin,
} from "./handlers/processes.js";
import { createSandbox, deleteSandbox, getSandbox, listSandboxes } from "./handlers/sandboxes.js";
import { ApiError } from "./http.js";

interface RouteDef {
  name: RouteName;
  method: string;
  /** Segments after /api/v1; `:name` binds a parameter. Earlier routes win. */
  segments: string[];
  handler: Handler;
}

function route(name: RouteName, method: string, pattern: string, handler: Handler): RouteDef {
  return { name, method, segments: pattern.split("/"), handler };
}

const ROUTES: readonly RouteDef[] = [
  route("health", "GET", "health", health),
  route("storage", "GET", "storage", storage),
  route("sandbox.create", "POST", "sandbox/create", createSandbox),
  route("sandboxes.list", "GET", "sandboxes", listSandboxes),
  route("sandbox.get", "GET", "sandbox/:id", getSandbox),
  route("sandbox.delete", "DELETE", "sandbox/:id", deleteSandbox),
  route("execute", "POST", "sandbox/:id/execute", execute),
  route("executions.list", "GET", "sandbox/:id/executions", listExecutions),
  route("executions.get", "GET", "sandbox/:id/executions/:eid", getExecution),
  route("executions.stream", "GET", "sandbox/:id/executions/:eid/stream", streamExecution),
  route("executions.events", "GET", "sandbox/:id/executions/:eid/events", listExecutionEvents),
  route("executions.output", "GET", "sandbox/:id/executions/:eid/output", readExecutionOutput),
  route("executions.cancel", "POST", "sandbox/:id/executions/:eid/cancel", cancelExecution),
  route("process.start", "POST", "sandbox/:id/processes", startProcess),
  route("processes.list", "GET", "sandbox/:id/processes", listProcesses),
  route("process.get", "GET", "sandbox/:id/processes/:pid", getProcess),
  route("process.stop", "DELETE", "sandbox/:id/processes/:pid", stopProcess),
  route("process.result", "GET", "sandbox/:id/processes/:pid/result", getProcessResult),
  route("process.logs", "GET", "sandbox/:id/processes/:pid/logs", getProcessLogs),
  route("process.stdin", "POST", "sandbox/:id/processes/:pid/stdin", writeProcessStdin),
  route("process.signal", "POST", "sandbox/:id/processes/:pid/signal", signalProcess),
  route("files.put", "PUT", "sandbox/:id/files", putFile),
  route("files.get", "GET", "sandbox/:id/files", getFile),
  route("jobs.submit", "POST", "sandbox/:id/jobs", submitJobs),
  route("jobs.list", "GET", "sandbox/:id/jobs", listJobs),
  route("jobs.get", "GET", "sandbox/:id/jobs/:jid", getJob),
  route("jobs.cancel", "POST", "sandbox/:id/jobs/:jid/cancel", cancelJob),
];

/** Every route as served: name, method and path pattern (`:name` for a parameter); docs/protocol.md lists them. */
export function routeTable(): Array<{ name: RouteName; method: string; pattern: string }> {
  return ROUTES.map((r) => ({ name: r.name, method: r.method, pattern: `${API_PREFIX}/${r.segments.join("/")}` }));
}

export interface RouteMatch {
  name: RouteName;
  handler: Handler;
  params: Record<string, string>;
}

/** Finds the route of a request. Throws 404 not_found, or 405 when only the method is wrong. */
export function matchRoute(method: string, pathname: string): RouteMatch {
  const segments = splitPath(pathname);
  const allowed: string[] = [];
  if (segments) {
    for (const def of ROUTES) {
      const params = matchSegments(def.segments, segments);
      if (!params) continue;
      if (def.method === method) return { name: def.name, handler: def.handler, params };
      allowed.push(def.method);
    }
  }
  if (allowed.length > 0) {
    throw new ApiError(
      405,
      ErrorCodes.methodNotAllowed,
      `${method} is not allowed on ${pathname}`,
      { allowed },
      { Allow: allowed.join(", ") },
    );
  }
  throw new ApiError(404, ErrorCodes.notFound, `no route ${method} ${pathname}`);
}

function splitPath(pathname: string): string[] | null {
  if (!pathname.startsWith(`${API_PREFIX}/`)) return null;
  try {
    return pathname
      .slice(API_PREFIX.length + 1)
      .split("/")
      .map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
}

function matchSegments(pattern: string[], segments: string[]): Record<string, string> | null {
  if (pattern.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (const [i, p] of pattern.entries()) {
    const s = segments[i]!;
    if (p.startsWith(":")) {
      if (s === "") return null;
      params[p.slice(1)] = s;
    } else if (p !== s) {
      return null;
    }
  }
  return params;
}
