// sbx exec: run argv (no shell) or a deliberate shell string in a sandbox, with a
// durable receipt written before the request is sent.

import type { Api } from "../../client/api.js";
import type { Endpoint } from "../../client/endpoint.js";
import type { FollowSinks } from "../../client/follow.js";
import { readOutputRange } from "../../client/output.js";
import type { ExecuteRequest } from "../../protocol/types.js";
import type { ReceiptDocument } from "../../receipts/document.js";
import { TIMEOUT_MAX_MS, TIMEOUT_MIN_MS, TTY_TIMEOUT_MAX_MS } from "../../protocol/types.js";
import { DEFAULT_DETACH_KEYS, parseDetachKeys } from "../../common/detach-keys.js";
import { resolveWorkingDir } from "../../protocol/validate.js";
import type { RunFn } from "../command.js";
import type { Context } from "../context.js";
import { egressDeniedNotice, egressDeniedNotices } from "../render/egress-denied.js";
import { dispatchNew } from "../dispatch.js";
import { durationOption, longerWorkHint } from "../duration.js";
import { UsageError } from "../../common/errors.js";
import { ExitCodes } from "../../common/exit-codes.js";
import {
  type OutputMissing,
  outputIsComplete,
  outputNotKept,
  printExactOutput,
  sayIncomplete,
} from "../exact-output.js";
import {
  chooseSandbox,
  commandFromFlags,
  envFromFlags,
  idempotencyKeyFromFlag,
  workingDirFromFlag,
} from "../command-flags.js";
import { answerNotRecorded, printDispatchOutcome, printJson } from "../render/outcome.js";
import { formatCommand } from "../render/receipt.js";
import { wholeSandboxRef } from "../id-prefix.js";

export interface ExecOptions {
  argv: string[];
  shell: string | undefined;
  sandbox: string;
  timeoutMs: number;
  clientTimeoutMs: number;
  cwd: string | undefined;
  env: Record<string, string>;
  sendStdin: boolean;
  idempotencyKey: string;
  /** Live output over SSE (the request carries stream: true). */
  stream: boolean;
  /** Return once started; the command keeps running. */
  detach: boolean;
  json: boolean;
  /** -t (with -i): on a terminal of the sandbox's, attached to this one. */
  tty: boolean;
  /** The detach sequence of a -t session. */
  detachKeys: Buffer;
  /** Exit 201 instead of 0 when what sbx printed is not all the command's output. */
  failOnTruncated: boolean;
}

interface RawExecFlags {
  sandbox?: string;
  timeout?: string;
  clientTimeout?: string;
  cwd?: string;
  env?: string[];
  envFile?: string;
  stdin?: boolean;
  idempotencyKey?: string;
  shell?: string;
  stream?: boolean;
  detach?: boolean;
  json?: boolean;
  interactive?: boolean;
  tty?: boolean;
  detachKeys?: string;
  failOnTruncated?: boolean;
}

/** Validates flags into options; everything here fails with exit 125 before dispatch. */
export function parseExecOptions(
  argv: string[],
  raw: RawExecFlags,
  defaults: { sandbox?: string; timeout?: string; detachKeys?: string },
): ExecOptions {
  commandFromFlags(argv, raw.shell, "usage: sbx exec [options] -- COMMAND [ARGS...]  or  sbx exec --shell 'STRING'");
  const tty = raw.tty === true;
  if (tty) checkTerminalFlags(raw);
  // A terminal session lasts until its program ends (a day at most); the setting is for commands.
  const timeoutText = raw.timeout ?? (tty ? "24h" : (defaults.timeout ?? "2m"));
  const timeoutMs = durationOption("--timeout", timeoutText, {
    min: TIMEOUT_MIN_MS,
    max: tty ? TTY_TIMEOUT_MAX_MS : TIMEOUT_MAX_MS,
    ...(!tty && { overMax: (ms: number) => longerWorkHint(timeoutText, ms) }),
  });
  if (raw.stream === true && raw.detach === true) {
    throw new UsageError(
      "--stream and --detach cannot be used together: --detach returns once the command has started",
      "follow a detached command's output with `sbx logs EXE -f`, or drop --detach to stream it",
    );
  }
  const clientTimeoutMs =
    raw.clientTimeout === undefined ? timeoutMs + 30_000 : durationOption("--client-timeout", raw.clientTimeout);
  const sandbox = chooseSandbox(raw.sandbox, defaults.sandbox);
  workingDirFromFlag(raw.cwd);
  const env = envFromFlags(raw.env, raw.envFile);
  const key = idempotencyKeyFromFlag(raw.idempotencyKey);
  return {
    argv,
    shell: raw.shell,
    sandbox,
    timeoutMs,
    clientTimeoutMs,
    cwd: raw.cwd,
    env,
    // -i alone sends stdin (one-shot), as --stdin; with -t, keys are typed at the terminal.
    sendStdin: raw.stdin === true || (raw.interactive === true && !tty),
    idempotencyKey: key,
    stream: raw.stream === true,
    detach: raw.detach === true,
    json: raw.json === true,
    tty,
    detachKeys: detachKeysOption(raw.detachKeys ?? defaults.detachKeys),
    failOnTruncated: raw.failOnTruncated === true,
  };
}

/** What -t cannot be used with, said before anything is sent. */
function checkTerminalFlags(raw: RawExecFlags): void {
  if (raw.interactive !== true) {
    throw new UsageError("-t needs -i: a terminal is for typing at", "sbx exec -it -- COMMAND");
  }
  for (const [flag, set] of [
    ["--stream", raw.stream],
    ["--detach", raw.detach],
    ["--stdin", raw.stdin],
    ["--json", raw.json],
  ] as const) {
    if (set === true) {
      throw new UsageError(
        `-t cannot be used with ${flag}: a terminal session is shown as it happens`,
        "detach from a session with the detach keys (Ctrl-P Ctrl-Q), or drop -t",
      );
    }
  }
}

/** The request body, serialized once: these exact bytes are stored and sent. */
export function executeBody(
  opts: ExecOptions,
  stdin: Buffer | null,
  terminal?: { cols: number; rows: number },
): Buffer {
  const req: ExecuteRequest = {
    command: opts.shell ?? opts.argv,
    ...(opts.cwd === undefined ? {} : { working_dir: resolveWorkingDir(opts.cwd)! }),
    ...(Object.keys(opts.env).length ? { env: opts.env } : {}),
    // A terminal's execution is followed until it started, then attached to.
    stream: opts.stream || opts.detach || terminal !== undefined,
    timeout: opts.timeoutMs,
    ...(stdin === null ? {} : { stdin: stdin.toString("base64") }),
    ...(terminal === undefined ? {} : { tty: terminal }),
  };
  return Buffer.from(JSON.stringify(req));
}

export async function run(opts: ExecOptions, ctx: Context): Promise<number> {
  if (opts.tty) {
    const { runOnTerminal } = await import("./exec-terminal.js");
    return runOnTerminal(opts, ctx);
  }
  const stdin = opts.sendStdin ? await ctx.io.readStdin() : null;
  const endpoint = ctx.endpoint();
  const api = await ctx.api(endpoint);
  const live = opts.stream && !opts.json && !opts.detach;
  // What of the output is not printed (live: counted as the stream goes).
  const liveMissing: OutputMissing = { stdout: 0, stderr: 0 };
  // What was shown live past the backend's cap: in no record or replay.
  const liveOnly = new LiveOnly();
  // `sbx exec --stream … | head -1`: once stdout has no reader, following stops at once.
  const readerGone = new AbortController();
  if (live) ctx.io.onStdoutGone(() => readerGone.abort());
  const body = executeBody(opts, stdin);
  // A spinner while the answer is awaited; stopped before anything is printed.
  const waiting = live
    ? undefined
    : ctx.io.progress(`running ${spinnerLabel(opts)} in ${opts.sandbox}…`, { elapsed: true });
  const outcome = await dispatchNew(
    ctx,
    endpoint,
    api,
    {
      kind: "execute",
      sandbox: opts.sandbox,
      body,
      key: opts.idempotencyKey,
      clientTimeoutMs: opts.clientTimeoutMs,
    },
    {
      detach: opts.detach,
      ...(live ? { sinks: liveSinks(ctx, api, opts.sandbox, liveMissing, readerGone.signal, liveOnly) } : {}),
      ...(live ? { readerGone: readerGone.signal } : {}),
      ...(endpoint.autoStart ? { revive: () => reviveLocalDaemon(ctx, endpoint) } : {}),
      beforeSend: (receiptId, path) => {
        ctx.io.verbose(`sbx: receipt ${receiptId} committed; idempotency key ${opts.idempotencyKey}`);
        ctx.io.verbose(
          `sbx: POST ${path} (${body.length} bytes) to ${endpoint.apiUrl}${endpoint.profile === null ? "" : `, profile ${endpoint.profile}`}`,
        );
      },
    },
  ).finally(() => waiting?.stop());
  const doc = outcome.document;
  // Detached only when the stream said `started` (not, say, a 409 request_in_progress).
  if (opts.detach && doc.classification === "running" && doc.execution_id !== null && outcome.unrecorded === null) {
    if (opts.json) printJson(ctx, doc);
    else {
      ctx.io.out(`${doc.receipt_id}\t${doc.execution_id}`);
      ctx.io.info(
        `sbx: started; it keeps running. Follow it: sbx logs ${doc.execution_id} -f; result: sbx receipts wait ${doc.receipt_id}`,
      );
    }
    return ExitCodes.ok;
  }
  if (readerGone.signal.aborted) return stdoutClosed(ctx, doc, outcome.unrecorded);
  const missing = opts.json
    ? await outputNotKept(ctx, api, doc)
    : live
      ? liveMissing
      : await printExactOutput(ctx, api, doc);
  if (live) {
    liveOnly.say(ctx);
    sayLiveIncomplete(ctx, liveMissing);
  } else if (!opts.json && doc.egress_denied !== null) {
    // Not followed live: the refusals its record kept, said once it ended (docs/network.md, "Evidence").
    for (const notice of egressDeniedNotices(doc.egress_denied)) ctx.io.err(notice);
  }
  const code = printDispatchOutcome(ctx, doc, opts.json, {
    outputShown: !opts.json,
    ...(opts.json && { jsonExtra: { output_complete: outputIsComplete(missing), output_not_kept_bytes: missing } }),
  });
  if (outcome.unrecorded) throw answerNotRecorded(ctx, outcome.unrecorded, doc, opts.json);
  // --fail-on-truncated: a success whose output is not all there is not one for a script.
  if (opts.failOnTruncated && code === ExitCodes.ok && !outputIsComplete(missing)) {
    ctx.io.err(
      `sbx: exit ${ExitCodes.outputIncomplete} (--fail-on-truncated): the command succeeded, but its output is incomplete`,
    );
    return ExitCodes.outputIncomplete;
  }
  return code;
}

/**
 * sbx's stdout lost its reader while the output was followed (`| head -1`): following
 * stopped at once and the command was left running. Exits as a process killed by
 * SIGPIPE would (141), never 0: not all of the output was delivered.
 */
function stdoutClosed(ctx: Context, doc: ReceiptDocument, unrecorded: Error | null): number {
  const eid = doc.execution_id ?? doc.receipt_id;
  if (doc.classification === "running") {
    ctx.io.err(
      `sbx: stdout was closed; stopped following. ${eid} keeps running. Follow it: sbx logs ${eid} -f; result: sbx receipts wait ${doc.receipt_id}`,
    );
  } else {
    ctx.io.err(
      `sbx: stdout was closed before all of the output was written; ${eid} is ${doc.classification}${doc.exit === null ? "" : ` (exit ${doc.exit})`}: sbx receipts show ${doc.receipt_id}`,
    );
  }
  if (unrecorded) ctx.io.err(`sbx: the answer could not be recorded (${unrecorded.message})`);
  return ExitCodes.stdoutClosed;
}

/** Bytes shown live past the backend's output cap, per stream: from which offset, how many. */
class LiveOnly {
  private readonly seen: Record<"stdout" | "stderr", { from: number; bytes: number } | null> = {
    stdout: null,
    stderr: null,
  };

  notKept(stream: "stdout" | "stderr", offset: number, bytes: number): void {
    const was = this.seen[stream];
    this.seen[stream] = { from: Math.min(was?.from ?? offset, offset), bytes: (was?.bytes ?? 0) + bytes };
  }

  /** After the stream: shown, but not kept (a replay or `sbx logs` will not have it). */
  say(ctx: Context): void {
    for (const stream of ["stdout", "stderr"] as const) {
      const s = this.seen[stream];
      if (s === null) continue;
      ctx.io.info(
        `sbx: ${s.bytes} bytes of ${stream} past byte ${s.from} were shown live but not kept by the backend (its output cap): no replay or record has them`,
      );
    }
  }
}

/** After a live stream, once more at its end: what of it was not shown. */
function sayLiveIncomplete(ctx: Context, missing: OutputMissing): void {
  for (const stream of ["stdout", "stderr"] as const) {
    const n = missing[stream];
    if (n === 0) continue;
    sayIncomplete(
      ctx,
      n === null
        ? `some of ${stream} could not be shown (said above)`
        : `${n} bytes of ${stream} were not shown (said above where)`,
    );
  }
}

/** The local daemon is gone while a stream is followed: start it again (its recovery ends the execution's log). */
async function reviveLocalDaemon(ctx: Context, endpoint: Endpoint): Promise<boolean> {
  const { ensureLocalDaemon } = await import("../daemon-launcher.js");
  ctx.io.info("sbx: the local backend is gone; starting it again to learn what became of the execution…");
  await ensureLocalDaemon(ctx, endpoint);
  return true;
}

/** The command's output on sbx's stdout/stderr as it arrives; what events leave out is read by offset. */
function liveSinks(
  ctx: Context,
  api: Api,
  sandbox: string,
  missing: OutputMissing,
  readerGone: AbortSignal,
  shown: LiveOnly,
): FollowSinks {
  let executionId: string | null = null;
  const write = (stream: "stdout" | "stderr", bytes: Buffer) =>
    stream === "stdout" ? ctx.io.writeOut(bytes) : ctx.io.writeErr(bytes);
  return {
    onStarted: (eid) => {
      executionId = eid;
    },
    onEgressDenied: (d) => ctx.io.err(egressDeniedNotice(d)),
    onOutput: (stream, bytes, liveOnly) => {
      write(stream, bytes);
      if (liveOnly) shown.notKept(stream, liveOnly.offset, bytes.length);
    },
    onGap: async (stream, offset, bytes, kept, fill) => {
      const notShown = (n: number | null) => {
        const was = missing[stream];
        missing[stream] = was === null || n === null ? null : was + n;
      };
      if (readerGone.aborted) return; // no one reads on: no reason to fetch
      if (!kept || executionId === null) {
        notShown(bytes);
        ctx.io.err(
          `sbx: ${bytes} bytes of ${stream} at offset ${offset} were not kept by the backend (its output cap)`,
        );
        return;
      }
      let reached = offset;
      try {
        const read = await readOutputRange(api, { sandbox, executionId }, stream, offset, offset + bytes, (b) => {
          fill(b);
          return stream === "stdout" ? ctx.io.writeOutPaced(b) : ctx.io.writeErrPaced(b);
        });
        reached = read.reached;
      } catch (err) {
        ctx.io.err(`sbx: could not read ${stream} past byte ${offset} (${(err as Error).message})`);
      }
      if (reached < offset + bytes) {
        notShown(offset + bytes - reached);
        ctx.io.err(
          `sbx: ${offset + bytes - reached} bytes of ${stream} at offset ${reached} were not kept by the backend`,
        );
      }
    },
    onReconnect: (attempt, lastId) =>
      ctx.io.info(`sbx: stream dropped; reconnecting (attempt ${attempt}, after event ${lastId ?? "none"})`),
  };
}

/** The command, shortened to fit a spinner line. */
function spinnerLabel(opts: ExecOptions): string {
  const text = formatCommand(opts.shell ?? opts.argv);
  return text.length > 48 ? `${text.slice(0, 47)}…` : text;
}

/** Bound to `sbx exec` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const settings = ctx.config.read().settings;
  const opts = parseExecOptions(c.args, c.optsWithGlobals() as RawExecFlags, {
    ...(settings.sandbox === undefined ? {} : { sandbox: settings.sandbox }),
    ...(settings.timeout === undefined ? {} : { timeout: settings.timeout }),
    ...(settings.detach_keys === undefined ? {} : { detachKeys: settings.detach_keys }),
  });
  // -s sbx_4k2m (a prefix of a sandbox id) is made whole before the receipt records it.
  return run({ ...opts, sandbox: await wholeSandboxRef(ctx, opts.sandbox) }, ctx);
};

/** --detach-keys (or the detach_keys setting) as bytes; 125 when it is not a key sequence. */
export function detachKeysOption(spec: string | undefined): Buffer {
  const parsed = parseDetachKeys(spec ?? DEFAULT_DETACH_KEYS);
  if ("problem" in parsed) throw new UsageError(`--detach-keys: ${parsed.problem}`);
  return parsed.bytes;
}
