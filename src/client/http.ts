// One HTTP client for every backend (Unix socket or TCP): a transport. Mutations are
// sent exactly once: no retry interceptor, no loop of ours. The local deadline is an
// abort; an abort after sending is reported as such, never as a failure. A backend
// found not listening is reported as it was observed (not sent); whether to start
// one is the CLI's decision (src/cli/local-start.ts), never this client's.

import { type NotSentMark, openTransport, type Transport } from "../platform/http-transport.js";
import { WARNING_HEADER } from "../protocol/types.js";
import { type HttpObserved, isBeforeSendError } from "./observed.js";
import { type Endpoint, keyInClearProblem } from "./endpoint.js";
import { redact } from "./redact.js";

export interface SendRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  /** Bytes, or a stream of them (a file upload). */
  body?: Buffer | AsyncIterable<Uint8Array>;
  contentType?: string;
  /** What the answer should be; default application/json (text/event-stream for openStream). */
  accept?: string;
  idempotencyKey?: string;
  /** Local deadline in ms from now. */
  deadlineMs?: number;
  /** Cancels the request (e.g. the user pressed Ctrl-C). */
  signal?: AbortSignal;
  /** Resume an event stream after this event id. */
  lastEventId?: number | null;
  /**
   * False: a backend found not listening is reported, not started, by a sender that
   * starts one (the CLI's, for the local daemon): the caller recovers its own way.
   */
  startBackend?: boolean;
}

/** A 2xx answer of any type, handed over unread (openRaw). */
export interface RawOpen {
  kind: "raw";
  status: number;
  headers: Record<string, string | undefined>;
  chunks: AsyncIterable<Uint8Array>;
  cancel(): void;
}

/** A 2xx event stream, handed over unread. */
export interface SseOpen {
  kind: "sse";
  status: number;
  headers: Record<string, string | undefined>;
  chunks: AsyncIterable<Uint8Array>;
  cancel(): void;
  deadlinePassed(): boolean;
  interrupted(): boolean;
}

/** What sends requests to a backend: the HttpClient, or a sender the CLI puts around it. */
export interface Requests {
  readonly endpoint: Endpoint;
  /** Sends one request and reports exactly what was observed. Never throws for transport trouble. */
  send(req: SendRequest): Promise<HttpObserved>;
  /** Like send, but a 2xx `text/event-stream` answer is handed over unread. */
  openStream(req: SendRequest): Promise<HttpObserved | SseOpen>;
  /** Like send, but any 2xx answer is handed over unread (file downloads). */
  openRaw(req: SendRequest): Promise<HttpObserved | RawOpen>;
  close(): Promise<void>;
}

export class HttpClient implements Requests {
  private readonly transport: Transport;
  /** Called with each warning a backend sends for the person behind the request (the Sbx-Warning header). */
  onWarning: ((message: string) => void) | undefined;

  /** interrupt: aborts every request of this client (the user pressed Ctrl-C). */
  constructor(
    readonly endpoint: Endpoint,
    private readonly interrupt?: AbortSignal,
  ) {
    // Before any connection: a key is never sent in clear over a network (docs/protocol.md).
    const inClear = keyInClearProblem(endpoint);
    if (inClear !== null) throw inClear;
    this.transport = openTransport(endpoint.socketPath);
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  /** Sends one request and reports exactly what was observed. Never throws for transport trouble. */
  async send(req: SendRequest): Promise<HttpObserved> {
    const r = await this.open(req);
    if (r.kind === "sse" || r.kind === "raw") throw new Error("unreachable: a stream was not asked for");
    return r;
  }

  /**
   * Like send, but a 2xx `text/event-stream` answer is handed over unread, as a
   * stream of chunks (the deadline and signal still apply while it is read).
   */
  async openStream(req: SendRequest): Promise<HttpObserved | SseOpen> {
    const r = await this.open(req, "sse");
    if (r.kind === "raw") throw new Error("unreachable: only event streams are handed over here");
    return r;
  }

  /** Like send, but any 2xx answer is handed over unread (file downloads); others are read as usual. */
  async openRaw(req: SendRequest): Promise<HttpObserved | RawOpen> {
    const r = await this.open(req, "raw");
    if (r.kind === "sse") throw new Error("unreachable: an event stream is handed over as raw here");
    return r;
  }

  private async open(
    req: SendRequest,
    handOver: "none" | "sse" | "raw" = "none",
  ): Promise<HttpObserved | SseOpen | RawOpen> {
    const acceptStream = handOver === "sse";
    const headers: Record<string, string> = {
      accept: req.accept ?? (acceptStream ? "text/event-stream" : "application/json"),
    };
    if (req.body !== undefined) headers["content-type"] = req.contentType ?? "application/json";
    if (req.idempotencyKey !== undefined) headers["idempotency-key"] = req.idempotencyKey;
    if (req.lastEventId !== undefined && req.lastEventId !== null) headers["last-event-id"] = String(req.lastEventId);
    if (this.endpoint.apiKey) headers.authorization = `ApiKey ${this.endpoint.apiKey}`;

    const deadline = req.deadlineMs === undefined ? null : AbortSignal.timeout(Math.max(1, req.deadlineMs));
    const userSignal = req.signal ?? this.interrupt;
    const signals = [deadline, userSignal].filter((s): s is AbortSignal => s !== null && s !== undefined);
    const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    let sent = false;
    try {
      const res = await this.transport.request(new URL(req.path, this.endpoint.origin), {
        method: req.method,
        headers,
        ...(req.body === undefined ? {} : { body: req.body }),
        ...(signal === undefined ? {} : { signal }),
        // A mutation never rides a pooled connection the server may have closed while idle.
        fresh: req.method !== "GET",
      });
      sent = true;
      // Headers and bodies are parsed: they are redacted where they are shown or stored, not here.
      const flat: Record<string, string | undefined> = { ...res.headers };
      const warning = flat[WARNING_HEADER.toLowerCase()];
      if (warning) this.onWarning?.(warning);
      const isStream = (flat["content-type"] ?? "").startsWith("text/event-stream");
      if (handOver === "raw" && res.status >= 200 && res.status < 300) {
        return { kind: "raw", status: res.status, headers: flat, chunks: res.body, cancel: () => res.cancel() };
      }
      if (acceptStream && isStream && res.status >= 200 && res.status < 300) {
        return {
          kind: "sse",
          status: res.status,
          headers: flat,
          chunks: res.body,
          cancel: () => res.cancel(),
          deadlinePassed: () => deadline?.aborted === true,
          interrupted: () => userSignal?.aborted === true,
        };
      }
      return { kind: "answer", status: res.status, headers: flat, body: await res.text() };
    } catch (err) {
      const e = err as NodeJS.ErrnoException & NotSentMark & { cause?: NodeJS.ErrnoException };
      const code = e.code ?? e.cause?.code ?? e.name ?? "UNKNOWN";
      // Provably not sent: a connect error, or a connection of its own that carried no byte.
      const left = sent || (e.notSent !== true && !isBeforeSendError(code));
      if (deadline?.aborted) return { kind: "deadline", sent: left };
      if (userSignal?.aborted) return { kind: "deadline", sent: left, interrupted: true };
      const message = redact(e.message || String(err), this.endpoint.apiKey);
      return { kind: "transport", sent: left, code, message };
    }
  }
}
