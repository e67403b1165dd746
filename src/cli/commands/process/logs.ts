// sbx process logs: read a process's output by logical offset, following with
// server long-polls across restarts and rotation until the end.

import { deliverPiece } from "../../../client/raw-read.js";
import { PROCESS_LOG_RAW_LIMIT_MAX, type ProcessStream } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { ExitWith, UsageError } from "../../../common/errors.js";
import { resolveProcess } from "./target.js";

export interface ProcessLogsOptions {
  ref: string;
  sandbox: string | undefined;
  /** The streams to read: both by default (stdout to stdout, stderr to stderr), or the one asked for. */
  streams: ProcessStream[];
  offset: number;
  limit: number;
  follow: boolean;
  /** text: decode UTF-8 without splitting a character between reads; raw: bytes as they are. */
  view: "raw" | "text" | "json";
}

const FOLLOW_WAIT_MS = 30_000;
/** Base64 in JSON costs a third more per byte: JSON reads stay small. */
const JSON_READ_LIMIT = 1024 * 1024;
/**
 * A raw read asks for everything a process keeps (its whole kept window): catching up
 * with a long log is one read streamed from the backend's files, not one per segment.
 */
const RAW_READ_LIMIT = PROCESS_LOG_RAW_LIMIT_MAX;

export function parseProcessLogsOptions(
  ref: string,
  raw: {
    sandbox?: string;
    stream?: string;
    offset?: string;
    limit?: number;
    follow?: boolean;
    text?: boolean;
    raw?: boolean;
    json?: boolean;
  },
  stdoutIsTTY: boolean,
): ProcessLogsOptions {
  if (raw.offset !== undefined && !/^\d+$/.test(raw.offset))
    throw new UsageError("--offset takes a byte offset (a whole number)");
  if (raw.text && raw.raw) throw new UsageError("--text and --raw exclude each other");
  if (raw.stream === undefined && (raw.offset !== undefined || raw.limit !== undefined)) {
    throw new UsageError("--offset and --limit are offsets of one stream: add --stream stdout or --stream stderr");
  }
  const view = raw.json ? "json" : raw.text ? "text" : raw.raw ? "raw" : stdoutIsTTY ? "text" : "raw";
  return {
    ref,
    sandbox: raw.sandbox,
    streams: raw.stream === undefined ? ["stdout", "stderr"] : [raw.stream as ProcessStream],
    offset: Number(raw.offset ?? 0),
    limit: raw.limit ?? Number.POSITIVE_INFINITY,
    follow: raw.follow === true,
    view,
  };
}

export async function run(opts: ProcessLogsOptions, ctx: Context): Promise<number> {
  const t = await resolveProcess(ctx, opts.ref, opts.sandbox);
  // Both streams are read side by side, each to its own side of sbx (as docker logs does).
  const ends = await Promise.all(opts.streams.map((stream) => readStream(t, stream, opts, ctx)));
  // Where to read on from, for whoever asks (--verbose); --json lines carry it anyway.
  if (opts.view !== "json") {
    ctx.io.verbose(
      `sbx: next offset ${opts.streams.map((s, i) => (ends.length > 1 ? `${s} ${ends[i]}` : `${ends[i]}`)).join(", ")}`,
    );
  }
  return ExitCodes.ok;
}

/** Reads one stream from its offset to its end (following with -f); returns the next offset. */
async function readStream(
  t: Awaited<ReturnType<typeof resolveProcess>>,
  stream: ProcessStream,
  opts: ProcessLogsOptions,
  ctx: Context,
): Promise<number> {
  const decoder = new TextDecoder("utf-8");
  // stderr of the process goes to sbx's stderr; on a terminal it is marked (red) as it is by docker and kubectl users' tools.
  const toStderr = stream === "stderr" && opts.streams.length > 1;
  const mark = toStderr && opts.view === "text" && ctx.io.stderrIsTTY;
  const write = (bytes: Uint8Array) =>
    toStderr
      ? ctx.io.writeErrPaced(mark ? Buffer.from(ctx.io.errChalk.red(Buffer.from(bytes).toString("utf8"))) : bytes)
      : ctx.io.writeOutPaced(bytes);
  let offset = opts.offset;
  let left = opts.limit;
  for (;;) {
    if (ctx.interrupt.aborted) throw new ExitWith(ExitCodes.cancelled);
    const read = {
      sandbox: t.sandbox,
      id: t.processId,
      stream,
      offset,
      limit: Math.min(opts.view === "json" ? JSON_READ_LIMIT : RAW_READ_LIMIT, left),
      waitMs: opts.follow ? FOLLOW_WAIT_MS : 0,
    };
    let next: number;
    let got: number;
    let eof: boolean;
    if (opts.view === "json") {
      const chunk = await t.api.readLogsFrom(read);
      sayRotated(ctx, stream, offset, chunk.offset, chunk.rotated);
      ctx.io.out(
        JSON.stringify({
          stream,
          offset: chunk.offset,
          next_offset: chunk.next_offset,
          data: chunk.data,
          eof: chunk.eof,
          rotated: chunk.rotated,
          oldest_offset: chunk.oldest_offset,
          generation: chunk.generation,
        }),
      );
      got = chunk.next_offset - chunk.offset;
      next = chunk.next_offset;
      eof = chunk.eof;
    } else {
      // Raw bytes, written on as they arrive (with back-pressure), never base64.
      const piece = await t.api.openLogs(read);
      sayRotated(ctx, stream, offset, piece.offset, piece.rotated);
      got = await deliverPiece(piece, `logs of ${t.processId}`, (data) => {
        if (opts.view === "raw") return write(data);
        const text = decoder.decode(data, { stream: true });
        return text ? write(Buffer.from(text)) : undefined;
      });
      next = piece.nextOffset;
      eof = piece.eof;
    }
    left -= got;
    offset = next;
    if (eof || left <= 0) break;
    if (!opts.follow && got === 0) break; // caught up
  }
  if (opts.view === "text") {
    const rest = decoder.decode();
    if (rest) await write(Buffer.from(rest));
  }
  return offset;
}

function sayRotated(ctx: Context, stream: ProcessStream, asked: number, from: number, rotated: boolean): void {
  if (rotated && from > asked) {
    ctx.io.err(
      `sbx: ${from - asked} bytes of ${stream} (offsets ${asked}..${from}) were rotated away before they could be read`,
    );
  }
}

/** Bound to `sbx process logs` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  run(parseProcessLogsOptions(c.args[0]!, c.optsWithGlobals(), ctx.io.stdoutIsTTY), ctx);
