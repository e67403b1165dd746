// Recording every exchange the backend serves, for the validating run that holds the
// traffic to the OpenAPI document (docs/protocol.md, "The OpenAPI document"): one
// JSON line per exchange — the request's method, target, the headers the contract
// names and its JSON body; the answer's status, headers and body (JSON, text and
// event streams; the length only of raw bytes) — and the fault injected, if any.
// Off unless asked for (`SBX_WIRE_RECORD=DIR`, or BackendOptions.wireRecord): a test
// tool. Credentials are never recorded (Authorization only as present or not).

import { randomUUID } from "node:crypto";
import fs from "node:fs";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import path from "node:path";
import type { FaultDecision } from "./faults.js";

/** Bodies past this are cut and marked `truncated` (their status and headers are still checked). */
const BODY_LIMIT = 8 * 1024 * 1024;
const REQUEST_HEADERS = ["content-type", "accept", "idempotency-key", "last-event-id", "upgrade"];
const TEXT_TYPES = /^(application\/json|text\/)/;

export interface WireExchange {
  /** An answer to a request Node's parser refused (answerClientError): no method, no target, no route. */
  parser?: true;
  method: string;
  target: string;
  requestHeaders: Record<string, string>;
  /** The request body as text when it is JSON (or none); null for raw bytes and streamed uploads. */
  requestBody: string | null;
  /** The fault injected into this exchange (faults.ts), or null. */
  fault: { action: string | null; stream: string | null } | null;
  /** null: no answer was written (the connection was dropped or cut before it). */
  status: number | null;
  responseHeaders: Record<string, string>;
  /** Text answers (JSON, event streams); null for raw bytes. */
  responseBody: string | null;
  responseBytes: number;
  /** The body was longer than the recorder keeps, or the connection ended before it did. */
  truncated: boolean;
}

export class WireRecorder {
  private readonly file: string;

  constructor(dir: string) {
    fs.mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, `${process.pid}-${randomUUID()}.jsonl`);
  }

  /** Records the answer to a request the parser refused (before any route saw it). */
  parserAnswer(answer: { status: number; contentType: string; body: string }): void {
    const exchange: WireExchange = {
      parser: true,
      method: "",
      target: "",
      requestHeaders: {},
      requestBody: null,
      fault: null,
      status: answer.status,
      responseHeaders: { "content-type": answer.contentType },
      responseBody: answer.body,
      responseBytes: Buffer.byteLength(answer.body),
      truncated: false,
    };
    fs.appendFileSync(this.file, `${JSON.stringify(exchange)}\n`);
  }

  /** Records the answer to a WebSocket upgrade (a terminal route): 101 once switched, or the refusal. */
  upgradeAnswer(req: IncomingMessage, answer: { status: number; headers: Record<string, string>; body: string }): void {
    const exchange: WireExchange = {
      method: req.method ?? "GET",
      target: req.url ?? "/",
      requestHeaders: requestHeadersOf(req),
      requestBody: null,
      fault: null,
      status: answer.status,
      responseHeaders: Object.fromEntries(Object.entries(answer.headers).map(([k, v]) => [k.toLowerCase(), v])),
      responseBody: answer.body,
      responseBytes: Buffer.byteLength(answer.body),
      truncated: false,
    };
    fs.appendFileSync(this.file, `${JSON.stringify(exchange)}\n`);
  }

  /** Starts recording one exchange; the tap writes its line when the answer is finished or abandoned. */
  tap(req: IncomingMessage, res: ServerResponse): WireTap {
    return new WireTap(req, res, (line) => fs.appendFileSync(this.file, `${JSON.stringify(line)}\n`));
  }
}

export class WireTap {
  private requestBody: string | null = null;
  private fault: WireExchange["fault"] = null;
  private headers: Record<string, string> = {};
  private status: number | null = null;
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private text = true;
  private written = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly save: (exchange: WireExchange) => void,
  ) {
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
    res.writeHead = ((...args: unknown[]) => {
      const extra = args.find((a) => typeof a === "object" && a !== null) as OutgoingHttpHeaders | undefined;
      this.head(args[0] as number, { ...res.getHeaders(), ...extra });
      return writeHead(...args);
    }) as ServerResponse["writeHead"];
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]) => {
      this.body(args[0]);
      return write(...args);
    }) as ServerResponse["write"];
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      if (typeof args[0] !== "function") this.body(args[0]);
      return end(...args);
    }) as ServerResponse["end"];
    res.once("close", () => this.finish());
  }

  /** What the edge read of the request: its body (empty for streamed uploads) and the fault decided. */
  request(body: Buffer, fault: FaultDecision): void {
    const type = String(this.req.headers["content-type"] ?? "");
    if (body.length > 0 && (type === "" || type.startsWith("application/json"))) {
      this.requestBody = body.toString("utf8");
    }
    if (fault.action !== null || fault.stream !== null) {
      this.fault = { action: fault.action, stream: fault.stream?.kind ?? null };
    }
  }

  private head(status: number, headers: OutgoingHttpHeaders): void {
    if (this.status !== null) return;
    this.status = status;
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined)
        this.headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : String(value);
    }
    this.text = TEXT_TYPES.test(this.headers["content-type"] ?? "");
  }

  private body(chunk: unknown): void {
    if (chunk === undefined || chunk === null) return;
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
    this.bytes += buf.length;
    if (this.text && this.bytes <= BODY_LIMIT) this.chunks.push(buf);
  }

  private finish(): void {
    if (this.written) return;
    this.written = true;
    this.save({
      method: this.req.method ?? "GET",
      target: this.req.url ?? "/",
      requestHeaders: requestHeadersOf(this.req),
      requestBody: this.requestBody,
      fault: this.fault,
      status: this.status,
      responseHeaders: this.headers,
      responseBody: this.text ? Buffer.concat(this.chunks).toString("utf8") : null,
      responseBytes: this.bytes,
      truncated: this.bytes > BODY_LIMIT || !this.res.writableFinished,
    });
  }
}

/** The request headers the contract names (Authorization only as present or not). */
function requestHeadersOf(req: IncomingMessage): Record<string, string> {
  const requestHeaders: Record<string, string> = {};
  for (const name of REQUEST_HEADERS) {
    const value = req.headers[name];
    if (value !== undefined) requestHeaders[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  if (req.headers.authorization !== undefined) requestHeaders.authorization = "(present)";
  return requestHeaders;
}
