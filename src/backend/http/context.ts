// What a route handler receives: the matched route, the request, the caller and
// the backend's services. Kept apart from server.ts so handlers do not import it.

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { RouteName } from "../../protocol/routes.js";
import type { DriverSet } from "../drivers/index.js";
import type { EventLog, ExecutionManager } from "../executions/index.js";
import type { FaultDecision, FaultMemory } from "./faults.js";
import type { Reply } from "./replies.js";
import type { IdempotencyKeys } from "./idempotency.js";
import type { JobManager } from "../jobs/index.js";
import type { ProcessSupervisor } from "../processes/index.js";
import type { LiveRuns } from "../runs/index.js";
import type { Retention } from "../retention/index.js";
import type { SandboxRegistry } from "../sandboxes/index.js";

/** Routes whose handler reads the request body itself, as a stream (files of any size). */
export const STREAMED_BODY_ROUTES: readonly RouteName[] = ["files.put", "volume.files.put"];

/** The domains a handler calls (never the store around them). */
export interface Services {
  sandboxes: SandboxRegistry;
  drivers: DriverSet;
  /** Every run the backend holds; ends all of a sandbox's. */
  runs: LiveRuns;
  executions: ExecutionManager;
  /** The backend's clock (BackendOptions.now): compare it with the times records say. */
  now: () => number;
  processes: ProcessSupervisor;
  jobs: JobManager;
  /** Execution event logs and full output files. */
  events: EventLog;
  idempotency: IdempotencyKeys;
  /** What is kept, and for how long (GET /api/v1/storage). */
  retention: Retention;
  /** Between `: ping` comments on an event stream. */
  ssePingMs: number;
  startedAt: string;
}

export interface RequestContext {
  route: RouteName;
  method: string;
  /** The request path as sent, without the query string. */
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The whole body, read before the handler runs; empty for STREAMED_BODY_ROUTES (read `request`). */
  body: Buffer;
  /** The request itself, for handlers that stream its body. */
  request: IncomingMessage;
  /** The request's headers (e.g. Content-Type of a stdin write). */
  headers: IncomingHttpHeaders;
  /** "local" on the Unix socket; a digest of the token on TCP. Scopes idempotency keys. */
  caller: string;
  /** Whether the request came over TCP: such answers never name a path of the backend's host. */
  overTcp: boolean;
  /** The validated Idempotency-Key header of a mutation, or null. */
  idempotencyKey: string | null;
  fault: FaultDecision;
  /** What an execute fault left, shaping later answers about that execution (faults.ts). */
  faultMemory: FaultMemory;
  /** Waits out an injected delay. Mutations call it once the idempotency key is claimed. */
  admissionDelay(): Promise<void>;
  /** Aborted when the client goes away before the answer. */
  signal: AbortSignal;
  /**
   * For answers written as a stream (SSE): the handler writes the response itself
   * and returns STREAMED (sse.ts). Every other handler answers with a Reply.
   */
  response: ServerResponse;
  /** Adds a warning to the answer (the Sbx-Warning header), for the person behind the request. */
  warn(message: string): void;
  services: Services;
}

export type Handler = (ctx: RequestContext) => Promise<Reply>;

/** What looking up a route's run needs of a request (a plain request or a WebSocket upgrade). */
export type LookupContext = Pick<RequestContext, "params" | "services" | "warn">;
