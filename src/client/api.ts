// Typed calls of /api/v1 for reads and administration. Mutations that need a
// receipt (execute) go through src/cli/dispatch.ts, which sends them exactly once.

import { BackendError, exitCodeOfAnswer, SbxError } from "../common/errors.js";
import { ExitCodes } from "../common/exit-codes.js";
import { CERTIFICATE_HINT, type HttpObserved, isCertificateRefused } from "./observed.js";
import { routePath } from "../protocol/routes.js";
import {
  ErrorCodes,
  type ExecutionList,
  type ExecutionRecord,
  type Health,
  type Sandbox,
  type SandboxCreateRequest,
  type SandboxDetails,
  type SandboxStats,
  type EgressReport,
  type SandboxList,
  type SandboxUpdateRequest,
  type SandboxStopped,
  type StorageReport,
  type Volume,
  type VolumeList,
} from "../protocol/types.js";
import type { Requests, SendRequest } from "./http.js";

export interface CancelAnswer {
  execution_id: string;
  cancel: "requested" | "already_terminal";
  cancellable: string;
}

export interface EventPage {
  events: Array<{ sequence: number; type: string; at: string; data: Record<string, unknown> }>;
  has_more: boolean;
  next_cursor: string | number | null;
}

/** Turns an observation that is not a 2xx into a BackendError. */
export function answerOrThrow(
  obs: HttpObserved,
  what: string,
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE" = "GET",
): { status: number; body: unknown } {
  if (obs.kind === "deadline" && obs.interrupted) {
    throw new SbxError("interrupted", `${what}: interrupted`, { exitCode: ExitCodes.cancelled });
  }
  const mutation = method !== "GET";
  if (obs.kind === "deadline" || (obs.kind === "transport" && obs.sent)) {
    const why =
      obs.kind === "deadline" ? "no answer before the deadline" : `the connection failed (${obs.code}: ${obs.message})`;
    // A mutation that may have reached the backend is in doubt; a failed read just failed.
    throw new BackendError(
      obs.kind === "deadline" ? "deadline" : obs.code,
      mutation ? `${what}: ${why}; it may have taken effect` : `${what}: ${why}`,
      null,
      mutation ? "look before repeating it (e.g. sbx process show, sbx logs)" : undefined,
      // A read that failed changed nothing: reading again is safe.
      mutation ? ExitCodes.inDoubt : ExitCodes.notStarted,
    );
  }
  if (obs.kind === "transport") {
    throw new BackendError(
      obs.code,
      `${what}: cannot reach the backend (${obs.code}: ${obs.message}); nothing was sent`,
      null,
      isCertificateRefused(obs.code) ? CERTIFICATE_HINT : undefined,
    );
  }
  let body: unknown;
  try {
    body = obs.body === "" ? null : JSON.parse(obs.body);
  } catch {
    throw new BackendError(
      "bad_answer",
      `${what}: HTTP ${obs.status} with a body that is not JSON`,
      obs.status,
      undefined,
      exitCodeOfAnswer(obs.status, mutation),
    );
  }
  if (obs.status < 200 || obs.status >= 300) {
    const e = (body as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
    const code = e?.code ?? `http_${obs.status}`;
    const hint =
      code === ErrorCodes.sandboxNotFound
        ? "see `sbx sandbox list`; `sbx sandbox create NAME` makes one"
        : code === ErrorCodes.staleHandle
          ? staleHandleHint(e?.details)
          : undefined;
    throw new BackendError(
      code,
      `${what}: ${e?.message || `HTTP ${obs.status}`}`,
      obs.status,
      hint,
      exitCodeOfAnswer(obs.status, mutation),
    );
  }
  return { status: obs.status, body };
}

/**
 * How to act on a stale handle (docs/protocol.md, "Ownership fences"): what is current
 * now, to look at first, and how to name it.
 */
function staleHandleHint(details: unknown): string {
  const d = (typeof details === "object" && details !== null ? details : {}) as Record<string, unknown>;
  const boot = typeof d.current_boot === "string" ? d.current_boot : null;
  if (typeof d.process_id === "string" && typeof d.current_run === "number") {
    const pid = d.process_id;
    return `run ${d.current_run}${boot === null ? "" : ` of ${boot}`} is current now; look at it first (sbx process show ${pid}), then name that run to act on it: ${pid}@${d.current_run}`;
  }
  if (typeof d.execution_id === "string") {
    return `${d.execution_id} on the backend ran in ${boot ?? "an earlier boot"}, not in the boot this handle was given in; look before acting (sbx logs ${d.execution_id})`;
  }
  return "what it was meant for is no longer current; look before acting";
}

export class Api {
  constructor(readonly http: Requests) {}

  private async call<T>(what: string, req: SendRequest): Promise<T> {
    return answerOrThrow(await this.http.send({ deadlineMs: 30_000, ...req }), what, req.method).body as T;
  }

  health(deadlineMs = 3_000): Promise<Health> {
    return this.call("health", { method: "GET", path: routePath("health", {}), deadlineMs });
  }

  /** What the embedded backend keeps and its size (sbx; docs/protocol.md). */
  storage(): Promise<StorageReport> {
    return this.call("storage", { method: "GET", path: routePath("storage", {}), deadlineMs: 10_000 });
  }

  createSandbox(req: SandboxCreateRequest, idempotencyKey: string): Promise<Sandbox> {
    return this.call("create sandbox", {
      method: "POST",
      path: routePath("sandbox.create", {}),
      body: Buffer.from(JSON.stringify(req)),
      idempotencyKey,
    });
  }

  /** Every sandbox, or (with a selector, `k=v,k2,k3!=v`) those whose labels satisfy all of it. */
  async listSandboxes(selector?: string): Promise<Sandbox[]> {
    const path = routePath("sandboxes.list", {}, { selector: selector || undefined });
    return (await this.call<SandboxList>("list sandboxes", { method: "GET", path })).sandboxes;
  }

  /** The sandbox; the embedded backend adds its driver and host workspace (and its size with `usage`). */
  getSandbox(id: string, opts: { usage?: boolean } = {}): Promise<Sandbox & Partial<SandboxDetails>> {
    return this.call(`sandbox ${id}`, {
      method: "GET",
      path: routePath("sandbox.get", { id }, { usage: opts.usage }),
      deadlineMs: 120_000,
    });
  }

  /** A sandbox's recent connections through its egress proxy (sbx; docs/network.md). */
  sandboxEgress(id: string, since = 0): Promise<EgressReport> {
    const query = since > 0 ? { since } : {};
    return this.call(`egress of sandbox ${id}`, { method: "GET", path: routePath("sandbox.egress", { id }, query) });
  }

  /** What a sandbox uses now (sbx; docs/operations.md, "Sandbox stats"): one sample. */
  sandboxStats(id: string): Promise<SandboxStats> {
    return this.call(`stats of sandbox ${id}`, { method: "GET", path: routePath("sandbox.stats", { id }) });
  }

  /** Changes a sandbox's limits and labels (sbx); answers the sandbox as `sandbox show` reads it. */
  updateSandbox(
    id: string,
    req: SandboxUpdateRequest,
    idempotencyKey: string,
  ): Promise<Sandbox & Partial<SandboxDetails>> {
    return this.call(`update sandbox ${id}`, {
      method: "PATCH",
      path: routePath("sandbox.update", { id }),
      body: Buffer.from(JSON.stringify(req)),
      idempotencyKey,
    });
  }

  /** Creates a named volume (docs/operations.md, "Named volumes"). */
  createVolume(name: string, idempotencyKey: string, sizeBytes: number | null = null): Promise<Volume> {
    return this.call(`create volume ${name}`, {
      method: "POST",
      path: routePath("volume.create", {}),
      body: Buffer.from(JSON.stringify(sizeBytes === null ? { name } : { name, size_bytes: sizeBytes })),
      idempotencyKey,
    });
  }

  async listVolumes(): Promise<Volume[]> {
    return (await this.call<VolumeList>("list volumes", { method: "GET", path: routePath("volumes.list", {}) }))
      .volumes;
  }

  getVolume(name: string): Promise<Volume> {
    return this.call(`volume ${name}`, { method: "GET", path: routePath("volume.get", { volume: name }) });
  }

  /** Removes a volume and its files; refused while a sandbox mounts it. */
  removeVolume(name: string, idempotencyKey: string): Promise<Volume> {
    return this.call(`remove volume ${name}`, {
      method: "DELETE",
      path: routePath("volume.delete", { volume: name }),
      idempotencyKey,
    });
  }

  /**
   * Removes a sandbox and its workspace; with `force`, what runs in it is ended first.
   * `signal` replaces the client's interrupt (sbx run removes its sandbox after a Ctrl-C).
   */
  async removeSandbox(id: string, opts: { force?: boolean; signal?: AbortSignal } = {}): Promise<void> {
    await this.call(`remove sandbox ${id}`, {
      method: "DELETE",
      path: routePath("sandbox.delete", { id }, { force: opts.force }),
      deadlineMs: 120_000,
      ...(opts.signal === undefined ? {} : { signal: opts.signal }),
    });
  }

  /** Ends a sandbox's environment and everything in it (sent once, with a key); says what was ended. */
  stopSandbox(id: string, idempotencyKey: string): Promise<SandboxStopped> {
    return this.call(`stop sandbox ${id}`, {
      method: "POST",
      path: routePath("sandbox.stop", { id }),
      idempotencyKey,
      deadlineMs: 120_000,
    });
  }

  /** Starts a sandbox's environment; answers the sandbox once it runs. */
  startSandbox(id: string, idempotencyKey: string): Promise<Sandbox & Partial<SandboxDetails>> {
    return this.call(`start sandbox ${id}`, {
      method: "POST",
      path: routePath("sandbox.start", { id }),
      idempotencyKey,
      deadlineMs: 120_000,
    });
  }

  /** Pauses a sandbox (its processes frozen); answers the sandbox once they all stopped. */
  pauseSandbox(id: string, idempotencyKey: string): Promise<Sandbox & Partial<SandboxDetails>> {
    return this.call(`pause sandbox ${id}`, {
      method: "POST",
      path: routePath("sandbox.pause", { id }),
      idempotencyKey,
      deadlineMs: 60_000,
    });
  }

  /** Resumes a paused sandbox; answers the sandbox. */
  resumeSandbox(id: string, idempotencyKey: string): Promise<Sandbox & Partial<SandboxDetails>> {
    return this.call(`resume sandbox ${id}`, {
      method: "POST",
      path: routePath("sandbox.resume", { id }),
      idempotencyKey,
      deadlineMs: 60_000,
    });
  }

  getExecution(sandbox: string, executionId: string, waitMs = 0): Promise<ExecutionRecord> {
    return this.call(`execution ${executionId}`, {
      method: "GET",
      path: executionPath(sandbox, executionId, waitMs),
      deadlineMs: waitMs + 15_000,
    });
  }

  /** Asks for a cancel (sent once, with a key). The acknowledgement is not proof of termination. */
  cancelExecution(
    sandbox: string,
    executionId: string,
    reason: string | undefined,
    idempotencyKey: string,
    /** The backend boot of the handle (refused with stale_handle unless the execution ran in it). */
    boot?: string,
  ): Promise<CancelAnswer> {
    return this.call(`cancel ${executionId}`, {
      method: "POST",
      path: routePath("executions.cancel", { id: sandbox, eid: executionId }, { boot }),
      body: Buffer.from(JSON.stringify(reason === undefined ? {} : { reason })),
      idempotencyKey,
    });
  }

  listEvents(sandbox: string, executionId: string, afterSequence: number, limit: number): Promise<EventPage> {
    return this.call(`events of ${executionId}`, {
      method: "GET",
      path: routePath("executions.events", { id: sandbox, eid: executionId }, { after_sequence: afterSequence, limit }),
    });
  }

  /** Reads an execution record (optionally waiting server-side); the raw observation, for classification. */
  observeExecution(sandbox: string, executionId: string, waitMs: number, deadlineMs: number): Promise<HttpObserved> {
    return this.http.send({ method: "GET", path: executionPath(sandbox, executionId, waitMs), deadlineMs });
  }

  /** Finds the execution an idempotency key created: the raw observation of the list answer. */
  /** Ids of the sandbox's executions that start with `prefix`, up to 100 (newest first). */
  async executionIdsStartingWith(sandbox: string, prefix: string): Promise<string[]> {
    const page = await this.call<ExecutionList>(`executions starting ${prefix}`, {
      method: "GET",
      path: routePath("executions.list", { id: sandbox }, { id_prefix: prefix, limit: 100 }),
    });
    return page.executions.map((e) => e.execution_id);
  }

  findExecutionByKey(sandbox: string, key: string, deadlineMs: number): Promise<HttpObserved> {
    return this.http.send({
      method: "GET",
      path: routePath("executions.list", { id: sandbox }, { idempotency_key: key, limit: 1 }),
      deadlineMs,
    });
  }
}

/** An execution's record, waiting server-side up to `waitMs` for its end when that is more than 0. */
function executionPath(sandbox: string, executionId: string, waitMs: number): string {
  return routePath("executions.get", { id: sandbox, eid: executionId }, { wait_ms: waitMs > 0 ? waitMs : undefined });
}
