// The HTTP edge: serves /api/v1 (routes in router.ts, handlers in handlers/) on the
// Unix socket a backend bound and, with a token, on TCP: authentication, body limits,
// Idempotency-Keys, fault injection, the idle timer, and closing connections at
// shutdown. What it serves is the domains backend.ts wires (Services); only this
// folder knows statuses, headers and reply shapes.

import { createHash, timingSafeEqual } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type net from "node:net";
import type { Duplex } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCodes, WARNING_HEADER } from "../../protocol/types.js";
import { isValidIdempotencyKey } from "../../protocol/validate.js";
import { ROUTES } from "../../protocol/routes.js";
import { type RequestContext, STREAMED_BODY_ROUTES, type Services } from "./context.js";
import { applyAnswerFault, type FaultInjector, type FaultMemory, NO_FAULT, preemptingReply } from "./faults.js";
import {
  ApiError,
  answerClientError,
  invalidRequest,
  type Reply,
  readBody,
  refusalAnswer,
  writeReply,
} from "./replies.js";
import { callerFor } from "./idempotency.js";
import type { OwnedSocket } from "./ownership.js";
import { Refusal } from "../refusal.js";
import { FORWARD_ROUTE, matchRoute, refuseUnknownQuery, UPGRADES } from "./router.js";
import { WebSocketServer } from "ws";
import { TERMINAL_MESSAGE_MAX_BYTES } from "../../protocol/types.js";
import { Attachments } from "./terminal-socket.js";
import { Forwards } from "./forward-socket.js";
import { openPortForward } from "./handlers/port-forward.js";
import type { UpgradeContext } from "./handlers/terminals.js";
import { WireRecorder, type WireTap } from "./wire-record.js";
import { type Mount, mountReadsBody } from "./mount.js";

/** After shutdown ended the runs, how long answers may take to flush. */
const CLOSE_FLUSH_MS = 2000;

type Transport = "unix" | "tcp";

export interface EdgeOptions {
  services: Services;
  injector: FaultInjector;
  /** What execute faults left, for the reads that follow. */
  faultMemory: FaultMemory;
  log: (line: string) => void;
  maxBodyBytes: number;
  /** Required on TCP (Bearer or ApiKey); null on the Unix socket alone. */
  token: string | null;
  /** The Unix socket the backend bound, served from the start. */
  unix: OwnedSocket | null;
  socketPath?: string;
  listen?: { host: string; port: number };
  /** Calls onIdle after this long with no request in flight and nothing running. */
  idleExitMs?: number;
  onIdle?: () => void;
  /** Whether nothing runs (the domains say): the idle timer only runs then. */
  nothingRuns: () => boolean;
  /** Records every exchange into a file of this directory (wire-record.ts): a test tool. */
  wireRecord?: string;
  /** Handlers served at paths of their own outside /api/v1 (mount.ts): /mcp. */
  mounts?: readonly Mount[];
}

export class HttpEdge {
  private readonly servers: Array<{ server: http.Server; transport: Transport }> = [];
  private readonly tokenDigest: Buffer | null;
  private readonly log: (line: string) => void;
  private readonly recorder: WireRecorder | null;
  private inFlight = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private closing = false;
  /** WebSockets of the terminal routes (terminal-socket.ts), and who is attached to what. */
  private readonly sockets = new WebSocketServer({ noServer: true, maxPayload: TERMINAL_MESSAGE_MAX_BYTES });
  private readonly attachments = new Attachments();
  /** Connections joined to ports inside sandboxes (forward-socket.ts). */
  private readonly forwards = new Forwards();
  /** The TCP port listened on (port 0 picks one), once listening. */
  port: number | undefined;

  constructor(private readonly opts: EdgeOptions) {
    this.log = opts.log;
    this.tokenDigest = opts.token ? digest(opts.token) : null;
    this.recorder = opts.wireRecord ? new WireRecorder(opts.wireRecord) : null;
    if (opts.unix) this.adoptServer(opts.unix.server, "unix");
  }

  async listen(): Promise<void> {
    if (this.opts.unix) this.log(`listening on ${this.opts.socketPath}`);
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
    if (this.opts.injector.active) this.log("fault injection is on");
    this.armIdle();
  }

  /** Stops listening (and the idle timer); resolves once every listener is closed. */
  stopListening(): Promise<void> {
    this.closing = true;
    clearTimeout(this.idleTimer);
    this.attachments.closeAll("the backend is stopping");
    this.forwards.closeAll();
    return Promise.all(
      this.servers.map(
        ({ server }) =>
          new Promise<void>((resolve) => {
            if (!server.listening) return resolve();
            server.close(() => resolve());
          }),
      ),
    ).then(() => {});
  }

  /**
   * Once the runs ended: connections become idle as their answers are written, and
   * each is closed as it does, until every listener closed (`stopped`) or
   * CLOSE_FLUSH_MS passed; then the rest are closed.
   */
  async flushConnections(stopped: Promise<void>): Promise<void> {
    let allClosed = false;
    void stopped.then(() => {
      allClosed = true;
    });
    const deadline = performance.now() + CLOSE_FLUSH_MS;
    while (!allClosed && performance.now() < deadline) {
      for (const { server } of this.servers) server.closeIdleConnections();
      await sleep(25);
    }
    this.dropConnections();
  }

  /** Closes every connection now, answered or not (a simulated crash, the end of a flush). */
  dropConnections(): void {
    for (const { server } of this.servers) server.closeAllConnections();
    for (const ws of this.sockets.clients) ws.terminate();
  }

  private createServer(transport: Transport): http.Server {
    return this.adoptServer(http.createServer(), transport);
  }

  private adoptServer(server: http.Server, transport: Transport): http.Server {
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      void this.serve(req, res, transport);
    });
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.serveUpgrade(req, socket, head, transport);
    });
    server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
      const answer = answerClientError(err, socket);
      if (answer) this.recorder?.parserAnswer(answer);
    });
    this.servers.push({ server, transport });
    return server;
  }

  /** Ends what the mounts hold open (their sessions), while the backend still serves. */
  async closeMounts(): Promise<void> {
    await Promise.allSettled((this.opts.mounts ?? []).map((m) => m.close()));
  }

  private async serve(req: IncomingMessage, res: ServerResponse, transport: Transport): Promise<void> {
    const mount = this.mountOf(req.url);
    if (mount !== undefined) return this.serveMount(mount, req, res, transport);
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
    refuseUnknownQuery(route.name, url.searchParams);
    const body = STREAMED_BODY_ROUTES.includes(route.name)
      ? Buffer.alloc(0)
      : await readBody(req, this.opts.maxBodyBytes);
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

    const fault =
      route.name === "health" || route.name === "openapi" ? NO_FAULT : this.opts.injector.decide(route.name);
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
      faultMemory: this.opts.faultMemory,
      admissionDelay: delay,
      signal,
      response: res,
      warn: (message) => {
        // One line, plain ASCII: a header value. The CLI prints it on stderr.
        if (!res.headersSent) res.setHeader(WARNING_HEADER, message.replace(/[^\x20-\x7e]/g, "?"));
      },
      services: this.opts.services,
    };
    return applyAnswerFault(fault.action, await route.handler(ctx), fault.field);
  }

  /** The mount whose path the request is for (its query aside), if any. */
  private mountOf(target: string | undefined): Mount | undefined {
    const mounts = this.opts.mounts ?? [];
    if (mounts.length === 0) return undefined;
    const pathname = (target ?? "/").split("?")[0];
    return mounts.find((m) => m.path === pathname);
  }

  /**
   * A request for a mount: authenticated on TCP exactly as a route is (401 without the
   * token), its body bounded, in flight until the mount answered; never recorded by the
   * wire recorder (it is not the /api/v1 contract). The mount writes its own answer.
   */
  private async serveMount(mount: Mount, req: IncomingMessage, res: ServerResponse, transport: Transport) {
    const started = performance.now();
    const method = req.method ?? "GET";
    this.inFlight++;
    clearTimeout(this.idleTimer);
    let status: number | null = null;
    try {
      if (transport === "tcp") this.authenticate(req);
      if (this.closing) throw new ApiError(503, ErrorCodes.notStarted, "the backend is stopping", {});
      const body = mountReadsBody(method) ? await readBody(req, this.opts.maxBodyBytes) : Buffer.alloc(0);
      await mount.serve(req, res, body);
      status = res.statusCode;
    } catch (err) {
      status = writeReply(res, this.errorReply(err, method, mount.path));
    } finally {
      this.inFlight--;
      this.armIdle();
    }
    this.log(`${method} ${mount.path} ${status ?? "dropped"} ${Math.round(performance.now() - started)}ms`);
  }

  /**
   * A WebSocket upgrade (only the terminal routes take one): authenticated as any request
   * on TCP; refused with an ordinary JSON error answer before the switch.
   */
  private serveUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, transport: Transport): void {
    const method = req.method ?? "GET";
    let pathname = "?";
    socket.on("error", () => {
      // A client gone mid-handshake.
    });
    try {
      if (this.closing) throw new ApiError(503, ErrorCodes.notStarted, "the backend is stopping", {});
      if (transport === "tcp") this.authenticate(req);
      const url = parseTarget(req.url);
      pathname = url.pathname;
      const route = matchRoute(method, url.pathname);
      refuseUnknownQuery(route.name, url.searchParams);
      const upgrade = UPGRADES[route.name];
      const forward = route.name === FORWARD_ROUTE;
      if ((upgrade === undefined && !forward) || (req.headers.upgrade ?? "").toLowerCase() !== "websocket") {
        throw new ApiError(400, ErrorCodes.invalidRequest, `${method} ${url.pathname} is not a WebSocket route`, {
          field: "Upgrade",
        });
      }
      const warnings: string[] = [];
      const ctx = {
        params: route.params,
        query: url.searchParams,
        services: this.opts.services,
        warn: (message: string) => warnings.push(message),
      };
      if (upgrade === undefined) {
        void this.serveForward(req, socket, head, ctx, pathname);
        return;
      }
      const target = upgrade(ctx);
      this.sockets.handleUpgrade(req, socket, head, (ws) => {
        this.recorder?.upgradeAnswer(req, { status: 101, headers: { upgrade: "websocket" }, body: "" });
        this.log(`${method} ${pathname} 101 (terminal attached)`);
        ws.on("close", (code) => this.log(`terminal of ${target.key} detached (${code})`));
        this.attachments.attach(target.key, ws, target.source, target.offset, target.hello);
      });
    } catch (err) {
      const reply = this.errorReply(err, method, pathname);
      const status = reply.kind === "drop" ? 500 : reply.status;
      this.log(`${method} ${pathname} ${status} (upgrade refused)`);
      const written = writeRawReply(socket, reply);
      this.recorder?.upgradeAnswer(req, written);
    }
  }

  /**
   * A port forward: the connection inside is joined first (a refusal is a JSON answer
   * before the switch), then the WebSocket carries its bytes (forward-socket.ts).
   */
  private async serveForward(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    ctx: UpgradeContext,
    pathname: string,
  ): Promise<void> {
    const method = req.method ?? "GET";
    this.inFlight++;
    try {
      const target = await openPortForward(ctx);
      if (socket.destroyed || this.closing) {
        target.inside.destroy();
        return;
      }
      this.sockets.handleUpgrade(req, socket, head, (ws) => {
        this.recorder?.upgradeAnswer(req, { status: 101, headers: { upgrade: "websocket" }, body: "" });
        this.log(`${method} ${pathname} 101 (port ${target.port} of ${target.sandboxId} joined)`);
        this.forwards.relay(ws, target.inside);
      });
    } catch (err) {
      const reply = this.errorReply(err, method, pathname);
      const status = reply.kind === "drop" ? 500 : reply.status;
      this.log(`${method} ${pathname} ${status} (port forward refused)`);
      const written = writeRawReply(socket, reply);
      this.recorder?.upgradeAnswer(req, written);
    } finally {
      this.inFlight--;
    }
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
  armIdle(): void {
    const ms = this.opts.idleExitMs;
    const onIdle = this.opts.onIdle;
    clearTimeout(this.idleTimer);
    const idle = () => this.inFlight === 0 && this.forwards.count === 0 && this.opts.nothingRuns();
    if (!ms || !onIdle || this.closing || !idle()) return;
    this.idleTimer = setTimeout(() => {
      if (!this.closing && idle()) onIdle();
    }, ms);
  }
}

/** An answer written straight to a socket that asked for an upgrade (no ServerResponse exists for it). */
function writeRawReply(
  socket: Duplex,
  reply: Reply,
): { status: number; headers: Record<string, string>; body: string } {
  const status = reply.kind === "drop" ? 500 : reply.status;
  const body = reply.kind === "json" ? `${JSON.stringify(reply.body)}\n` : "";
  const headers = {
    ...(reply.kind === "drop" ? {} : reply.headers),
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(body)),
    Connection: "close",
  };
  const head = [`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ""}`]
    .concat(Object.entries(headers).map(([k, v]) => `${k}: ${v}`))
    .join("\r\n");
  socket.end(`${head}\r\n\r\n${body}`);
  return { status, headers, body };
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
