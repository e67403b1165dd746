// The runtime seam for HTTP. On Node this is node:http (over a Unix socket or TCP,
// node:https for https URLs; no retries: one request is one send). The Bun-compiled
// binary gets Bun's own fetch (which speaks Unix sockets). Nothing else in the code
// base imports an HTTP client. Reads share pooled keep-alive connections; a request
// marked `fresh` (a mutation) gets a connection of its own. Node's modules are loaded
// only on Node: in the binary each is a cost of every command's start (BENCHMARKS.md).

import { RawGetUnsupported, rawGet } from "./raw-get.js";
import { isBunRuntime } from "./runtime.js";
import { bodyInSbxWords, inSbxWords } from "./transport-errors.js";

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

export function openTransport(socketPath: string | null): Transport {
  return isBunRuntime() ? bunTransport(socketPath) : nodeTransport(socketPath);
}

/**
 * Node's own HTTP client (node:http, node:https): part of the runtime, so a command
 * pays nothing to load it (undici cost a warm exec about as much as starting Node;
 * BENCHMARKS.md). Reads share keep-alive connections; a `fresh` request gets a
 * connection of its own (agent: false, `Connection: close`).
 */
function nodeTransport(socketPath: string | null): Transport {
  type HttpModule = typeof import("node:http");
  const modules = new Map<string, HttpModule>();
  const moduleFor = (protocol: string): HttpModule => {
    const name = protocol === "https:" ? "node:https" : "node:http";
    let mod = modules.get(name);
    if (!mod) {
      mod = process.getBuiltinModule(name) as HttpModule;
      modules.set(name, mod);
    }
    return mod;
  };
  const agents = new Map<string, import("node:http").Agent>();
  const pooledAgent = (protocol: string) => {
    let agent = agents.get(protocol);
    if (!agent) {
      agent = new (moduleFor(protocol).Agent)({ keepAlive: true });
      agents.set(protocol, agent);
    }
    return agent;
  };
  const open = new Set<import("node:http").ClientRequest>();
  // Raw reads in flight (raw-get.ts), cancelled by close().
  const rawOpen = new Set<TransportResponse>();
  const viaHttp = (url: URL, req: TransportRequest) =>
    new Promise<TransportResponse>((resolve, reject) => {
      const cr = moduleFor(url.protocol).request(url, {
        method: req.method,
        headers: req.headers,
        agent: req.fresh ? false : pooledAgent(url.protocol),
        ...(socketPath ? { socketPath } : {}),
        ...(req.signal === undefined ? {} : { signal: req.signal }),
        // No TLS, so no server name: Node would otherwise work one out of the host,
        // compiling its IPv6 pattern on first use (4 ms of a warm exec).
        ...(url.protocol === "http:" ? ({ servername: "" } as object) : {}),
      });
      open.add(cr);
      cr.once("close", () => open.delete(cr));
      // A connection of its own that never connected carried nothing: provably not sent.
      // Over TLS the request leaves only once the handshake is done (secureConnect);
      // a new TLS connection is never through it when the request is given its socket.
      let connected = false;
      cr.once("socket", (socket) => {
        if (url.protocol === "https:") socket.once("secureConnect", () => (connected = true));
        else if (!socket.connecting) connected = true;
        else socket.once("connect", () => (connected = true));
      });
      cr.once("error", (err) => {
        if (req.fresh && !connected && err && typeof err === "object") (err as NotSentMark).notSent = true;
        reject(inSbxWords(err));
      });
      cr.once("response", (res) => {
        const headers: Record<string, string | undefined> = {};
        for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(", ") : v;
        resolve({
          status: res.statusCode ?? 0,
          headers,
          body: bodyInSbxWords(res),
          text: async () => {
            const chunks: Buffer[] = [];
            try {
              for await (const c of res) chunks.push(c as Buffer);
            } catch (err) {
              throw inSbxWords(err);
            }
            return Buffer.concat(chunks).toString("utf8");
          },
          cancel: () => res.destroy(),
        });
      });
      if (req.body === undefined) cr.end();
      else if (Buffer.isBuffer(req.body)) cr.end(req.body);
      else
        process
          .getBuiltinModule("node:stream")
          .Readable.from(req.body)
          .once("error", (err) => cr.destroy(err))
          .pipe(cr);
    });
  return {
    request: async (url, req) => {
      // A raw read of the daemon's is read off its socket by hand (raw-get.ts).
      if (socketPath && isRawGet(url, req)) {
        try {
          const settle = { res: null as TransportResponse | null, closed: false };
          const res = await rawGet({
            socketPath,
            target: `${url.pathname}${url.search}`,
            headers: req.headers,
            ...(req.signal === undefined ? {} : { signal: req.signal }),
            onClose: () => {
              settle.closed = true;
              if (settle.res) rawOpen.delete(settle.res);
            },
          });
          settle.res = res;
          if (!settle.closed) rawOpen.add(res);
          return res;
        } catch (err) {
          if (!(err instanceof RawGetUnsupported)) throw err;
        }
      }
      return viaHttp(url, req);
    },
    close: async () => {
      for (const res of rawOpen) res.cancel();
      rawOpen.clear();
      for (const cr of open) cr.destroy();
      open.clear();
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  };
}

/** A GET asking for bytes (docs/protocol.md, "Raw reads") over plain HTTP, with no body. */
function isRawGet(url: URL, req: TransportRequest): boolean {
  return (
    url.protocol === "http:" &&
    req.method === "GET" &&
    req.body === undefined &&
    req.headers.accept === "application/octet-stream"
  );
}

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
        // Bun's names (ConnectionRefused…) as Node's errno, in sbx's words (transport-errors.ts).
        throw inSbxWords(err);
      }
      const headers: Record<string, string | undefined> = {};
      res.headers.forEach((v, k) => {
        headers[k] = v;
      });
      const body = res.body as unknown as AsyncIterable<Uint8Array> | null;
      return {
        status: res.status,
        headers,
        body: body === null ? (async function* () {})() : bodyInSbxWords(body),
        text: async () => {
          try {
            return await res.text();
          } catch (err) {
            throw inSbxWords(err);
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
