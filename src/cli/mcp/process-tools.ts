// run_process / continue_process / stop_process: the contract's supervised processes
// for a model. A start is a receipt (as `sbx process start`); a still-running process
// comes back as `running` with a handle and output cursors, never as a success.

import { type Static, Type } from "@sinclair/typebox";
import { ProcessesApi } from "../../client/processes.js";
import { UsageError } from "../../common/errors.js";
import { PROCESS_LOG_WAIT_MAX_MS, type ProcessResult, type ProcessStartRequest } from "../../protocol/types.js";
import { isValidName } from "../../protocol/validate.js";
import { dispatchNew } from "../dispatch.js";
import { CommandArgs, commandOf, cwdOf, sandboxOf } from "./command-tools.js";
import { ReceiptIdsField, receipted } from "./evidence.js";
import { ReceiptFields, receiptFields, unrecordedText, unsettledText } from "./outcome.js";
import { defineTool, IdempotencyKeyArg, Nullable, type ToolCall, toolKey, receiptTag } from "./tool.js";

const DEFAULT_YIELD_MS = 1_000;

const YieldArg = Type.Optional(
  Type.Integer({
    minimum: 0,
    maximum: PROCESS_LOG_WAIT_MAX_MS,
    description: `How long to wait for it to end before returning (default ${DEFAULT_YIELD_MS}). Still running then: status running, with the handle and cursors.`,
  }),
);

const HandleArg = Type.String({ minLength: 1, description: "The process id (prc_…) run_process returned as handle." });

/** What a process result says: where it is and its output from the cursors. */
const ProcessState = {
  handle: Type.String({ description: "The process id: give it to continue_process / stop_process." }),
  status: Type.String({
    description:
      "running (it has not ended: nothing is known of its exit yet), or exited (outcome and exit_code say how), or outcome_unknown / not_run (see next_tool_call).",
  }),
  outcome: Nullable(
    Type.String({ description: "succeeded, failed, timed_out, cancelled, unknown; null while running." }),
  ),
  exit_code: Nullable(Type.Integer()),
  signal: Nullable(Type.String()),
  stdout: Type.String(),
  stderr: Type.String(),
  stdout_cursor: Type.Integer({ minimum: 0, description: "Pass back to continue_process to read on from here." }),
  stderr_cursor: Type.Integer({ minimum: 0 }),
  stdout_unread_bytes: Type.Integer({
    minimum: 0,
    description: "Bytes already written past the cursor, not in this result.",
  }),
  stderr_unread_bytes: Type.Integer({ minimum: 0 }),
  output_encoding: Type.String({ description: "utf8, or base64 when the output read is not text." }),
};

export const ProcessOutput = Type.Object(ProcessState);

/** Reads where the process is (waiting up to `yieldMs` for its end) and its output from the cursors. */
async function processState(
  call: ToolCall,
  sandbox: string,
  id: string,
  cursors: { stdout: number; stderr: number },
  yieldMs: number,
): Promise<Static<typeof ProcessOutput>> {
  const api = new ProcessesApi((await call.api()).http);
  // The client's cancel stops the wait only: the process is read again as it is now.
  const waited = call.ctx.interrupt;
  const result: ProcessResult =
    yieldMs > 0 && !waited.aborted
      ? await api.result(sandbox, id, yieldMs, waited).catch(async (err: unknown) => {
          if (!waited.aborted) throw err;
          return api.result(sandbox, id, 0);
        })
      : await api.result(sandbox, id, 0);
  const half = Math.max(1, Math.floor(call.settings.maxOutputBytes / 2));
  const read = (stream: "stdout" | "stderr") =>
    api.readLogsFrom({ sandbox, id: result.process_id, stream, offset: cursors[stream], limit: half, waitMs: 0 });
  const [out, err] = await Promise.all([read("stdout"), read("stderr")]);
  const bytes = [Buffer.from(out.data, "base64"), Buffer.from(err.data, "base64")] as const;
  const text = bytes.every((b) => Buffer.from(b.toString("utf8"), "utf8").equals(b));
  const show = (b: Buffer) => (text ? b.toString("utf8") : b.toString("base64"));
  return {
    handle: result.process_id,
    status: result.complete ? "exited" : "running",
    outcome: result.complete ? result.outcome : null,
    exit_code: result.exit_code,
    signal: result.signal,
    stdout: show(bytes[0]),
    stderr: show(bytes[1]),
    stdout_cursor: out.next_offset,
    stderr_cursor: err.next_offset,
    stdout_unread_bytes: Math.max(0, result.output_capture.stdout.bytes - out.next_offset),
    stderr_unread_bytes: Math.max(0, result.output_capture.stderr.bytes - err.next_offset),
    output_encoding: text ? "utf8" : "base64",
  };
}

function stateText(s: Static<typeof ProcessOutput>): string {
  const head =
    s.status === "running"
      ? `${s.handle} is running (not finished: call continue_process to read on or wait)`
      : `${s.handle} exited: ${s.outcome}${s.exit_code === null ? "" : ` (exit ${s.exit_code})`}${s.signal ? ` ${s.signal}` : ""}`;
  const more = (n: number, stream: string) => (n > 0 ? ` (${n} more ${stream} bytes past the cursor)` : "");
  return [
    head,
    s.stdout === "" ? "" : `--- stdout${more(s.stdout_unread_bytes, "stdout")} ---\n${s.stdout}`,
    s.stderr === "" ? "" : `--- stderr${more(s.stderr_unread_bytes, "stderr")} ---\n${s.stderr}`,
  ]
    .filter((l) => l !== "")
    .join("\n");
}

const RunProcessInput = Type.Object(
  {
    ...CommandArgs,
    name: Type.Optional(Type.String({ description: "A name to find it by (unique in its sandbox)." })),
    stdin: Type.Optional(
      Type.String({ description: "Text given to its stdin once it started, then closed (unless stdin_open)." }),
    ),
    stdin_open: Type.Optional(
      Type.Boolean({
        description:
          "Keep a stdin pipe open for continue_process's `write` (default: no stdin, or only `stdin`'s text, then closed).",
      }),
    ),
    tty: Type.Optional(
      Type.Union(
        [
          Type.Boolean(),
          Type.Object(
            {
              cols: Type.Integer({ minimum: 1, maximum: 1000 }),
              rows: Type.Integer({ minimum: 1, maximum: 1000 }),
            },
            { additionalProperties: false },
          ),
        ],
        {
          description:
            "Run it on a terminal of its own (true: 80x24, or {cols, rows}) for a program that needs one (a REPL, a prompt, colour): " +
            "its stdout is the terminal's transcript (stderr is empty), and continue_process's `write` is typed at it.",
        },
      ),
    ),
    timeout_ms: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 86_400_000,
        description: "The kill deadline of its whole life; default none.",
      }),
    ),
    yield_ms: YieldArg,
    idempotency_key: IdempotencyKeyArg,
  },
  { additionalProperties: false },
);

/** The terminal a run_process `tty` asks for (true: the classic 80x24), or none. */
function terminalOf(tty: Static<typeof RunProcessInput>["tty"]): { cols: number; rows: number } | undefined {
  if (tty === undefined || tty === false) return undefined;
  return tty === true ? { cols: 80, rows: 24 } : tty;
}

export const runProcess = defineTool({
  name: "run_process",
  title: "Start a process",
  description:
    "Starts a supervised process in a sandbox (a server, a watcher, a long build), waits up to yield_ms for it to end, and returns. " +
    "status `running` means it has NOT finished and nothing is known of its result: read on with continue_process (handle and cursors), stop it with stop_process. " +
    "A durable receipt is written before the start is sent; after a lost answer (status outcome_unknown) do not start it again with a new key: call receipt_show with refresh, or retry with the same idempotency_key.",
  input: RunProcessInput,
  output: Type.Object({ ...ReceiptFields, ...ProcessState, handle: Nullable(Type.String()) }),
  mutating: true,
  async run(args: Static<typeof RunProcessInput>, call) {
    const sandbox = sandboxOf(args, call);
    if (args.name !== undefined && !isValidName(args.name)) {
      throw new UsageError(`name ${JSON.stringify(args.name)}: letters, digits, _ . - (at most 63)`);
    }
    const cwd = cwdOf(args.cwd);
    const tty = terminalOf(args.tty);
    const body: ProcessStartRequest = {
      command: commandOf(args),
      ...(cwd === undefined ? {} : { working_dir: cwd }),
      ...(args.env === undefined || Object.keys(args.env).length === 0 ? {} : { env: args.env }),
      ...(args.name === undefined ? {} : { name: args.name }),
      stdin: args.stdin_open === true || args.stdin !== undefined,
      timeout_ms: args.timeout_ms ?? null,
      restart: { policy: "never" },
      ...(tty === undefined ? {} : { tty }),
    };
    const key = toolKey("run_process", args.idempotency_key);
    const outcome = await dispatchNew(call.ctx, call.endpoint, await call.api(), {
      kind: "process_start",
      sandbox,
      body: Buffer.from(JSON.stringify(body)),
      key,
      clientTimeoutMs: 30_000,
      mcp: receiptTag(call),
    });
    const doc = outcome.document;
    const receipt = receiptFields(outcome);
    if (doc.classification !== "succeeded" || doc.process_id === null) {
      const structured = {
        ...receipt,
        handle: doc.process_id,
        status:
          doc.classification === "rejected" || doc.classification === "not_started" ? "not_run" : "outcome_unknown",
        outcome: null,
        exit_code: null,
        signal: null,
        stdout: "",
        stderr: "",
        stdout_cursor: 0,
        stderr_cursor: 0,
        stdout_unread_bytes: 0,
        stderr_unread_bytes: 0,
        output_encoding: "utf8",
      };
      return { structured, text: unsettledText(doc) + unrecordedText(outcome), isError: true };
    }
    if (args.stdin !== undefined) {
      // One shot: the text, then (unless stdin_open keeps it open) the end of its stdin; a receipt of its own.
      const api = new ProcessesApi(receipted(call, sandbox, (await call.api()).http));
      const bytes = Buffer.from(args.stdin, "utf8");
      await api.writeStdin(sandbox, doc.process_id, bytes, args.stdin_open !== true, toolKey("stdin", undefined));
    }
    const state = await processState(call, sandbox, doc.process_id, { stdout: 0, stderr: 0 }, yieldOf(args.yield_ms));
    return {
      structured: { ...receipt, ...state },
      text: `${stateText(state)}\nreceipt ${doc.receipt_id}${unrecordedText(outcome)}`,
    };
  },
});

function yieldOf(ms: number | undefined): number {
  return ms ?? DEFAULT_YIELD_MS;
}

const SIGNALS = { interrupt: "INT", terminate: "TERM", kill: "KILL" } as const;

const ContinueInput = Type.Object(
  {
    handle: HandleArg,
    sandbox: CommandArgs.sandbox,
    stdout_cursor: Type.Optional(Type.Integer({ minimum: 0, description: "Read stdout from here (default 0)." })),
    stderr_cursor: Type.Optional(Type.Integer({ minimum: 0, description: "Read stderr from here (default 0)." })),
    write: Type.Optional(
      Type.String({ description: "Text to write to its stdin first (it was started with stdin_open)." }),
    ),
    eof: Type.Optional(Type.Boolean({ description: "Close its stdin after `write`." })),
    signal: Type.Optional(
      Type.Union([Type.Literal("interrupt"), Type.Literal("terminate"), Type.Literal("kill")], {
        description: "Send SIGINT, SIGTERM or SIGKILL to its process group first.",
      }),
    ),
    yield_ms: YieldArg,
  },
  { additionalProperties: false },
);

export const continueProcess = defineTool({
  name: "continue_process",
  title: "Read, write to or signal a process",
  description:
    "For a process run_process started: writes to its stdin and/or sends it a signal (interrupt, terminate, kill) if asked, waits up to yield_ms for it to end, " +
    "and returns its output from the cursors you pass (the cursors of the previous result) and its status. Reading with yield_ms 0 is always safe to repeat; a write or a signal is sent once per call.",
  input: ContinueInput,
  output: Type.Object({
    ...ProcessState,
    bytes_written: Nullable(Type.Integer({ minimum: 0 })),
    signal_sent: Nullable(Type.String()),
    ...ReceiptIdsField,
  }),
  mutating: true,
  async run(args: Static<typeof ContinueInput>, call) {
    const sandbox = sandboxOf(args, call);
    // A write and a signal are receipts; the reads are not.
    const api = new ProcessesApi(receipted(call, sandbox, (await call.api()).http));
    let written: number | null = null;
    if (args.write !== undefined || args.eof === true) {
      const bytes = Buffer.from(args.write ?? "", "utf8");
      written = (await api.writeStdin(sandbox, args.handle, bytes, args.eof === true, toolKey("stdin", undefined)))
        .bytes_written;
    }
    let sent: string | null = null;
    if (args.signal !== undefined) {
      sent = (await api.signal(sandbox, args.handle, SIGNALS[args.signal], toolKey("signal", undefined))).signal;
    }
    const cursors = { stdout: args.stdout_cursor ?? 0, stderr: args.stderr_cursor ?? 0 };
    const state = await processState(call, sandbox, args.handle, cursors, args.yield_ms ?? 0);
    const did = [
      ...(written === null ? [] : [`wrote ${written} bytes${args.eof === true ? " and closed stdin" : ""}`]),
      ...(sent === null ? [] : [`sent ${sent}`]),
    ];
    return {
      structured: { ...state, bytes_written: written, signal_sent: sent, receipt_ids: call.receipts },
      text: [...(did.length ? [did.join("; ")] : []), stateText(state)].join("\n"),
    };
  },
});

const StopInput = Type.Object(
  {
    handle: HandleArg,
    sandbox: CommandArgs.sandbox,
    grace_ms: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 60_000, description: "Between SIGTERM and SIGKILL (default 5000)." }),
    ),
  },
  { additionalProperties: false },
);

export const stopProcess = defineTool({
  name: "stop_process",
  title: "Stop a process",
  description:
    "Stops a process: SIGTERM to its group, the grace, then SIGKILL; answers once it has ended (its logs stay readable with continue_process). Safe to repeat.",
  input: StopInput,
  output: Type.Object({
    handle: Type.String(),
    state: Type.String(),
    outcome: Type.String(),
    exit_code: Nullable(Type.Integer()),
    signal: Nullable(Type.String()),
    ...ReceiptIdsField,
  }),
  mutating: true,
  async run(args: Static<typeof StopInput>, call) {
    const sandbox = sandboxOf(args, call);
    const api = new ProcessesApi(receipted(call, sandbox, (await call.api()).http));
    const r = await api.stop(sandbox, args.handle, args.grace_ms ?? 5_000);
    return {
      structured: {
        handle: r.process_id,
        state: r.state,
        outcome: r.outcome,
        exit_code: r.exit_code,
        signal: r.signal,
        receipt_ids: call.receipts,
      },
      text: `${r.process_id} ${r.state}: ${r.outcome}${r.signal ? ` (${r.signal})` : ""}`,
    };
  },
});
