// A small real HTTP server on 127.0.0.1 that records every request it receives
// (method, path, headers, exact body bytes) and answers the way a test tells it to:
// documented records, documented errors, and the ways real servers and gateways
// misbehave (non-JSON bodies, gateway pages, reset sockets, no answer at all).

import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  method: string;
  /** The request target as sent (path and query). */
  path: string;
  /** Lower-case header names, as Node reports them. */
  headers: http.IncomingHttpHeaders;
  /** The exact body bytes. */
  body: Buffer;
}

export type Answer =
  | { kind: "json"; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: "raw"; status: number; contentType: string; body: string; headers?: Record<string, string> }
  /**
   * Binary bytes (a tar stream, a file); with `dropAfter`, only that many are written
   * (after the headers promised them all) and then the socket is destroyed.
   */
  | {
      kind: "bytes";
      status: number;
      contentType: string;
      body: Buffer;
      headers?: Record<string, string>;
      dropAfter?: number;
    }
  /** Read the request, then destroy the socket with a TCP RST (ECONNRESET at the client). */
  | { kind: "reset" }
  /** Read the request, then close the socket without an answer (FIN). */
  | { kind: "close" }
  /** Read the request and never answer. */
  | { kind: "hang" }
  /**
   * 200 text/event-stream: writes each chunk as given (frames, or parts of frames),
   * then ends the response, or destroys the socket when `drop` is set.
   */
  | { kind: "sse"; chunks: string[]; drop?: boolean };

/** An answer, or a function of the request (and its index) that gives one. */
export type Behaviour = Answer | ((req: ReceivedRequest, index: number) => Answer);

let executionCounter = 0;

/** The command of an execute body, if it parses. */
export function commandOf(req: ReceivedRequest): string[] | string | null {
  try {
    const doc = JSON.parse(req.body.toString("utf8")) as { command?: unknown };
    return Array.isArray(doc.command) || typeof doc.command === "string" ? (doc.command as string[] | string) : null;
  } catch {
    return null;
  }
}

/** A documented execution record (docs/protocol.md), with fields overridden as given. */
export function executionRecord(
  req: ReceivedRequest | null,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  const now = new Date().toISOString();
  const key = req?.headers["idempotency-key"];
  return {
    execution_id: `exe_test${++executionCounter}`,
    sandbox_id: "sbx_test",
    idempotency_key: typeof key === "string" ? key : null,
    command: req ? commandOf(req) : ["true"],
    working_dir: "/workspace",
    timeout: 120_000,
    outcome: "succeeded",
    exit_code: 0,
    signal: null,
    system_error: null,
    record_pending: false,
    cancel_requested: false,
    stdout: "",
    stderr: "",
    stdout_bytes: 0,
    stderr_bytes: 0,
    stdout_truncated: false,
    stderr_truncated: false,
    created_at: now,
    started_at: now,
    finished_at: now,
    duration_ms: 3,
    last_event_id: 4,
    ...over,
  };
}

/** What `echo ARGS...` would print, for a command like ["echo", "hi"]. */
function echoOutput(req: ReceivedRequest): string {
  const cmd = commandOf(req);
  return Array.isArray(cmd) && cmd[0] === "echo" ? `${cmd.slice(1).join(" ")}\n` : "";
}

function record(over: Record<string, unknown>): Behaviour {
  return (req) => ({ kind: "json", status: 200, body: executionRecord(req, over) });
}

function apiError(
  status: number,
  code: string,
  message: string,
  details?: Record<string, unknown>,
  headers?: Record<string, string>,
): Answer {
  return {
    kind: "json",
    status,
    body: { error: { code, message, ...(details === undefined ? {} : { details }) } },
    ...(headers === undefined ? {} : { headers }),
  };
}

/** The behaviours the misbehaving-server tests use, by name. */
export const behaviours = {
  /** A documented success: outcome succeeded, exit_code 0, stdout as `echo` would print it. */
  succeeded: (): Behaviour => (req) => ({
    kind: "json",
    status: 200,
    body: executionRecord(req, { stdout: echoOutput(req), stdout_bytes: Buffer.byteLength(echoOutput(req)) }),
  }),
  /** record_pending wins even over a succeeded outcome. */
  recordPending: (): Behaviour =>
    record({ outcome: "succeeded", exit_code: 0, record_pending: true, stdout: "hi\n", stdout_bytes: 3 }),
  failed: (exitCode: number): Behaviour => record({ outcome: "failed", exit_code: exitCode }),
  killedBySignal: (signal = "SIGKILL"): Behaviour => record({ outcome: "failed", exit_code: null, signal }),
  timedOut: (): Behaviour => record({ outcome: "timed_out", exit_code: null, signal: "SIGTERM" }),
  cancelled: (): Behaviour =>
    record({ outcome: "cancelled", exit_code: null, signal: "SIGTERM", cancel_requested: true }),
  streamLost: (): Behaviour => record({ outcome: "unknown", exit_code: null, system_error: "exec_stream_lost" }),
  nonJson: (): Behaviour => ({
    kind: "raw",
    status: 200,
    contentType: "application/json",
    body: "OK, it ran (probably)",
  }),
  succeededWithoutExitCode: (): Behaviour => record({ outcome: "succeeded", exit_code: null }),
  failedWithoutExitOrSignal: (): Behaviour => record({ outcome: "failed", exit_code: null, signal: null }),
  resultUnconfirmed:
    (executionId = "exe_unconfirmed1"): Behaviour =>
    (req) =>
      apiError(409, "execution_result_unconfirmed", "admitted, but the stored result could not be confirmed", {
        execution_id: executionId,
        idempotency_key: req.headers["idempotency-key"],
      }),
  requestInProgress: (): Behaviour =>
    apiError(409, "request_in_progress", "a request with this key is still being admitted"),
  keyReused: (): Behaviour => apiError(422, "idempotency_key_reused", "this key was used with a different body"),
  validation: (): Behaviour =>
    apiError(400, "invalid_request", "timeout must be an integer from 1000 to 600000 ms", { field: "timeout" }),
  unauthorized: (message = "missing or invalid API key"): Behaviour => apiError(401, "unauthorized", message),
  sandboxNotFound: (): Behaviour => apiError(404, "sandbox_not_found", "no sandbox named default"),
  /** The documented not-started 503: details.retry_after_ms and a Retry-After header. */
  notStarted: (retryAfterMs = 2500, retryAfterHeaderS: number | null = 3): Behaviour =>
    apiError(
      503,
      "not_started",
      "the backend is draining; nothing ran",
      { reason: "draining", ...(retryAfterMs === null ? {} : { retry_after_ms: retryAfterMs }) },
      retryAfterHeaderS === null ? undefined : { "retry-after": String(retryAfterHeaderS) },
    ),
  bare503: (): Behaviour => ({ kind: "raw", status: 503, contentType: "text/plain", body: "Service Unavailable" }),
  gateway502: (): Behaviour => ({
    kind: "raw",
    status: 502,
    contentType: "text/html",
    body: "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>",
  }),
  gateway504: (): Behaviour => ({
    kind: "raw",
    status: 504,
    contentType: "text/html",
    body: "<html><body><h1>504 Gateway Time-out</h1></body></html>",
  }),
  reset: (): Behaviour => ({ kind: "reset" }),
  close: (): Behaviour => ({ kind: "close" }),
  hang: (): Behaviour => ({ kind: "hang" }),
} as const;

export interface MisbehavingServer {
  readonly port: number;
  /** http://127.0.0.1:PORT, for --api-url. */
  readonly url: string;
  /** Every request received, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** Requests with method POST. */
  posts(): ReceivedRequest[];
  setBehaviour(b: Behaviour): void;
  /** Resolves once at least n requests have arrived (body fully read). */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  /** Connections open now: 0 once every client has closed its own (nothing more is in flight). */
  openConnections(): number;
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 (or `host`, an address of this machine) with a random port. */
export async function startMisbehavingServer(
  initial: Behaviour = behaviours.succeeded(),
  host = "127.0.0.1",
): Promise<MisbehavingServer> {
  let behaviour = initial;
  const requests: ReceivedRequest[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const sockets = new Set<net.Socket>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const received: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      const index = requests.length;
      requests.push(received);
      for (const w of waiters.filter((w) => requests.length >= w.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const answer = typeof behaviour === "function" ? behaviour(received, index) : behaviour;
      switch (answer.kind) {
        case "json": {
          const body = JSON.stringify(answer.body);
          res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
          res.end(body);
          return;
        }
        case "raw":
          res.writeHead(answer.status, { "content-type": answer.contentType, ...answer.headers });
          res.end(answer.body);
          return;
        case "bytes":
          res.writeHead(answer.status, {
            "content-type": answer.contentType,
            "content-length": String(answer.body.length),
            ...answer.headers,
          });
          if (answer.dropAfter === undefined) res.end(answer.body);
          else res.write(answer.body.subarray(0, answer.dropAfter), () => req.socket.destroy());
          return;
        case "reset":
          req.socket.resetAndDestroy();
          return;
        case "close":
          req.socket.destroy();
          return;
        case "hang":
          return;
        case "sse": {
          res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
          for (const c of answer.chunks) res.write(c);
          if (answer.drop) setTimeout(() => req.socket.destroy(), 20);
          else res.end();
          return;
        }
      }
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    requests,
    posts: () => requests.filter((r) => r.method === "POST"),
    setBehaviour: (b) => {
      behaviour = b;
    },
    waitForRequests: (n, timeoutMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        if (requests.length >= n) return resolve();
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${n} request(s); got ${requests.length}`)),
          timeoutMs,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    openConnections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** One SSE frame as the API writes it. */
export function sseFrame(id: number, type: string, data: unknown): string {
  return `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** An output event's frame. */
export function outputFrame(id: number, stream: "stdout" | "stderr", offset: number, text: string): string {
  return sseFrame(id, "output", { stream, offset, data: Buffer.from(text).toString("base64") });
}

/** A port on 127.0.0.1 that nothing listens on (bound, then closed): connection refused. */
export async function refusedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve, reject) => {
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
