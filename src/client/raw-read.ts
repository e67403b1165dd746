// Raw reads (docs/protocol.md): GET …/output and …/logs asked with `Accept:
// application/octet-stream` answer the bytes themselves, with where they are in
// Sbx-* headers, handed over unread so that callers write them on as they arrive.
// A backend that answers JSON instead (it does not know raw reads) is read as JSON.

import { BackendError } from "../common/errors.js";
import { OCTET_STREAM, RAW_HEADERS } from "../protocol/types.js";
import { answerOrThrow } from "./api.js";
import type { Requests } from "./http.js";

/** The headers of a raw answer, as numbers and flags, and its body unread. */
export interface RawPiece {
  offset: number;
  nextOffset: number;
  eof: boolean;
  rotated: boolean;
  oldestOffset: number | null;
  generation: number | null;
  /** Output: the bytes the command wrote to the stream, kept or not (null when not said). */
  streamBytes: number | null;
  /** Output: the bytes of the stream the backend keeps, fewer past its cap (null when not said). */
  keptBytes: number | null;
  /** Connections its sandbox's egress policy refused while the execution ran (Sbx-Egress-Denied); null: none said. */
  egressDenied: number | null;
  chunks: AsyncIterable<Uint8Array>;
  cancel(): void;
}

/** What a JSON answer of the same route holds (base64 data). */
interface JsonPiece {
  offset: number;
  next_offset: number;
  data: string;
  eof: boolean;
  rotated?: boolean;
  oldest_offset?: number;
  generation?: number;
}

function headerNumber(headers: Record<string, string | undefined>, name: string, what: string): number {
  const text = headers[name.toLowerCase()];
  const value = text === undefined || !/^\d+$/.test(text) ? Number.NaN : Number(text);
  if (!Number.isSafeInteger(value)) {
    throw new BackendError("bad_answer", `${what}: the ${name} header is missing or not a number`, 200);
  }
  return value;
}

/** One raw read of `path`; a non-2xx answer is thrown (BackendError). */
export async function openRawRead(http: Requests, path: string, what: string, deadlineMs: number): Promise<RawPiece> {
  const opened = await http.openRaw({ method: "GET", path, accept: OCTET_STREAM, deadlineMs });
  if (opened.kind !== "raw") {
    answerOrThrow(opened, what);
    throw new BackendError("bad_answer", `${what}: no answer`, null);
  }
  const h = opened.headers;
  if ((h["content-type"] ?? "").startsWith("application/json")) {
    const parts: Buffer[] = [];
    for await (const c of opened.chunks) parts.push(Buffer.from(c));
    const piece = JSON.parse(Buffer.concat(parts).toString("utf8")) as JsonPiece;
    if (typeof piece?.data !== "string" || typeof piece.next_offset !== "number" || typeof piece.offset !== "number") {
      throw new BackendError("bad_answer", `${what}: not the documented chunk`, 200);
    }
    const data = Buffer.from(piece.data, "base64");
    return {
      offset: piece.offset,
      nextOffset: piece.next_offset,
      eof: piece.eof === true,
      rotated: piece.rotated === true,
      oldestOffset: piece.oldest_offset ?? null,
      generation: piece.generation ?? null,
      streamBytes: null,
      keptBytes: null,
      egressDenied: null,
      chunks: (async function* () {
        if (data.length) yield data;
      })(),
      cancel: () => undefined,
    };
  }
  const present = (name: string) => h[name.toLowerCase()] !== undefined;
  return {
    offset: headerNumber(h, RAW_HEADERS.offset, what),
    nextOffset: headerNumber(h, RAW_HEADERS.nextOffset, what),
    eof: h[RAW_HEADERS.eof.toLowerCase()] === "true",
    rotated: h[RAW_HEADERS.rotated.toLowerCase()] === "true",
    oldestOffset: present(RAW_HEADERS.oldestOffset) ? headerNumber(h, RAW_HEADERS.oldestOffset, what) : null,
    generation: present(RAW_HEADERS.generation) ? headerNumber(h, RAW_HEADERS.generation, what) : null,
    streamBytes: present(RAW_HEADERS.streamBytes) ? headerNumber(h, RAW_HEADERS.streamBytes, what) : null,
    keptBytes: present(RAW_HEADERS.keptBytes) ? headerNumber(h, RAW_HEADERS.keptBytes, what) : null,
    egressDenied: present(RAW_HEADERS.egressDenied) ? headerNumber(h, RAW_HEADERS.egressDenied, what) : null,
    chunks: opened.chunks,
    cancel: opened.cancel,
  };
}

/**
 * Hands a piece's bytes to `onBytes` as they arrive (awaiting it: back-pressure) and
 * checks that exactly nextOffset - offset of them came. Returns how many.
 */
export async function deliverPiece(
  piece: RawPiece,
  what: string,
  onBytes: (bytes: Buffer) => void | Promise<void>,
): Promise<number> {
  const want = piece.nextOffset - piece.offset;
  let got = 0;
  try {
    for await (const c of piece.chunks) {
      const bytes = Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength);
      if (bytes.length === 0) continue;
      got += bytes.length;
      if (got > want) throw new BackendError("bad_answer", `${what}: more bytes than announced`, 200);
      await onBytes(bytes);
    }
  } catch (err) {
    piece.cancel();
    if (err instanceof BackendError) throw err;
    throw new BackendError("read_failed", `${what}: the read broke off after ${got} of ${want} bytes`, null);
  }
  if (got < want) throw new BackendError("read_failed", `${what}: ${want - got} of ${want} bytes did not arrive`, null);
  return got;
}
