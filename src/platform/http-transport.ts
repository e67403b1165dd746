// The runtime seam for HTTP. On Node this is undici (an Agent over a Unix socket
// or TCP, no retry interceptor: one request is one send). The Bun-compiled binary
// gets Bun's own fetch (which speaks Unix sockets), because Bun replaces undici with
// a partial shim. Nothing else in the code base imports an HTTP client.

import { createRequire } from "node:module";
import { Readable } from "node:stream";

export interface TransportRequest {
  method: string;
  headers: Record<string, string>;
  /** Bytes, or a stream of them (an upload of any size). */
  body?: Buffer | AsyncIterable<Uint8Array>;
  signal?: AbortSignal;
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

export function isBunRuntime(): boolean {
  return typeof (process.versions as Record<string, string | undefined>).bun === "string";
}

export function openTransport(socketPath: string | null): Transport {
  return isBunRuntime() ? bunTransport(socketPath) : undiciTransport(socketPath);
}

function undiciTransport(socketPath: string | null): Transport {
  const { Agent, request } = require("undici") as typeof import("undici");
  const agent = new Agent({
    ...(socketPath ? { connect: { socketPath } } : {}),
    // The deadline is the caller's (an abort signal); undici's own timers would race it.
    headersTimeout: 0,
    bodyTimeout: 0,
    pipelining: 1,
  });
  return {
    async request(url, req) {
      const res = await request(url, {
        method: req.method as "GET",
        headers: req.headers,
        ...(req.body === undefined ? {} : { body: Buffer.isBuffer(req.body) ? req.body : Readable.from(req.body) }),
        dispatcher: agent,
        ...(req.signal === undefined ? {} : { signal: req.signal }),
      });
      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(", ") : v;
      return {
        status: res.statusCode,
        headers,
        body: res.body,
        text: () => res.body.text(),
        cancel: () => res.body.destroy(),
      };
    },
    close: () => agent.close(),
  };
}

/** Bun's fetch errors name the failure differently; these are the ones that prove nothing was sent. */
const BUN_CODES: Record<string, string> = {
  ConnectionRefused: "ECONNREFUSED",
  FailedToOpenSocket: "ENOENT",
  ENOENT: "ENOENT",
};

function bunTransport(socketPath: string | null): Transport {
  const controllers = new Set<AbortController>();
  return {
    async request(url, req) {
      const own = new AbortController();
      controllers.add(own);
      const signal = req.signal ? AbortSignal.any([req.signal, own.signal]) : own.signal;
      let res: Response;
      try {
        res = await fetch(url, {
          method: req.method,
          headers: req.headers,
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
