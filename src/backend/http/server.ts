// The embedded backend's entry point: takes what it owns for its life (the data
// directory's lock and its Unix socket: ownership.ts), opens backend.db (recovering
// what an earlier run left), listens on the socket and optionally on TCP with a
// token, and serves /api/v1 (routes in router.ts, handlers in handlers/).

import { createHash, timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type net from "node:net";
import type { Duplex } from "node:stream";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DAEMON_TOKEN_MIN_LENGTH, ErrorCodes, REQUEST_BODY_MAX_BYTES, WARNING_HEADER } from "../../protocol/types.js";
import { isValidIdempotencyKey } from "../../protocol/validate.js";
import { ROUTES } from "../../protocol/routes.js";
import { type RequestContext, STREAMED_BODY_ROUTES, type Services } from "./context.js";
import { BackendStore } from "../store/db.js";
import { daemonHost } from "../drivers/driver.js";
import { DriverSet, type DriverSetOptions } from "../drivers/drivers.js";
import { DaemonStartError } from "../errors.js";
import { EventLog } from "../executions/events.js";
import { ExecutionManager } from "../executions/manager.js";
import { applyAnswerFault, FaultInjector, NO_FAULT, parseFaultSpec, preemptingReply } from "./faults.js";
import {
  ApiError,
  answerClientError,
  invalidRequest,
  type Reply,
  readBody,
  refusalAnswer,
  writeReply,
} from "./replies.js";
import { callerFor, DEFAULT_KEY_RETENTION_MS, IdempotencyKeys } from "./idempotency.js";
import { JobManager } from "../jobs/manager.js";
import { bindUnixSocket, lockDataDir, type OwnedSocket, preparePrivateDir } from "./ownership.js";
import { DEFAULT_LOG_KEEP_BYTES, DEFAULT_LOG_SEGMENT_BYTES } from "../processes/logs.js";
import { ProcessSupervisor } from "../processes/supervisor.js";
import { Refusal } from "../refusal.js";
import { DEFAULT_RETAIN_BYTES, DEFAULT_RETAIN_MS, Retention } from "../store/retention.js";
import { LiveRuns } from "../runs/live-runs.js";
import { DEFAULT_KILL_GRACE_MS, ExecutionRunner } from "../executions/runner.js";
import { matchRoute } from "./router.js";
import { SandboxRegistry } from "../sandboxes/registry.js";
import { DEFAULT_SSE_PING_MS } from "./sse.js";
import { WireRecorder, type WireTap } from "./wire-record.js";

export interface BackendOptions {
  /** Holds backend.db and the sandboxes' workspaces. Created 0700 if missing. */
  dataDir: string;
  /** Unix socket to listen on (mode 0600, its directory 0700). */
  socketPath?: string;
  /** TCP listener; requires `token`. Port 0 picks a free port (see BackendHandle.port). */
  listen?: { host: string; port: number };
  token?: string;
  /** Fault spec, see FAULT_SPEC_HELP. */
  faults?: string;
  /** Seed for probabilistic fault rules (`p=`), for repeatable runs. */
  faultSeed?: number;
  /** Calls onIdle after this long with no request and nothing running. */
  idleExitMs?: number;
  onIdle?: () => void;
  /** How long Idempotency-Keys are kept. Default 7 days. */
  keyRetentionMs?: number;
  /** One line per request (method, path, status, ms) and lifecycle notes. Never headers. */
  log?: (line: string) => void;
  /** Between SIGTERM and SIGKILL to a process group. Default 5 s. */
  killGraceMs?: number;
  /** When a record kept with record_pending (fault injection) is published. Default 3 s. */
  recordPendingPublishMs?: number;
  /** Largest request body accepted. Default 16 MiB. */
  maxBodyBytes?: number;
  /** Size at which a supervised process's log file (per stream) is rotated. Default 8 MiB. */
  processLogSegmentBytes?: number;
  /** Bytes of log kept per stream of a supervised process (oldest files deleted beyond). Default 64 MiB. */
  processLogKeepBytes?: number;
  /** How often buffered execution events are committed (one transaction per batch). Default 25 ms. */
  eventFlushMs?: number;
  /** Events kept per execution log (at least 2); older ones become a `reset` snapshot. Null keeps all. Default 50,000. */
  eventRetention?: number | null;
  /** Output bytes put into events per execution; past it, `gap` events. Default 5 MiB. */
  eventOutputBudget?: number;
  /**
   * Bytes of each stream of an execution kept in its output file (GET …/output);
   * past it the file stops growing, `_bytes` keep counting and `_truncated` is true.
   * Default 256 MiB.
   */
  executionOutputMaxBytes?: number;
  /** Between `: ping` comments on event streams. Default 15 s. */
  ssePingMs?: number;
  /**
   * The sandbox drivers (e.g. another bwrap program); probed once at start. Their
   * host (the daemon's uid, user name and PATH) is this process's unless given.
   */
  drivers?: Partial<DriverSetOptions>;
  /** Finished executions and exited processes older than this go (never sooner than keyRetentionMs). Default 30 days. */
  retainMs?: number;
  /** Past this total (database, execution output, process logs), the oldest finished outputs go first. Default 5 GiB. */
  retainBytes?: number;
  /** Between retention sweeps. Default 10 minutes. */
  retentionSweepMs?: number;
  /**
   * The backend's clock (default Date.now): the times records say, runs' starts and
   * ends, key and retention windows, restart back-off and process deadlines. Timers
   * still wait real time; a test moves this clock instead of sleeping.
   */
  now?: () => number;
  /** Jobs running at once per sandbox; the rest wait as `queued`. Default 4. */
  jobConcurrency?: number;
  /** Output bytes kept per job (the first half and the last half; the middle is omitted). Default 8 MiB. */
  jobOutputBudgetBytes?: number;
  /**
   * Records every exchange into a file of this directory (wire-record.ts), for the
   * validating run that holds the traffic to the OpenAPI document. A test tool.
   */
  wireRecord?: string;
}

export interface CloseOptions {
  /**
   * Test hook: stop serving and close the database WITHOUT ending running process
   * groups or recording their ends, as a crash would. Restart recovery then finds them.
   */
  simulateCrash?: boolean;
}

export interface BackendHandle {
  socketPath?: string;
  port?: number;
  /** Stops accepting, ends running process groups (TERM, then KILL), marks them, removes the socket. */
  close(opts?: CloseOptions): Promise<void>;
}

export const DEFAULT_MAX_BODY_BYTES = REQUEST_BODY_MAX_BYTES;
/** After shutdown ended the executions, how long answers may take to flush. */
const CLOSE_FLUSH_MS = 2000;

type Transport = "unix" | "tcp";

export async function startBackend(opts: BackendOptions): Promise<BackendHandle> {
  if (!opts.socketPath && !opts.listen) {
    throw new DaemonStartError("no_listener", "the backend needs a Unix socket path or a TCP listen address");
  }
  if (opts.listen && !opts.token) {
    throw new DaemonStartError("token_required", "listening on TCP requires a token");
  }
  if (opts.listen && opts.token && opts.token.length < DAEMON_TOKEN_MIN_LENGTH) {
    throw new DaemonStartError(
      "token_too_weak",
      `the TCP token is ${opts.token.length} characters; at least ${DAEMON_TOKEN_MIN_LENGTH} are required`,
    );
  }
  const injector = new FaultInjector(
    parseFaultSpec(opts.faults ?? ""),
    opts.faultSeed === undefined ? {} : { seed: opts.faultSeed },
  );
  // Before anything is held: a driver whose own options are broken stops the start here.
  const drivers = new DriverSet({ ...opts.drivers, host: opts.drivers?.host ?? daemonHost() });
  fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  preparePrivateDir(opts.dataDir);
  // Ownership first, for the backend's whole life: the data directory's lock, then the
  // socket. A backend that holds neither never opens backend.db, so it cannot "recover"
  // (end) the work of the backend that owns them.
  const lock = lockDataDir(opts.dataDir);
  let unix: OwnedSocket | null = null;
  let store: BackendStore;
  try {
    if (opts.socketPath) unix = await bindUnixSocket(opts.socketPath);
    store = new BackendStore(path.join(opts.dataDir, "backend.db"));
  } catch (err) {
    if (unix) await unix.release();
    lock.release();
    throw err;
  }
  // From here to recover() nothing awaits: the socket's handler is attached before any request is read.
  const backend = new Backend(opts, store, drivers, injector, lock, unix);
  try {
    backend.executions.recover();
    backend.processes.recover();
    backend.jobs.recover();
    backend.retention.start(opts.retentionSweepMs);
    await backend.listen();
  } catch (err) {
    await backend.close();
    throw err;
  }
  return backend.handle();
}

class Backend {
  readonly executions: ExecutionManager;
  readonly processes: ProcessSupervisor;
  readonly retention: Retention;
  readonly jobs: JobManager;
  /** Every run the backend holds (executions, processes, jobs): shutdown, a simulated crash, idleness. */
  private readonly runs = new LiveRuns();
  private readonly services: Services;
  private readonly servers: Array<{ server: http.Server; transport: Transport }> = [];
  private readonly log: (line: string) => void;
  private readonly maxBodyBytes: number;
  private readonly tokenDigest: Buffer | null;
  private readonly recorder: WireRecorder | null;
  private inFlight = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | null = null;
  private port: number | undefined;

  constructor(
    private readonly opts: BackendOptions,
    private readonly store: BackendStore,
    drivers: DriverSet,
    private readonly injector: FaultInjector,
    /** Held for the backend's life: no other backend opens this data directory meanwhile. */
    private readonly lock: { release(): void },
    /** The Unix socket this backend bound (before opening the database). */
    private readonly unix: OwnedSocket | null,
  ) {
    this.log = opts.log ?? (() => {});
    this.maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.tokenDigest = opts.token ? digest(opts.token) : null;
    this.recorder = opts.wireRecord ? new WireRecorder(opts.wireRecord) : null;
    const isolation = drivers.status();
    this.log(
      isolation.bwrap.available
        ? `isolation: bwrap (${isolation.bwrap.version ?? "version unknown"})`
        : `isolation: none — ${isolation.bwrap.reason}`,
    );
    const now = opts.now ?? Date.now;
    const sandboxes = new SandboxRegistry(store, opts.dataDir, drivers, now);
    sandboxes.removeStagedUploads();
    sandboxes.assignIdentities();
    const events = new EventLog({
      store,
      now,
      outputDir: (sandboxId, executionId) => path.join(sandboxes.sandboxDir(sandboxId), "executions", executionId),
      log: this.log,
      ...(opts.eventFlushMs !== undefined && { flushMs: opts.eventFlushMs }),
      ...(opts.eventRetention !== undefined && { retainEvents: opts.eventRetention }),
      ...(opts.eventOutputBudget !== undefined && { outputBudget: opts.eventOutputBudget }),
      ...(opts.executionOutputMaxBytes !== undefined && { outputMaxBytes: opts.executionOutputMaxBytes }),
    });
    this.executions = new ExecutionManager({
      store,
      events,
      runs: this.runs,
      runner: new ExecutionRunner({
        now,
        ...(opts.killGraceMs !== undefined && { killGraceMs: opts.killGraceMs }),
      }),
      log: this.log,
      now,
      onSettled: () => this.armIdle(),
      ...(opts.recordPendingPublishMs !== undefined && { recordPendingPublishMs: opts.recordPendingPublishMs }),
    });
    this.processes = new ProcessSupervisor({
      store,
      runs: this.runs,
      sandboxes,
      logLimits: {
        segmentBytes: opts.processLogSegmentBytes ?? DEFAULT_LOG_SEGMENT_BYTES,
        keepBytes: opts.processLogKeepBytes ?? DEFAULT_LOG_KEEP_BYTES,
      },
      killGraceMs: opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
      log: this.log,
      onSettled: () => this.armIdle(),
      now,
    });
    this.jobs = new JobManager({
      store,
      runs: this.runs,
      sandboxes,
      killGraceMs: opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
      ...(opts.jobConcurrency !== undefined && { concurrency: opts.jobConcurrency }),
      ...(opts.jobOutputBudgetBytes !== undefined && { outputBudgetBytes: opts.jobOutputBudgetBytes }),
      log: this.log,
      onSettled: () => this.armIdle(),
      now,
    });
    this.retention = new Retention({
      store,
      events,
      sandboxes,
      processes: this.processes,
      retainMs: opts.retainMs ?? DEFAULT_RETAIN_MS,
      retainBytes: opts.retainBytes ?? DEFAULT_RETAIN_BYTES,
      keyRetentionMs: opts.keyRetentionMs ?? DEFAULT_KEY_RETENTION_MS,
      log: this.log,
      now,
    });
    this.services = {
      sandboxes,
      drivers,
      runs: this.runs,
      executions: this.executions,
      processes: this.processes,
      jobs: this.jobs,
      events,
      retention: this.retention,
      ssePingMs: opts.ssePingMs ?? DEFAULT_SSE_PING_MS,
      idempotency: new IdempotencyKeys(store, {
        now,
        ...(opts.keyRetentionMs !== undefined && { retentionMs: opts.keyRetentionMs }),
      }),
      now,
      startedAt: new Date(now()).toISOString(),
    };
    if (unix) this.adoptServer(unix.server, "unix");
  }

  handle(): BackendHandle {
    return {
      ...(this.opts.socketPath !== undefined && { socketPath: this.opts.socketPath }),
      ...(this.port !== undefined && { port: this.port }),
      close: (opts) => this.close(opts),
    };
  }

  async listen(): Promise<void> {
    if (this.unix) this.log(`listening on ${this.opts.socketPath}`);
    if (this.opts.listen) {
      const { host, port } = this.opts.listen;
      const server = this.createServer("tcp");
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve();
        });
      });
      this.port = (server.address() as net.AddressInfo).port;
      this.log(`listening on ${host}:${this.port} (token required)`);
    }
    if (this.injector.active) this.log("fault injection is on");
    this.armIdle();
  }

  close(opts: CloseOptions = {}): Promise<void> {
    this.closing ??= this.shutdown(opts);
    return this.closing;
  }

  private createServer(transport: Transport): http.Server {
    return this.adoptServer(http.createServer(), transport);
  }

  private adoptServer(server: http.Server, transport: Transport): http.Server {
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      void this.serve(req, res, transport);
    });
    server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
      const answer = answerClientError(err, socket);
      if (answer) this.recorder?.parserAnswer(answer);
    });
    this.servers.push({ server, transport });
    return server;
  }

  private async shutdown(opts: CloseOptions): Promise<void> {
    clearTimeout(this.idleTimer);
    this.retention.stop();
    const closed = Promise.all(
      this.servers.map(
        ({ server }) =>
          new Promise<void>((resolve) => {
            if (!server.listening) return resolve();
            server.close(() => resolve());
          }),
      ),
    );
    if (opts.simulateCrash) {
      this.runs.abandon();
      this.executions.dropAfterCrash();
      this.jobs.dropAfterCrash();
      for (const { server } of this.servers) server.closeAllConnections();
    } else {
      // Blocking requests waiting on these executions (and processes) get their answers now.
      await this.runs.shutdown();
      this.executions.closeAfterShutdown();
      this.jobs.closeAfterShutdown();
      let allClosed = false;
      void closed.then(() => {
        allClosed = true;
      });
      // Connections become idle as their answers are written; close each as it does.
      const deadline = Date.now() + CLOSE_FLUSH_MS;
      while (!allClosed && Date.now() < deadline) {
        for (const { server } of this.servers) server.closeIdleConnections();
        await sleep(25);
      }
      for (const { server } of this.servers) server.closeAllConnections();
    }
    await closed;
    this.store.close();
    // Only our own socket (the file we bound, not one that replaced it since).
    this.unix?.removeFile();
    // Last: the data directory is free for another backend only once this one let go of it.
    this.lock.release();
    this.log("backend closed");
  }

  private async serve(req: IncomingMessage, res: ServerResponse, transport: Transport): Promise<void> {
    const started = performance.now();
    const method = req.method ?? "GET";
    const tap = this.recorder?.tap(req, res);
    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    this.inFlight++;
    clearTimeout(this.idleTimer);
    let pathname = "?";
    let status: number | null;
    try {
      const url = parseTarget(req.url);
      pathname = url.pathname;
      status = writeReply(res, await this.dispatch(req, res, method, url, transport, abort.signal, tap));
    } catch (err) {
      status = writeReply(res, this.errorReply(err, method, pathname));
    } finally {
      this.inFlight--;
      this.armIdle();
    }
    const ms = Math.round(performance.now() - started);
    const outcome = status === null ? "dropped" : abort.signal.aborted ? `${status} (client gone)` : String(status);
    this.log(`${method} ${pathname} ${outcome} ${ms}ms`);
  }

  private async dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    url: URL,
    transport: Transport,
    signal: AbortSignal,
    tap: WireTap | undefined,
  ): Promise<Reply> {
    const token = transport === "tcp" ? this.authenticate(req) : null;
    const route = matchRoute(method, url.pathname);
    const body = STREAMED_BODY_ROUTES.includes(route.name) ? Buffer.alloc(0) : await readBody(req, this.maxBodyBytes);
    const isMutation = ROUTES[route.name].mutation;
    let idempotencyKey: string | null = null;
    const keyHeader = req.headers["idempotency-key"];
    if (isMutation && keyHeader !== undefined) {
      const key = Array.isArray(keyHeader) ? keyHeader.join(",") : keyHeader;
      if (!isValidIdempotencyKey(key)) {
        throw invalidRequest("Idempotency-Key", "Idempotency-Key must be 1-255 characters of A-Z a-z 0-9 _ : . -");
      }
      idempotencyKey = key;
    }

    const fault = route.name === "health" || route.name === "openapi" ? NO_FAULT : this.injector.decide(route.name);
    tap?.request(body, fault);
    const preempted = preemptingReply(fault.action);
    if (preempted) return preempted;
    const delay = () => (fault.delayMs > 0 ? sleep(fault.delayMs).then(() => {}) : Promise.resolve());
    // A mutation waits once it holds its key (see runMutation); anything else waits here.
    if (!isMutation) await delay();

    const ctx: RequestContext = {
      route: route.name,
      method,
      path: url.pathname,
      params: route.params,
      query: url.searchParams,
      body,
      request: req,
      headers: req.headers,
      caller: callerFor(token),
      overTcp: transport === "tcp",
      idempotencyKey,
      fault,
      admissionDelay: delay,
      signal,
      response: res,
      warn: (message) => {
        // One line, plain ASCII: a header value. The CLI prints it on stderr.
        if (!res.headersSent) res.setHeader(WARNING_HEADER, message.replace(/[^\x20-\x7e]/g, "?"));
      },
      services: this.services,
    };
    return applyAnswerFault(fault.action, await route.handler(ctx), fault.field);
  }

  /** TCP callers must present the token (Bearer or ApiKey). Returns it. */
  private authenticate(req: IncomingMessage): string {
    const header = req.headers.authorization ?? "";
    const match = /^(?:Bearer|ApiKey)[ \t]+(\S+)[ \t]*$/i.exec(header);
    const presented = match?.[1];
    if (presented === undefined || this.tokenDigest === null || !timingSafeEqual(digest(presented), this.tokenDigest)) {
      throw new ApiError(
        401,
        ErrorCodes.unauthorized,
        "a valid token is required: Authorization: Bearer <token> (or ApiKey <token>)",
        {},
        { "WWW-Authenticate": 'Bearer realm="sbx"' },
      );
    }
    return presented;
  }

  private errorReply(err: unknown, method: string, pathname: string): Reply {
    if (err instanceof ApiError) return err.toReply();
    if (err instanceof Refusal) return refusalAnswer(err).toReply();
    this.log(`internal error on ${method} ${pathname}: ${(err as Error)?.stack ?? String(err)}`);
    return new ApiError(500, ErrorCodes.internal, "internal error in the backend").toReply();
  }

  /** Calls onIdle after idleExitMs with no request in flight and nothing running. */
  private armIdle(): void {
    const ms = this.opts.idleExitMs;
    const onIdle = this.opts.onIdle;
    clearTimeout(this.idleTimer);
    if (!ms || !onIdle || this.closing || this.inFlight > 0 || !this.nothingRuns()) return;
    this.idleTimer = setTimeout(() => {
      if (!this.closing && this.inFlight === 0 && this.nothingRuns()) onIdle();
    }, ms);
  }

  /** No execution runs, no supervised process runs, waits to restart or is being stopped, and no job is unfinished. */
  private nothingRuns(): boolean {
    return this.runs.count() === 0 && this.jobs.unfinishedCount === 0;
  }
}

function parseTarget(target: string | undefined): URL {
  try {
    return new URL(target ?? "/", "http://sbx.invalid");
  } catch {
    throw invalidRequest("path", "invalid request target");
  }
}

/** Fixed-length digests make the comparison constant-time whatever the lengths. */
function digest(token: string): Buffer {
  return createHash("sha256").update(token).digest();
}
