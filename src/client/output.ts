// Reading an execution's full output by byte offset (GET …/output, raw): the bytes
// the record's bounded, UTF-8 tail and the event budget leave out, exactly as
// written, handed on as they arrive (never a whole output in memory).

import { BackendError } from "../common/errors.js";
import type { Api } from "./api.js";
import { routePath } from "../protocol/routes.js";
import type { StreamName } from "./follow.js";
import { deliverPiece, openRawRead } from "./raw-read.js";

/** The most one raw read asks for; the rest is read by the next. */
export const OUTPUT_READ_MAX = 64 * 1024 * 1024;
/** One raw read of up to OUTPUT_READ_MAX bytes, locally, in well under this. */
const READ_DEADLINE_MS = 120_000;

export interface OutputRead {
  /** The offset just past the last byte delivered. */
  reached: number;
  /** The backend said the stream ends there (the execution is over). */
  eof: boolean;
  /** Why reading stopped before `to` or the end: the backend did not keep those bytes. */
  notKept: boolean;
  /** The bytes the command wrote to the stream, kept or not, when the backend said (raw reads). */
  streamBytes: number | null;
  /** Connections its sandbox's egress policy refused while the execution ran, when the backend said (raw reads). */
  egressDenied?: number | null;
}

/**
 * Delivers bytes [from, to) of a stream (to the end when `to` is null) in order,
 * awaiting `onBytes` for each piece (write it on with back-pressure). Stops early,
 * with notKept, where the backend's output file stops (its cap); other failures are
 * thrown (BackendError).
 */
export async function readOutputRange(
  api: Api,
  target: { sandbox: string; executionId: string },
  stream: StreamName,
  from: number,
  to: number | null,
  onBytes: (bytes: Buffer) => void | Promise<void>,
): Promise<OutputRead> {
  const what = `output of ${target.executionId}`;
  let at = from;
  let streamBytes: number | null = null;
  let egressDenied: number | null = null;
  for (;;) {
    if (to !== null && at >= to) return { reached: at, eof: false, notKept: false, streamBytes };
    const limit = to === null ? OUTPUT_READ_MAX : Math.min(OUTPUT_READ_MAX, to - at);
    const path = routePath(
      "executions.output",
      { id: target.sandbox, eid: target.executionId },
      { stream, offset: at, limit },
    );
    let piece: Awaited<ReturnType<typeof openRawRead>>;
    try {
      piece = await openRawRead(api.http, path, what, READ_DEADLINE_MS);
    } catch (err) {
      // 422 invalid_cursor: past what the backend kept of this stream; 404
      // output_not_found: it no longer keeps the full output at all (retention).
      const gone = err instanceof BackendError && (err.status === 422 || err.code === "output_not_found");
      if (gone) return { reached: at, eof: false, notKept: true, streamBytes };
      throw err;
    }
    if (piece.offset !== at) {
      piece.cancel();
      throw new BackendError("bad_answer", `${what}: bytes from ${piece.offset}, not ${at} as asked`, 200);
    }
    streamBytes = piece.streamBytes;
    egressDenied = piece.egressDenied;
    const got = await deliverPiece(piece, what, onBytes);
    at = piece.nextOffset;
    if (piece.eof) return { reached: at, eof: true, notKept: false, streamBytes, egressDenied };
    // Nothing more yet, and the stream is not over: the file stopped at its cap.
    if (got === 0) return { reached: at, eof: false, notKept: to !== null, streamBytes };
  }
}

/** How much of a stream the command wrote, and how much of it the backend keeps. */
export interface OutputExtent {
  /** Bytes the command wrote to the stream. */
  streamBytes: number;
  /** Bytes of them the backend keeps (readable by offset); the rest is lost (its output cap). */
  keptBytes: number;
}

/**
 * Asks the backend how much of a stream it keeps (one raw read of at most one byte,
 * its headers: Sbx-Stream-Bytes and Sbx-Kept-Bytes). null when the backend does not
 * say (a JSON-only backend) or no longer keeps the full output at all.
 */
export async function readOutputExtent(
  api: Api,
  target: { sandbox: string; executionId: string },
  stream: StreamName,
): Promise<OutputExtent | null> {
  const path = routePath(
    "executions.output",
    { id: target.sandbox, eid: target.executionId },
    { stream, offset: 0, limit: 1 },
  );
  let piece: Awaited<ReturnType<typeof openRawRead>>;
  try {
    piece = await openRawRead(api.http, path, `output of ${target.executionId}`, READ_DEADLINE_MS);
  } catch (err) {
    if (err instanceof BackendError && err.code === "output_not_found") return null;
    throw err;
  }
  piece.cancel();
  if (piece.streamBytes === null || piece.keptBytes === null) return null;
  return { streamBytes: piece.streamBytes, keptBytes: piece.keptBytes };
}
