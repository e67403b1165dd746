// sbx logs: replay an execution's output from its event log; follow it with -f.

import {
  createEventHandler,
  type FollowSinks,
  followExecution,
  OutputTail,
  type StreamName,
} from "../../client/follow.js";
import { readOutputRange } from "../../client/output.js";
import type { SseEvent } from "../../client/sse.js";
import type { RunFn } from "../command.js";
import type { Context } from "../context.js";
import { egressDeniedNotice } from "../render/egress-denied.js";
import { BackendError, ExitWith, UsageError } from "../../common/errors.js";
import { ExitCodes } from "../../common/exit-codes.js";
import { type ExecutionTarget, resolveExecution } from "../execution-ref.js";

export interface LogsOptions {
  ref: string;
  sandbox: string | undefined;
  follow: boolean;
  after: number;
  json: boolean;
}

const PAGE = 500;

export function parseLogsOptions(
  ref: string,
  raw: { sandbox?: string; follow?: boolean; after?: string; json?: boolean },
): LogsOptions {
  if (raw.after !== undefined && !/^\d+$/.test(raw.after))
    throw new UsageError("--after takes an event id (a whole number)");
  return {
    ref,
    sandbox: raw.sandbox,
    follow: raw.follow === true,
    after: Number(raw.after ?? 0),
    json: raw.json === true,
  };
}

/** Reads bytes that were not put into events, from the execution's full output. */
async function fillGap(
  ctx: Context,
  t: ExecutionTarget,
  stream: StreamName,
  offset: number,
  bytes: number,
): Promise<void> {
  const end = offset + bytes;
  const write = (data: Buffer) => (stream === "stdout" ? ctx.io.writeOutPaced(data) : ctx.io.writeErrPaced(data));
  const read = await readOutputRange(t.api, t, stream, offset, end, write);
  if (read.reached < end) {
    ctx.io.err(`sbx: ${end - read.reached} bytes of ${stream} at offset ${read.reached} are no longer available`);
  }
}

/**
 * The replay of a finished execution that wrote to stdout only (the common case of a
 * large output): its full output read raw, straight to stdout, at the speed of the
 * disk. A raw read of stderr from 0 says first, from its headers alone, that stderr is
 * empty and the execution over (Sbx-Eof) — cheaper than its record, which carries
 * both tails. Anything else (stderr written: the event log keeps the two streams'
 * order; still running; full output not kept) returns false: the event log replays it.
 */
async function replayFullOutput(ctx: Context, t: ExecutionTarget): Promise<boolean> {
  const probe = await readOutputRange(t.api, t, "stderr", 0, 1, () => undefined).catch(() => null);
  // Refusals by the egress policy are events: the event log replays them in order with the output.
  if (probe === null || !probe.eof || probe.reached !== 0 || (probe.egressDenied ?? 0) > 0) return false;
  let written = 0;
  const read = await readOutputRange(t.api, t, "stdout", 0, null, (data) => {
    written += data.length;
    return ctx.io.writeOutPaced(data);
  });
  if (written === 0 && read.notKept) return false;
  // Past the backend's cap the command's bytes were counted, not kept: say so, as the event log would.
  const total = read.streamBytes ?? read.reached;
  if (total > read.reached) {
    ctx.io.err(
      `sbx: ${total - read.reached} bytes of stdout at offset ${read.reached} were not kept by the backend (output cap)`,
    );
  }
  return true;
}

export async function run(opts: LogsOptions, ctx: Context): Promise<number> {
  const t = await resolveExecution(ctx, opts.ref, opts.sandbox);
  const sinks: FollowSinks = opts.json
    ? { onEvent: (ev) => ctx.io.out(JSON.stringify({ id: ev.id, type: ev.type, data: JSON.parse(ev.data) })) }
    : {
        onOutput: (stream, bytes) => (stream === "stdout" ? ctx.io.writeOut(bytes) : ctx.io.writeErr(bytes)),
        onEgressDenied: (d) => ctx.io.err(egressDeniedNotice(d)),
        onGap: (stream, offset, bytes, kept) =>
          kept
            ? fillGap(ctx, t, stream, offset, bytes)
            : ctx.io.err(
                `sbx: ${bytes} bytes of ${stream} at offset ${offset} were not kept by the backend (output cap)`,
              ),
      };
  if (opts.follow) {
    const followed = await followExecution({
      http: t.api.http,
      sandbox: t.sandbox,
      executionId: t.executionId,
      idempotencyKey: null,
      first: null,
      after: opts.after > 0 ? opts.after : null,
      deadlineAt: Number.POSITIVE_INFINITY,
      signal: ctx.interrupt,
      sinks: { ...sinks, onReconnect: (n) => n > 1 && ctx.io.info(`sbx: reconnecting (attempt ${n})…`) },
    });
    if (followed.how === "interrupted") throw new ExitWith(ExitCodes.cancelled);
    if (followed.how === "refused") {
      throw new BackendError("stream_refused", `cannot follow ${t.executionId}: ${followed.lastProblem}`, 404);
    }
    if (followed.endState?.state === "incomplete") {
      ctx.io.err(`sbx: the event log is incomplete (${followed.endState.reason ?? "no reason given"})`);
    }
    return ExitCodes.ok;
  }
  if (!opts.json && opts.after === 0 && (await replayFullOutput(ctx, t))) return ExitCodes.ok;
  // A replay of what exists now, page by page.
  const state = {
    executionId: t.executionId,
    exit: null,
    endState: null,
    stdout: new OutputTail(0),
    stderr: new OutputTail(0),
  };
  const handle = createEventHandler(state, sinks, false);
  let after = opts.after;
  for (;;) {
    const page = await t.api.listEvents(t.sandbox, t.executionId, after, PAGE);
    for (const e of page.events) {
      const ev: SseEvent = { id: e.sequence, type: e.type, data: JSON.stringify(e.data) };
      await handle(ev);
      after = e.sequence;
    }
    if (!page.has_more || page.events.length === 0) break;
  }
  return ExitCodes.ok;
}

/** Bound to `sbx logs` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseLogsOptions(c.args[0]!, c.optsWithGlobals()), ctx);
