// HTTP plumbing of the backend: typed answers (Reply), API errors and their wire
// shape, bounded body reading, and writing a Reply to a response.

import fs from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ERRORS } from "../../protocol/errors.js";
import { BOOT_PATTERN, type ErrorBody, ErrorCodes, OCTET_STREAM } from "../../protocol/types.js";
import type { Refusal } from "../refusal.js";

/** What a handler answers. The server writes it; `drop` destroys the socket unanswered. */
export type Reply =
  | { kind: "json"; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: "text"; status: number; contentType: string; body: string; headers?: Record<string, string> }
  | { kind: "bytes"; status: number; body: Buffer; headers?: Record<string, string> }
  | { kind: "drop" };

/** An answer in the documented error shape, thrown by handlers and turned into a Reply (a domain Refusal becomes one: refusalAnswer). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    details: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  toReply(): Reply {
    const body: ErrorBody = { error: { code: this.code, message: this.message, details: this.details } };
    return { kind: "json", status: this.status, body, headers: this.headers };
  }
}

/** The answer to a domain refusal: its code's status, its details, and Retry-After with a retry hint. */
export function refusalAnswer(refusal: Refusal): ApiError {
  const retryMs = refusal.details.retry_after_ms;
  const headers: Record<string, string> =
    typeof retryMs === "number" ? { "Retry-After": String(Math.ceil(retryMs / 1000)) } : {};
  return new ApiError(ERRORS[refusal.code].status, refusal.code, refusal.message, refusal.details, headers);
}

export function jsonReply(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return headers ? { kind: "json", status, body, headers } : { kind: "json", status, body };
}

export function invalidRequest(field: string, message: string): ApiError {
  return new ApiError(400, ErrorCodes.invalidRequest, message, { field });
}

/** Parses a JSON request body; an empty body is `emptyAs` when given, else a 400. */
export function parseJsonBody(body: Buffer, emptyAs?: unknown): unknown {
  if (body.length === 0 && emptyAs !== undefined) return emptyAs;
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    throw invalidRequest("body", "request body is not valid JSON");
  }
}

/**
 * Reads the whole request body, refusing more than `limit` bytes with 413 (the
 * rest is discarded, not read into memory). A client that goes away mid-body gets
 * a 400 it will never see, so that the request still ends.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (err: ApiError) => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      reject(err);
    };
    req.on("data", (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) fail(tooLarge(limit));
      else chunks.push(chunk);
    });
    req.on("end", () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks));
    });
    req.on("error", () => fail(incomplete()));
    req.on("close", () => fail(incomplete()));
  });
}

function incomplete(): ApiError {
  return new ApiError(400, ErrorCodes.invalidRequest, "the request body was not received completely", {
    field: "body",
  });
}

function tooLarge(limit: number): ApiError {
  // Close the connection rather than read the rest of an oversized body.
  return new ApiError(
    413,
    ErrorCodes.payloadTooLarge,
    `request body exceeds ${limit} bytes`,
    { limit_bytes: limit },
    { Connection: "close" },
  );
}

/**
 * Answers a request Node's parser refused before any handler saw it (the server's
 * `clientError`), in the documented error shape instead of Node's bare status line:
 * headers (with the URL) over the parser's limit → 431 `headers_too_large`, a request
 * that took too long to arrive → 408, anything else unparseable → 400.
 */
export function answerClientError(
  err: NodeJS.ErrnoException,
  socket: Duplex,
): { status: number; contentType: string; body: string } | null {
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return null;
  }
  const [status, reason, code, message] =
    err.code === "HPE_HEADER_OVERFLOW"
      ? [
          431,
          "Request Header Fields Too Large",
          ErrorCodes.headersTooLarge,
          `the request's headers and URL exceed the ${http.maxHeaderSize} bytes the backend reads (a very long path?); nothing was done`,
        ]
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "Request Timeout", ErrorCodes.invalidRequest, "the request did not arrive in time; nothing was done"]
        : [400, "Bad Request", ErrorCodes.invalidRequest, "not a valid HTTP request; nothing was done"];
  const body: ErrorBody = {
    error: { code, message, details: status === 431 ? { limit_bytes: http.maxHeaderSize } : {} },
  };
  const text = `${JSON.stringify(body)}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
  return { status, contentType: "application/json", body: text };
}

/** A whole number written in decimal digits, at most Number.MAX_SAFE_INTEGER; null for anything else. */
export function parseWholeNumber(text: string): number | null {
  if (!/^[0-9]{1,16}$/.test(text)) return null;
  const value = Number(text);
  return value <= Number.MAX_SAFE_INTEGER ? value : null;
}

/** An optional integer query parameter within [min, max]; 400 otherwise. The one reader of numbers in a query. */
export function intParam(query: URLSearchParams, name: string, min: number, max: number): number | null {
  const text = query.get(name);
  if (text === null) return null;
  const value = parseWholeNumber(text);
  if (value === null || value < min || value > max) {
    throw invalidRequest(name, `${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** `?boot=`: the backend boot a request was issued in (docs/protocol.md, "Ownership fences"); 400 when malformed. */
export function bootParam(query: URLSearchParams): string | undefined {
  const boot = query.get("boot");
  if (boot === null) return undefined;
  if (!BOOT_REGEX.test(boot)) throw invalidRequest("boot", "boot must be a backend boot id (`boot` of an answer)");
  return boot;
}
const BOOT_REGEX = new RegExp(BOOT_PATTERN);

/** An optional boolean query parameter (true/1, false/0); 400 otherwise. */
export function boolParam(query: URLSearchParams, name: string): boolean | null {
  const text = query.get(name);
  if (text === null) return null;
  if (text === "true" || text === "1") return true;
  if (text === "false" || text === "0") return false;
  throw invalidRequest(name, `${name} must be true or false`);
}

/** The client asked for raw bytes (`Accept: application/octet-stream`) rather than JSON. */
export function acceptsBytes(accept: string | string[] | undefined): boolean {
  const value = Array.isArray(accept) ? accept.join(",") : (accept ?? "");
  return value.split(",").some((part) => part.split(";")[0]!.trim().toLowerCase() === OCTET_STREAM);
}

export function withHeader(reply: Reply, name: string, value: string): Reply {
  if (reply.kind === "drop") return reply;
  return { ...reply, headers: { ...reply.headers, [name]: value } };
}

export function isSuccess(reply: Reply): reply is Extract<Reply, { kind: "json" }> {
  return reply.kind === "json" && reply.status >= 200 && reply.status < 300;
}

/** Writes a Reply. Returns the status written, or null when the socket was dropped. */
export function writeReply(res: ServerResponse, reply: Reply): number | null {
  if (reply.kind === "drop") {
    res.socket?.destroy();
    return null;
  }
  if (res.headersSent || res.destroyed) return reply.status;
  const payload = reply.kind === "json" ? `${JSON.stringify(reply.body)}\n` : reply.body;
  const contentType =
    reply.kind === "json"
      ? "application/json; charset=utf-8"
      : reply.kind === "bytes"
        ? OCTET_STREAM
        : reply.contentType;
  res.writeHead(reply.status, {
    ...reply.headers,
    "Content-Type": contentType,
    "Content-Length": Buffer.byteLength(payload),
    "Cache-Control": "no-store",
  });
  res.end(payload);
  return reply.status;
}

/**
 * Writes a 200 (or `status`) answer whose body is streamed from `source`, honouring
 * back-pressure; stops when the client goes away. A source that fails after the
 * headers were sent ends the connection abruptly, so the client sees an incomplete
 * body (short of its Content-Length, or an unterminated chunked body), never a
 * complete-looking one.
 */
export async function sendStream(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | number>,
  source: AsyncIterable<Uint8Array>,
  signal: AbortSignal,
): Promise<void> {
  res.writeHead(status, { "Cache-Control": "no-store", ...headers });
  try {
    for await (const chunk of source) {
      if (signal.aborted || res.destroyed) return;
      if (!res.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off("drain", done);
            res.off("close", done);
            resolve();
          };
          res.on("drain", done);
          res.on("close", done);
        });
      }
    }
    res.end();
  } catch {
    res.destroy();
  }
}

/**
 * Writes a 200 answer whose body is bytes [offset, offset + length) of a file, piped
 * (Node's stream plumbing keeps the socket full; an async loop over the file's chunks
 * moved half as many bytes per second). A file that ends short of `length` (removed
 * meanwhile) ends the connection abruptly: the client sees a body short of its
 * Content-Length, never a complete-looking one.
 */
export async function sendFileRange(
  res: ServerResponse,
  headers: Record<string, string | number>,
  file: string,
  offset: number,
  length: number,
): Promise<void> {
  res.writeHead(200, { "Cache-Control": "no-store", ...headers, "Content-Length": length });
  if (length === 0) {
    res.end();
    return;
  }
  const source = fs.createReadStream(file, { start: offset, end: offset + length - 1, highWaterMark: 1024 * 1024 });
  let sent = 0;
  source.on("data", (chunk) => {
    sent += chunk.length;
  });
  try {
    await pipeline(source, res, { end: false });
    if (sent < length) throw new Error(`${file}: ${length - sent} bytes fewer than announced`);
    res.end();
  } catch {
    res.destroy();
  }
}

/**
 * Writes a 200 answer whose body is the given ranges of already open files, in order,
 * piped as sendFileRange pipes one (never held whole); every descriptor is closed,
 * whatever happens. A range that ends short (a file cut under us) ends the connection
 * abruptly: the client sees a body short of its Content-Length.
 */
export async function sendOpenPieces(
  res: ServerResponse,
  headers: Record<string, string | number>,
  pieces: readonly { fd: number; position: number; length: number }[],
): Promise<void> {
  const length = pieces.reduce((n, p) => n + p.length, 0);
  // Pieces before `handed` belong to a stream (which closes its descriptor itself).
  let handed = 0;
  try {
    res.writeHead(200, { "Cache-Control": "no-store", ...headers, "Content-Length": length });
    for (const piece of pieces) {
      const source = fs.createReadStream("", {
        fd: piece.fd,
        start: piece.position,
        end: piece.position + piece.length - 1,
        highWaterMark: 1024 * 1024,
        autoClose: true,
      });
      handed++;
      let sent = 0;
      source.on("data", (chunk) => {
        sent += chunk.length;
      });
      // pipe(), not pipeline(): pipeline with `end: false` leaves its listeners on the
      // response, one set per piece (Node warns past ten).
      await new Promise<void>((resolve, reject) => {
        const gone = () => {
          source.destroy();
          reject(new Error("the client went away"));
        };
        res.once("close", gone);
        source.once("error", (err) => {
          res.off("close", gone);
          reject(err);
        });
        source.once("end", () => {
          res.off("close", gone);
          resolve();
        });
        source.pipe(res, { end: false });
      });
      if (sent < piece.length) throw new Error(`${piece.length - sent} bytes fewer than announced`);
    }
    res.end();
  } catch {
    res.destroy();
  } finally {
    for (const piece of pieces.slice(handed)) fs.close(piece.fd, () => undefined);
  }
}
