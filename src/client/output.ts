// Reading an execution's full output by byte offset (GET …/output): the bytes the
// record's bounded, UTF-8 tail and the event budget leave out, exactly as written.

import { BackendError } from "../cli/errors.js";
import type { Api } from "./api.js";
import type { StreamName } from "./follow.js";

/** The backend serves at most 4 MiB per read; fewer, larger reads are faster. */
export const OUTPUT_READ_MAX = 4 * 1024 * 1024;

export interface OutputRead {
  /** The offset just past the last byte delivered. */
  reached: number;
  /** The backend said the stream ends there (the execution is over). */
  eof: boolean;
  /** Why reading stopped before `to` or the end: the backend did not keep those bytes. */
  notKept: boolean;
}

/**
 * Delivers bytes [from, to) of a stream (to the end when `to` is null) in order.
 * Stops early, with notKept, where the backend's output file stops (its cap); other
 * failures are thrown (BackendError).
 */
export async function readOutputRange(
  api: Api,
  target: { sandbox: string; executionId: string },
  stream: StreamName,
  from: number,
  to: number | null,
  onBytes: (bytes: Buffer) => void,
): Promise<OutputRead> {
  let at = from;
  for (;;) {
    if (to !== null && at >= to) return { reached: at, eof: false, notKept: false };
    const limit = to === null ? OUTPUT_READ_MAX : Math.min(OUTPUT_READ_MAX, to - at);
    let chunk: Awaited<ReturnType<Api["readOutput"]>>;
    try {
      chunk = await api.readOutput(target.sandbox, target.executionId, stream, at, limit);
    } catch (err) {
      // 422 invalid_cursor: past what the backend kept of this stream; 404
      // output_not_found: it no longer keeps the full output at all (retention).
      const gone = err instanceof BackendError && (err.status === 422 || err.code === "output_not_found");
      if (gone) return { reached: at, eof: false, notKept: true };
      throw err;
    }
    if (typeof chunk?.data !== "string" || typeof chunk.next_offset !== "number" || chunk.offset !== at) {
      throw new BackendError("bad_answer", `output of ${target.executionId}: not the documented chunk`, 200);
    }
    const data = Buffer.from(chunk.data, "base64");
    if (data.length > 0) onBytes(data);
    at = chunk.next_offset;
    if (chunk.eof) return { reached: at, eof: true, notKept: false };
    // Nothing more yet, and the stream is not over: the file stopped at its cap.
    if (data.length === 0) return { reached: at, eof: false, notKept: to !== null };
  }
}
