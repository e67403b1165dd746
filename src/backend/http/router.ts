// Matching a request to its route (the table is src/protocol/routes.ts) and the
// handler attached to each route.

import { API_PREFIX, ErrorCodes } from "../../protocol/types.js";
import { ROUTE_NAMES, ROUTES, type RouteName } from "../../protocol/routes.js";
import type { Handler } from "./context.js";
import {
  cancelExecution,
  execute,
  getExecution,
  listExecutionEvents,
  listExecutions,
  readExecutionOutput,
  streamExecution,
} from "./handlers/executions.js";
import { getFile, getVolumeFile, putFile, putVolumeFile } from "./handlers/files.js";
import { health, openapi, storage } from "./handlers/health.js";
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
import {
  createSandbox,
  deleteSandbox,
  getSandbox,
  sandboxStatsReply,
  getSandboxEgress,
  listSandboxes,
  startSandbox,
  pauseSandbox,
  resumeSandbox,
  stopSandbox,
  updateSandbox,
} from "./handlers/sandboxes.js";
import {
  executionTerminalTarget,
  processTerminalTarget,
  type TerminalTarget,
  terminalWithoutUpgrade,
  type UpgradeContext,
} from "./handlers/terminals.js";
import { OPERATIONS } from "../../protocol/openapi/operations.js";
import { ApiError } from "./replies.js";
import { createVolume, deleteVolume, getVolume, listVolumes } from "./handlers/volumes.js";

/** The port-forward route, a WebSocket of its own kind (docs/protocol.md, "Port forwarding"). */
export const FORWARD_ROUTE: RouteName = "sandbox.portforward";

/** The terminal routes served as a WebSocket (docs/protocol.md, "Terminals"), and what each attaches to. */
export const UPGRADES: Partial<Record<RouteName, (ctx: UpgradeContext) => TerminalTarget>> = {
  "executions.terminal": executionTerminalTarget,
  "process.terminal": processTerminalTarget,
};

/** The handler of every route of the table (src/protocol/routes.ts): the type checker keeps it whole. */
const HANDLERS: Record<RouteName, Handler> = {
  health,
  openapi,
  storage,
  "sandbox.create": createSandbox,
  "sandboxes.list": listSandboxes,
  "sandbox.get": getSandbox,
  "sandbox.stats": sandboxStatsReply,
  "sandbox.egress": getSandboxEgress,
  "sandbox.update": updateSandbox,
  "sandbox.delete": deleteSandbox,
  "sandbox.stop": stopSandbox,
  "sandbox.start": startSandbox,
  "sandbox.pause": pauseSandbox,
  "volume.create": createVolume,
  "volumes.list": listVolumes,
  "volume.get": getVolume,
  "volume.delete": deleteVolume,
  "volume.files.put": putVolumeFile,
  "volume.files.get": getVolumeFile,
  "sandbox.resume": resumeSandbox,
  "sandbox.portforward": terminalWithoutUpgrade,
  execute,
  "executions.list": listExecutions,
  "executions.get": getExecution,
  "executions.stream": streamExecution,
  "executions.events": listExecutionEvents,
  "executions.output": readExecutionOutput,
  "executions.cancel": cancelExecution,
  "executions.terminal": terminalWithoutUpgrade,
  "process.start": startProcess,
  "processes.list": listProcesses,
  "process.get": getProcess,
  "process.stop": stopProcess,
  "process.result": getProcessResult,
  "process.logs": getProcessLogs,
  "process.stdin": writeProcessStdin,
  "process.signal": signalProcess,
  "process.terminal": terminalWithoutUpgrade,
  "files.put": putFile,
  "files.get": getFile,
  "jobs.submit": submitJobs,
  "jobs.list": listJobs,
  "jobs.get": getJob,
  "jobs.cancel": cancelJob,
};

interface RouteDef {
  name: RouteName;
  method: string;
  /** Segments after /api/v1; `:name` binds a parameter. */
  segments: string[];
  handler: Handler;
}

/** The table in its order (an earlier route wins), each with its handler. */
const ROUTE_DEFS: readonly RouteDef[] = ROUTE_NAMES.map((name) => ({
  name,
  method: ROUTES[name].method,
  segments: ROUTES[name].path.split("/"),
  handler: HANDLERS[name],
}));

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
    for (const def of ROUTE_DEFS) {
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

/**
 * Refuses query parameters the route does not take (as unknown body fields are): a
 * typo never silently becomes a default. 400 invalid_request naming every one, and
 * what the route takes (its query in the OpenAPI document, protocol/openapi/operations.ts).
 */
export function refuseUnknownQuery(name: RouteName, query: URLSearchParams): void {
  const known = Object.keys(OPERATIONS[name].query ?? {});
  const unknown = [...new Set(query.keys())].filter((k) => !known.includes(k));
  if (unknown.length === 0) return;
  const names = unknown.map((k) => JSON.stringify(k)).join(", ");
  const takes = known.length === 0 ? "none" : known.join(", ");
  throw new ApiError(
    400,
    ErrorCodes.invalidRequest,
    `unknown query parameter${unknown.length > 1 ? "s" : ""} ${names} (${name} takes: ${takes})`,
    { field: unknown[0]!, unknown },
  );
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
