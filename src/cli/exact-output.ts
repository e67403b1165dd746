// The command's output on sbx's stdout and stderr, byte for byte. An execution
// record holds each stream as text: its last 1 MiB, with bytes that are not UTF-8
// replaced by U+FFFD. When the record holds all of a stream exactly, it is printed;
// otherwise the stream is read by offset from the backend's full output
// (GET …/output). The receipt keeps the record's bounded tails either way.

import type { Api } from "../client/api.js";
import type { StreamName } from "../client/follow.js";
import { readOutputRange } from "../client/output.js";
import type { ReceiptDocument } from "../receipts/document.js";
import type { Context } from "./context.js";

/** True when a record's text for a stream is exactly and completely the bytes the command wrote. */
export function recordHoldsAll(text: string | null, truncated: boolean): boolean {
  // No U+FFFD: nothing was replaced (a command that printed U+FFFD itself costs one read).
  return !truncated && !(text ?? "").includes("\uFFFD");
}

function writer(ctx: Context, stream: StreamName): (bytes: Buffer | string) => void {
  return (bytes) => (stream === "stdout" ? ctx.io.writeOut(bytes) : ctx.io.writeErr(bytes));
}

/** Writes on with back-pressure: a large output never piles up in memory. */
function pacedWriter(ctx: Context, stream: StreamName): (bytes: Buffer) => Promise<void> {
  return (bytes) => (stream === "stdout" ? ctx.io.writeOutPaced(bytes) : ctx.io.writeErrPaced(bytes));
}

/** Prints both streams of the execution behind a receipt document, exactly when the backend can tell. */
export async function printExactOutput(ctx: Context, api: Api, doc: ReceiptDocument): Promise<void> {
  for (const stream of ["stdout", "stderr"] as const) {
    const text = doc[stream];
    const truncated = doc[`${stream}_truncated`];
    if (recordHoldsAll(text, truncated) || doc.execution_id === null) {
      if (text) writer(ctx, stream)(text);
      if (!recordHoldsAll(text, truncated)) {
        ctx.io.err(`sbx: ${stream} above is the record's text, not all of it byte for byte (no execution id)`);
      }
      continue;
    }
    let written = 0;
    const write = writer(ctx, stream);
    const writePaced = pacedWriter(ctx, stream);
    try {
      const read = await readOutputRange(
        api,
        { sandbox: doc.sandbox_id, executionId: doc.execution_id },
        stream,
        0,
        null,
        (bytes) => {
          written += bytes.length;
          return writePaced(bytes);
        },
      );
      if (written === 0 && read.notKept) {
        if (text) write(text);
        ctx.io.err(`sbx: ${stream} above is the record's text: the backend no longer keeps the full output`);
      } else if (read.notKept || !read.eof) {
        ctx.io.err(`sbx: ${stream} past byte ${read.reached} was not kept by the backend (its output cap)`);
      }
    } catch (err) {
      if (written === 0 && text) write(text);
      ctx.io.err(
        `sbx: ${stream} ${written === 0 ? "above is the record's text" : `stops at byte ${written}`}: the full output could not be read (${(err as Error).message})`,
      );
    }
  }
}
