// sbx process logs: read a process's output by logical offset, following with
// server long-polls across restarts and rotation until the end.

import { deliverPiece } from "../../../client/raw-read.js";
import { PROCESS_LOG_LIMIT_MAX, type ProcessStream } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { ExitWith, UsageError } from "../../../common/errors.js";
import { resolveProcess } from "./target.js";

export interface ProcessLogsOptions {
  ref: string;
  sandbox: string | undefined;
  stream: ProcessStream;
  offset: number;
  limit: number;
  follow: boolean;
  /** text: decode UTF-8 without splitting a character between reads; raw: bytes as they are. */
  view: "raw" | "text" | "json";
}

const FOLLOW_WAIT_MS = 30_000;
/** Base64 in JSON costs a third more per byte: JSON reads stay small. */
const JSON_READ_LIMIT = 1024 * 1024;
/** A raw read takes what the backend gives at once (a rotated segment's worth). */
const RAW_READ_LIMIT = PROCESS_LOG_LIMIT_MAX;

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
  const view = raw.json ? "json" : raw.text ? "text" : raw.raw ? "raw" : stdoutIsTTY ? "text" : "raw";
  return {
    ref,
    sandbox: raw.sandbox,
    stream: (raw.stream ?? "stdout") as ProcessStream,
    offset: Number(raw.offset ?? 0),
    limit: raw.limit ?? Number.POSITIVE_INFINITY,
    follow: raw.follow === true,
    view,
  };
}

export async function run(opts: ProcessLogsOptions, ctx: Context): Promise<number> {
  const t = await resolveProcess(ctx, opts.ref, opts.sandbox);
  const decoder = new TextDecoder("utf-8");
  let offset = opts.offset;
  let left = opts.limit;
  for (;;) {
    if (ctx.interrupt.aborted) throw new ExitWith(ExitCodes.cancelled);
    const read = {
      sandbox: t.sandbox,
      id: t.processId,
      stream: opts.stream,
      offset,
      limit: Math.min(opts.view === "json" ? JSON_READ_LIMIT : RAW_READ_LIMIT, left),
      waitMs: opts.follow ? FOLLOW_WAIT_MS : 0,
    };
    let next: number;
    let got: number;
    let eof: boolean;
    if (opts.view === "json") {
      const chunk = await t.api.readLogsFrom(read);
      sayRotated(ctx, offset, chunk.offset, chunk.rotated);
      ctx.io.out(
        JSON.stringify({
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
      sayRotated(ctx, offset, piece.offset, piece.rotated);
      got = await deliverPiece(piece, `logs of ${t.processId}`, (data) => {
        if (opts.view === "raw") return ctx.io.writeOutPaced(data);
        const text = decoder.decode(data, { stream: true });
        return text ? ctx.io.writeOutPaced(Buffer.from(text)) : undefined;
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
    if (rest) ctx.io.writeOut(rest);
  }
  if (opts.view !== "json") ctx.io.info(`sbx: next offset ${offset}`);
  return ExitCodes.ok;
}

function sayRotated(ctx: Context, asked: number, from: number, rotated: boolean): void {
  if (rotated && from > asked) {
    ctx.io.err(`sbx: ${from - asked} bytes (offsets ${asked}..${from}) were rotated away before they could be read`);
  }
}

/** Bound to `sbx process logs` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  run(parseProcessLogsOptions(c.args[0]!, c.optsWithGlobals(), ctx.io.stdoutIsTTY), ctx);
