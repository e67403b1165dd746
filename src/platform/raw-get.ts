// Node only: a raw read (docs/protocol.md, "Raw reads": GET …/output or …/logs with
// `Accept: application/octet-stream`) over the daemon's Unix socket, read off the socket
// by hand. node:http hands every chunk through its parser and two streams (about 130 ms
// of a 50 MiB `sbx logs`, BENCHMARKS.md "Where the time goes"); here the socket reads
// into one reused buffer (net's `onread`), the head is parsed once, and the body's bytes
// are copied out as they arrive, nothing more. Only what such an answer is: a status line,
// headers, and a body of Content-Length bytes or one that ends with the connection. Any
// other framing (chunked) is refused before a byte of body is handed on
// (RawGetUnsupported), and the transport asks again through node:http: a GET changes
// nothing, so asking twice is safe. Imports nothing of the project's (the transport is
// the only caller; its own types would make an import circle).

import type { Socket } from "node:net";
import { inSbxWords } from "./transport-errors.js";

/** The answer's framing is not one this reader handles; ask again through node:http. */
export class RawGetUnsupported extends Error {}

export interface RawGetRequest {
  socketPath: string;
  /** Path and query, as sent on the request line. */
  target: string;
  headers: Record<string, string>;
  signal?: AbortSignal;
  /** Called once the connection is closed, whatever ended it. */
  onClose?: () => void;
}

export interface RawGetResponse {
  status: number;
  headers: Record<string, string | undefined>;
  body: AsyncIterable<Uint8Array>;
  text(): Promise<string>;
  cancel(): void;
}

/** The socket reads into this many bytes, reused for every read of one request. */
const READ_BUFFER = 1024 * 1024;
/** Bytes waiting for the reader past which the socket is paused (the kernel holds the rest). */
const PAUSE_ABOVE = 8 * 1024 * 1024;
/** A head longer than this is not an answer of the daemon's. */
const HEAD_LIMIT = 64 * 1024;

const HEAD_END = Buffer.from("\r\n\r\n");

function connectionError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  if (reason instanceof Error) return reason;
  return Object.assign(new Error("The operation was aborted"), { name: "AbortError", code: "ABORT_ERR" });
}

function requestHead(req: RawGetRequest): string {
  let head = `GET ${req.target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n`;
  for (const [name, value] of Object.entries(req.headers)) {
    // As node:http refuses them: a header never carries a line break of its own.
    if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) {
      throw Object.assign(new TypeError(`Invalid character in header content ["${name}"]`), {
        code: "ERR_INVALID_CHAR",
      });
    }
    head += `${name}: ${value}\r\n`;
  }
  return `${head}\r\n`;
}

interface Head {
  status: number;
  headers: Record<string, string | undefined>;
}

function parseHead(text: string): Head {
  const lines = text.split("\r\n");
  const statusLine = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? "");
  if (!statusLine)
    throw connectionError("the answer does not start with an HTTP/1.1 status line", "HPE_INVALID_CONSTANT");
  const headers: Record<string, string | undefined> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw connectionError("a header line of the answer has no name", "HPE_INVALID_HEADER_TOKEN");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const before = headers[name];
    headers[name] = before === undefined ? value : `${before}, ${value}`;
  }
  return { status: Number(statusLine[1]), headers };
}

export function rawGet(req: RawGetRequest): Promise<RawGetResponse> {
  const net = process.getBuiltinModule("node:net");
  const head = requestHead(req);
  if (req.signal?.aborted) return Promise.reject(abortError(req.signal));

  return new Promise<RawGetResponse>((resolve, reject) => {
    let headBytes: Buffer | null = Buffer.alloc(0);
    // Body bytes the reader has not taken yet, and who waits for them.
    const queue: Buffer[] = [];
    let queued = 0;
    let remaining = Number.POSITIVE_INFINITY;
    let finished = false;
    let failure: Error | null = null;
    let wake: (() => void) | null = null;
    let resolved = false;

    const notify = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    const fail = (err: Error) => {
      if (finished || failure) return;
      failure = err;
      socket.destroy();
      if (!resolved) reject(err);
      notify();
    };
    const finish = () => {
      if (finished) return;
      finished = true;
      socket.destroy();
      notify();
    };
    const onAbort = () => fail(abortError(req.signal as AbortSignal));

    const takeBody = (bytes: Buffer) => {
      if (bytes.length === 0) return;
      const used = Math.min(bytes.length, remaining);
      // A copy: the read buffer is filled again by the next read.
      queue.push(Buffer.from(bytes.subarray(0, used)));
      queued += used;
      remaining -= used;
      if (remaining === 0) finish();
      else if (queued > PAUSE_ABOVE) socket.pause();
      notify();
    };

    const takeHead = (bytes: Buffer) => {
      const sofar: Buffer = Buffer.concat([headBytes as Buffer, bytes]);
      const end = sofar.indexOf(HEAD_END);
      if (end < 0) {
        if (sofar.length > HEAD_LIMIT) fail(connectionError("the answer's head is too long", "HPE_HEADER_OVERFLOW"));
        else headBytes = sofar;
        return;
      }
      headBytes = null;
      let parsed: Head;
      try {
        parsed = parseHead(sofar.subarray(0, end).toString("latin1"));
      } catch (err) {
        fail(err as Error);
        return;
      }
      const length = parsed.headers["content-length"];
      if (parsed.headers["transfer-encoding"] !== undefined || (length !== undefined && !/^\d+$/.test(length))) {
        fail(new RawGetUnsupported("the answer is not framed by its length"));
        return;
      }
      if (length !== undefined) remaining = Number(length);
      resolved = true;
      resolve({ status: parsed.status, headers: parsed.headers, body: body(), text, cancel: finish });
      if (remaining === 0) finish();
      else takeBody(sofar.subarray(end + HEAD_END.length));
    };

    const socket: Socket = net.connect({
      path: req.socketPath,
      onread: {
        buffer: Buffer.allocUnsafe(READ_BUFFER),
        callback: (n: number, buf: Uint8Array) => {
          if (finished || failure) return false;
          const bytes = Buffer.from(buf.buffer, buf.byteOffset, n);
          if (headBytes !== null) takeHead(bytes);
          else takeBody(bytes);
          return true;
        },
      },
    });
    socket.once("connect", () => socket.write(head));
    // The socket's own failures in sbx's words (transport-errors.ts), as every transport's.
    socket.once("error", (err) => fail(inSbxWords(err)));
    socket.once("close", () => {
      req.signal?.removeEventListener("abort", onAbort);
      req.onClose?.();
      if (finished || failure) return;
      if (headBytes !== null) fail(connectionError("the connection closed before an answer arrived", "ECONNRESET"));
      else if (remaining === Number.POSITIVE_INFINITY) finish();
      else fail(connectionError(`the connection closed ${remaining} bytes before the answer's end`, "ECONNRESET"));
    });
    req.signal?.addEventListener("abort", onAbort, { once: true });

    async function* body(): AsyncGenerator<Uint8Array> {
      try {
        for (;;) {
          const next = queue.shift();
          if (next !== undefined) {
            queued -= next.length;
            if (queued <= PAUSE_ABOVE / 2 && socket.isPaused() && !finished) socket.resume();
            yield next;
            continue;
          }
          if (failure) throw failure;
          if (finished) return;
          await new Promise<void>((r) => {
            wake = r;
          });
        }
      } finally {
        // The reader stopped early (a break, a throw): nothing more is read.
        finish();
      }
    }

    async function text(): Promise<string> {
      const parts: Buffer[] = [];
      for await (const c of body()) parts.push(c as Buffer);
      return Buffer.concat(parts).toString("utf8");
    }
  });
}
