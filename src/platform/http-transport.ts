// The runtime seam for HTTP. On Node this is undici (an Agent over a Unix socket
// or TCP, no retry interceptor: one request is one send). The Bun-compiled binary
// gets Bun's own fetch (which speaks Unix sockets), because Bun replaces undici with
// a partial shim. Nothing else in the code base imports an HTTP client. Reads share
// pooled keep-alive connections; a request marked `fresh` (a mutation) gets a
// connection of its own.

import { createRequire } from "node:module";
import { Readable } from "node:stream";
import { isBunRuntime } from "./runtime.js";

export interface TransportRequest {
  method: string;
  headers: Record<string, string>;
  /** Bytes, or a stream of them (an upload of any size). */
  body?: Buffer | AsyncIterable<Uint8Array>;
  signal?: AbortSignal;
  /**
   * On a connection of its own, never a pooled keep-alive one: a mutation must not be
   * written to a connection the server may have closed while idle (EPIPE, "may have run").
   */
  fresh?: boolean;
}

/**
 * A failed request whose connection provably carried nothing: not a byte of it was
 * ever handed to the socket. Set as `notSent: true` on the error the transport throws.
 */
export interface NotSentMark {
  notSent?: boolean;
}

export interface TransportResponse {
  status: number;
  headers: Record<string, string | undefined>;
  body: AsyncIterable<Uint8Array>;
  text(): Promise<string>;
  /** Stops reading the body and releases the connection. */
  cancel(): void;
}

export interface Transport {
  request(url: URL, req: TransportRequest): Promise<TransportResponse>;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

export function openTransport(socketPath: string | null): Transport {
  return isBunRuntime() ? bunTransport(socketPath) : undiciTransport(socketPath);
}

function undiciTransport(socketPath: string | null): Transport {
  const { Agent, buildConnector, request } = require("undici") as typeof import("undici");
  const options = {
    // The deadline is the caller's (an abort signal); undici's own timers would race it.
    headersTimeout: 0,
    bodyTimeout: 0,
    pipelining: 1,
  };
  const pooled = new Agent({ ...(socketPath ? { connect: { socketPath } } : {}), ...options });
  const fresh = new Set<import("undici").Agent>();
  /** A one-request agent whose socket is watched: bytesWritten 0 proves nothing left. */
  const freshAgent = () => {
    const connect = buildConnector(socketPath ? { socketPath } : {});
    let socket: { bytesWritten: number } | null = null;
    const agent = new Agent({
      ...options,
      connections: 1,
      connect: (opts, callback) =>
        connect(opts, (err, s) => {
          if (s) socket = s;
          // biome-ignore lint/suspicious/noExplicitAny: undici's callback has two shapes (error, or socket)
          (callback as any)(err, s);
        }),
    });
    fresh.add(agent);
    const done = () => {
      fresh.delete(agent);
      void agent.destroy().catch(() => undefined);
    };
    return { agent, written: () => socket?.bytesWritten ?? 0, done };
  };
  return {
    async request(url, req) {
      const own = req.fresh ? freshAgent() : null;
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(url, {
          method: req.method as "GET",
          headers: req.headers,
          ...(req.body === undefined ? {} : { body: Buffer.isBuffer(req.body) ? req.body : Readable.from(req.body) }),
          dispatcher: own?.agent ?? pooled,
          ...(req.signal === undefined ? {} : { signal: req.signal }),
        });
      } catch (err) {
        if (own) {
          if (own.written() === 0 && err && typeof err === "object") (err as NotSentMark).notSent = true;
          own.done();
        }
        throw err;
      }
      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(", ") : v;
      if (own) res.body.once("close", own.done);
      return {
        status: res.statusCode,
        headers,
        body: res.body,
        text: () => res.body.text(),
        cancel: () => res.body.destroy(),
      };
    },
    close: async () => {
      for (const agent of fresh) await agent.destroy().catch(() => undefined);
      fresh.clear();
      await pooled.close();
    },
  };
}

/** Bun's fetch errors name the failure differently; these are the ones that prove nothing was sent. */
const BUN_CODES: Record<string, string> = {
  ConnectionRefused: "ECONNREFUSED",
  FailedToOpenSocket: "ENOENT",
  ENOENT: "ENOENT",
};

interface BunFetchSession {
  fetch(url: URL, init: RequestInit): Promise<Response>;
  close(): void;
}

function bunTransport(socketPath: string | null): Transport {
  const controllers = new Set<AbortController>();
  // Mutations go through a session that never keeps a connection for another request.
  const FetchSession = (globalThis as { Bun?: { FetchSession?: new (init: object) => BunFetchSession } }).Bun
    ?.FetchSession;
  const oneShot = FetchSession
    ? new FetchSession({ keepAlive: false, ...(socketPath ? { unix: socketPath } : {}) })
    : null;
  return {
    async request(url, req) {
      const own = new AbortController();
      controllers.add(own);
      const signal = req.signal ? AbortSignal.any([req.signal, own.signal]) : own.signal;
      const go = req.fresh && oneShot ? oneShot.fetch.bind(oneShot) : fetch;
      let res: Response;
      try {
        res = await go(url, {
          method: req.method,
          headers: req.fresh && !oneShot ? { ...req.headers, connection: "close" } : req.headers,
          ...(req.body === undefined ? {} : { body: fetchBody(req.body), duplex: "half" }),
          signal,
          redirect: "manual",
          ...(socketPath ? { unix: socketPath } : {}),
        } as RequestInit);
      } catch (err) {
        controllers.delete(own);
        const e = err as Error & { code?: string };
        const code = e.code === undefined ? undefined : (BUN_CODES[e.code] ?? e.code);
        throw Object.assign(e, code === undefined ? {} : { code });
      }
      const headers: Record<string, string | undefined> = {};
      res.headers.forEach((v, k) => {
        headers[k] = v;
      });
      const body = res.body as unknown as AsyncIterable<Uint8Array> | null;
      return {
        status: res.status,
        headers,
        body: body ?? (async function* () {})(),
        text: async () => {
          try {
            return await res.text();
          } finally {
            controllers.delete(own);
          }
        },
        cancel: () => {
          own.abort();
          controllers.delete(own);
        },
      };
    },
    close: async () => {
      for (const c of controllers) c.abort();
      controllers.clear();
      oneShot?.close();
    },
  };
}

/** A fetch body: bytes as they are, a stream of them as a ReadableStream. */
function fetchBody(body: Buffer | AsyncIterable<Uint8Array>): Buffer | ReadableStream<Uint8Array> {
  if (Buffer.isBuffer(body)) return body;
  const iterator = body[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}
