// The command's output on sbx's stdout and stderr, byte for byte. An execution
// record holds each stream as text: its last 1 MiB, with bytes that are not UTF-8
// replaced by U+FFFD. When the record holds all of a stream exactly, it is printed;
// otherwise the stream is read by offset from the backend's full output
// (GET …/output). The receipt keeps the record's bounded tails either way.

import type { Api } from "../client/api.js";
import type { StreamName } from "../client/follow.js";
import { readOutputExtent, readOutputRange } from "../client/output.js";
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

/**
 * For each stream, how many bytes the command wrote that sbx did not print: 0 when it
 * printed all of it, null when some is missing but not how much.
 */
export type OutputMissing = Record<StreamName, number | null>;

export const NOTHING_MISSING: OutputMissing = { stdout: 0, stderr: 0 };

export function outputIsComplete(missing: OutputMissing): boolean {
  return missing.stdout === 0 && missing.stderr === 0;
}

/**
 * The line no one misses, on stderr, when what sbx printed of a stream is not all the
 * command wrote (README, "Output").
 */
export function sayIncomplete(ctx: Context, what: string): void {
  ctx.io.err(ctx.io.errChalk.bold.yellow(`sbx: OUTPUT INCOMPLETE: ${what}`));
}

/** Bytes of a stream lost past the backend's cap, said after what was kept of it. */
export function capLine(stream: StreamName, notKept: number, kept: number): string {
  return `${notKept} bytes of ${stream} were not kept by the backend (its output cap: it keeps the first ${kept}); they are lost`;
}

/**
 * Prints both streams of the execution behind a receipt document, exactly when the
 * backend can tell; says on stderr what of them is missing, and returns it.
 */
export async function printExactOutput(ctx: Context, api: Api, doc: ReceiptDocument): Promise<OutputMissing> {
  const missing: OutputMissing = { stdout: 0, stderr: 0 };
  for (const stream of ["stdout", "stderr"] as const) {
    const text = doc[stream];
    const truncated = doc[`${stream}_truncated`];
    if (recordHoldsAll(text, truncated) || doc.execution_id === null) {
      if (text) writer(ctx, stream)(text);
      if (!recordHoldsAll(text, truncated)) {
        missing[stream] = null;
        sayIncomplete(ctx, `${stream} above is the record's text, not all of it byte for byte (no execution id)`);
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
      const lost = read.streamBytes === null ? null : Math.max(0, read.streamBytes - read.reached);
      if (written === 0 && read.notKept) {
        if (text) write(text);
        missing[stream] = null;
        sayIncomplete(ctx, `${stream} above is the record's text: the backend no longer keeps the full output`);
      } else if (read.notKept || !read.eof) {
        missing[stream] = lost === 0 ? null : lost;
        sayIncomplete(ctx, `${stream} past byte ${read.reached} was not kept by the backend (its output cap)`);
      } else if (lost !== null && lost > 0) {
        // The file ends at the cap: its end is not the stream's.
        missing[stream] = lost;
        sayIncomplete(ctx, capLine(stream, lost, read.reached));
      }
    } catch (err) {
      if (written === 0 && text) write(text);
      missing[stream] = null;
      sayIncomplete(
        ctx,
        `${stream} ${written === 0 ? "above is the record's text" : `stops at byte ${written}`}: the full output could not be read (${(err as Error).message})`,
      );
    }
  }
  return missing;
}

/**
 * What the backend lost of an execution's output (--json: nothing is printed but the
 * receipt): per stream, the bytes written past its cap; null when it cannot say.
 */
export async function outputNotKept(ctx: Context, api: Api, doc: ReceiptDocument): Promise<OutputMissing> {
  const missing: OutputMissing = { stdout: 0, stderr: 0 };
  for (const stream of ["stdout", "stderr"] as const) {
    // A stream whose tail is whole was kept whole.
    if (!doc[`${stream}_truncated`]) continue;
    if (doc.execution_id === null) {
      missing[stream] = null;
      continue;
    }
    try {
      const extent = await readOutputExtent(api, { sandbox: doc.sandbox_id, executionId: doc.execution_id }, stream);
      missing[stream] = extent === null ? null : extent.streamBytes - extent.keptBytes;
    } catch (err) {
      missing[stream] = null;
      ctx.io.verbose(`sbx: how much of ${stream} the backend kept could not be read (${(err as Error).message})`);
    }
  }
  return missing;
}
