// run_command: `sbx exec` for a model. The same request body, the same receipt written
// before the request is sent (src/cli/dispatch.ts), the same classification.

import { type Static, Type } from "@sinclair/typebox";
import type { Api } from "../../client/api.js";
import { readOutputRange } from "../../client/output.js";
import type { ReceiptDocument } from "../../receipts/document.js";
import { UsageError } from "../../common/errors.js";
import { TIMEOUT_MAX_MS, TIMEOUT_MIN_MS } from "../../protocol/types.js";
import { resolveWorkingDir } from "../../protocol/validate.js";
import { checkSandboxRef } from "../command-flags.js";
import { dispatchNew } from "../dispatch.js";
import { executeBody } from "../commands/exec.js";
import { failedCall, ReceiptFields, receiptFields, unrecordedText, unsettledText } from "./outcome.js";
import {
  type BoundedText,
  BoundedFields,
  bound,
  defineTool,
  IdempotencyKeyArg,
  Nullable,
  SandboxArg,
  type ToolCall,
  toolKey,
  receiptTag,
} from "./tool.js";

const DEFAULT_TIMEOUT_MS = 120_000;

/** What every command-running tool takes: the command, where, with what. */
export const CommandArgs = {
  argv: Type.Optional(
    Type.Array(Type.String(), {
      minItems: 1,
      description: 'The program and its arguments, run without a shell: ["npm", "test"]. Give argv or shell.',
    }),
  ),
  shell: Type.Optional(
    Type.String({ minLength: 1, description: "A deliberate shell string, run with sh -c. Give argv or shell." }),
  ),
  sandbox: SandboxArg,
  cwd: Type.Optional(Type.String({ description: "Working directory inside the sandbox (default /workspace)." })),
  env: Type.Optional(
    Type.Record(Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }), Type.String(), {
      description: "Environment variables to add.",
    }),
  ),
};

const RunCommandInput = Type.Object(
  {
    ...CommandArgs,
    stdin: Type.Optional(Type.String({ description: "Text given to the command's stdin, then closed (one shot)." })),
    timeout_ms: Type.Optional(
      Type.Integer({
        minimum: TIMEOUT_MIN_MS,
        maximum: TIMEOUT_MAX_MS,
        description: `The kill deadline: the command is killed (timed_out) when it runs longer. Default ${DEFAULT_TIMEOUT_MS}.`,
      }),
    ),
    idempotency_key: IdempotencyKeyArg,
  },
  { additionalProperties: false },
);

const RunCommandOutput = Type.Object({
  ...ReceiptFields,
  status: Type.String({
    description:
      "exited (exit_code is the command's), timed_out, cancelled, not_run (nothing ran), or outcome_unknown (it may have run: see next_tool_call).",
  }),
  exit_code: Nullable(Type.Integer()),
  signal: Nullable(Type.String()),
  execution_id: Nullable(Type.String()),
  ...BoundedFields("stdout"),
  ...BoundedFields("stderr"),
  output_cut_by_backend: Type.Boolean({
    description: "The backend kept less than the command printed (its output cap).",
  }),
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
});

/** The command as the wire takes it: argv, or a shell string; never both. */
export function commandOf(args: { argv?: string[] | undefined; shell?: string | undefined }): string[] | string {
  if (args.argv !== undefined && args.shell !== undefined) {
    throw new UsageError("give argv or shell, not both", 'argv runs without a shell: {"argv": ["ls", "-la"]}');
  }
  const command = args.argv ?? args.shell;
  if (command === undefined) throw new UsageError("give the command: argv (a list) or shell (a string)");
  return command;
}

export function sandboxOf(args: { sandbox?: string | undefined }, call: ToolCall): string {
  return checkSandboxRef(args.sandbox ?? call.settings.sandbox);
}

/** The working directory, resolved under /workspace; refused when it escapes. */
export function cwdOf(cwd: string | undefined): string | undefined {
  if (cwd === undefined) return undefined;
  const resolved = resolveWorkingDir(cwd);
  if (resolved === null) throw new UsageError(`cwd ${JSON.stringify(cwd)} escapes /workspace`);
  return resolved;
}

/**
 * One stream of an execution, bounded. The answer carries only its last MiB when it
 * was longer (`_truncated`): then the first part is read from the full output and the
 * omitted count is of the whole stream. A read that fails leaves the answer's own
 * tail, bounded (output_cut_by_backend says there was more).
 */
async function boundedOutput(
  api: Api,
  doc: ReceiptDocument,
  stream: "stdout" | "stderr",
  maxBytes: number,
): Promise<BoundedText> {
  const inline = doc[stream];
  if (!doc[`${stream}_truncated`] || doc.execution_id === null) return bound(inline, maxBytes);
  try {
    const pieces: Buffer[] = [];
    const target = { sandbox: doc.sandbox_id, executionId: doc.execution_id };
    const read = await readOutputRange(api, target, stream, 0, Math.ceil(maxBytes / 2), (b) => {
      pieces.push(b);
    });
    if (read.streamBytes === null) return bound(inline, maxBytes);
    const head = Buffer.concat(pieces);
    const last = Buffer.from(inline ?? "", "utf8");
    const tail = last.subarray(Math.max(0, last.length - (maxBytes - head.length)));
    const omitted = Math.max(0, read.streamBytes - head.length - tail.length);
    return {
      text: `${head.toString("utf8")}\n[… ${omitted} bytes omitted …]\n${tail.toString("utf8")}`,
      omitted_bytes: omitted,
    };
  } catch {
    return bound(inline, maxBytes);
  }
}

function statusOf(classification: string): string {
  switch (classification) {
    case "succeeded":
    case "failed":
      return "exited";
    case "timed_out":
    case "cancelled":
    case "running":
      return classification;
    case "not_started":
    case "rejected":
      return "not_run";
    default:
      return "outcome_unknown";
  }
}

export const runCommand = defineTool({
  name: "run_command",
  title: "Run a command to its end",
  description:
    "Runs a command in a sandbox and waits until it ends (or its timeout_ms kills it), then returns its exit code and output. " +
    "A durable receipt is written before the command is sent. status `exited` is a confirmed end: exit_code is the command's own (non-zero is not a tool failure). " +
    "If the answer is lost (status `outcome_unknown`, may_have_run true), the command may have run: do not run it again blindly; call receipt_show with refresh, or retry with the same idempotency_key. " +
    "For servers and other long-running commands use run_process.",
  input: RunCommandInput,
  output: RunCommandOutput,
  mutating: true,
  async run(args: Static<typeof RunCommandInput>, call) {
    const { ctx, endpoint, settings } = call;
    const command = commandOf(args);
    const sandbox = sandboxOf(args, call);
    const timeoutMs = args.timeout_ms ?? DEFAULT_TIMEOUT_MS;
    const key = toolKey("run_command", args.idempotency_key);
    const body = executeBody(
      {
        argv: Array.isArray(command) ? command : [],
        shell: typeof command === "string" ? command : undefined,
        sandbox,
        timeoutMs,
        clientTimeoutMs: timeoutMs + 30_000,
        cwd: cwdOf(args.cwd),
        env: args.env ?? {},
        sendStdin: args.stdin !== undefined,
        idempotencyKey: key,
        stream: false,
        detach: false,
        json: true,
        tty: false,
        detachKeys: Buffer.alloc(0),
        failOnTruncated: false,
      },
      args.stdin === undefined ? null : Buffer.from(args.stdin, "utf8"),
    );
    const outcome = await dispatchNew(ctx, endpoint, await call.api(), {
      kind: "execute",
      sandbox,
      body,
      key,
      clientTimeoutMs: timeoutMs + 30_000,
      mcp: receiptTag(call),
    });
    const doc = outcome.document;
    const api = await call.api();
    const stdout = await boundedOutput(api, doc, "stdout", settings.maxOutputBytes);
    const stderr = await boundedOutput(api, doc, "stderr", settings.maxOutputBytes);
    const status = statusOf(doc.classification);
    const structured = {
      ...receiptFields(outcome),
      status,
      exit_code: doc.exit_code,
      signal: doc.signal,
      execution_id: doc.execution_id,
      stdout: stdout.text,
      stdout_omitted_bytes: stdout.omitted_bytes,
      stderr: stderr.text,
      stderr_omitted_bytes: stderr.omitted_bytes,
      output_cut_by_backend: doc.stdout_truncated || doc.stderr_truncated,
      error: doc.error,
    };
    const head =
      status === "exited"
        ? `exited ${doc.exit_code ?? "?"}${doc.signal ? ` (${doc.signal})` : ""} (${doc.receipt_id})`
        : failedCall(doc)
          ? unsettledText(doc)
          : `${status} (${doc.receipt_id})`;
    const output = [
      stdout.text === "" ? "" : `--- stdout ---\n${stdout.text}`,
      stderr.text === "" ? "" : `--- stderr ---\n${stderr.text}`,
    ].filter((s) => s !== "");
    return {
      structured,
      text: [head + unrecordedText(outcome), ...output].join("\n"),
      isError: failedCall(doc),
    };
  },
});
