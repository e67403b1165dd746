// The tools an agent calls after a lost answer instead of running the command again
// (receipts_in_doubt, receipt_show), and the sandboxes it may name (sandbox_list).

import { type Static, Type } from "@sinclair/typebox";
import { IN_DOUBT } from "../../receipts/classifications.js";
import { type ReceiptDocument, receiptDocument } from "../../receipts/document.js";
import { endpointOfReceipt } from "../dispatch.js";
import { observeOnce } from "../observe.js";
import { commandText } from "../render/receipt.js";
import { isInDoubt, nextToolCall, ReceiptFields } from "./outcome.js";
import { bound, defineTool, Nullable, type ToolCall } from "./tool.js";

const ReceiptSummary = Type.Object({
  receipt_id: ReceiptFields.receipt_id,
  idempotency_key: ReceiptFields.idempotency_key,
  classification: ReceiptFields.classification,
  may_have_run: ReceiptFields.may_have_run,
  kind: Type.String({
    description:
      "execute (run_command), process_start (run_process), jobs_submit (job_submit), jobs_run (job_run), or request (anything else that changes something: write_file, a write or signal of continue_process, stop_process, cancel, sandbox_create, sandbox_stop).",
  }),
  mcp_tool: Nullable(Type.String({ description: "The tool call that made it (null: a command typed to sbx)." })),
  mcp_request_id: Nullable(Type.String({ description: "The MCP request id of that call." })),
  sandbox_id: Type.String(),
  command: Type.String({ description: "What was sent, as a person would type it." }),
  created_at: Type.String(),
  next_tool_call: ReceiptFields.next_tool_call,
});

function summary(doc: ReceiptDocument): Static<typeof ReceiptSummary> {
  return {
    receipt_id: doc.receipt_id,
    idempotency_key: doc.idempotency_key,
    classification: doc.classification,
    may_have_run: doc.may_have_run,
    kind: doc.kind,
    mcp_tool: doc.mcp_tool,
    mcp_request_id: doc.mcp_request_id,
    sandbox_id: doc.sandbox_id,
    command: commandText(doc),
    created_at: doc.created_at,
    next_tool_call: nextToolCall(doc),
  };
}

const InDoubtInput = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: "At most this many (default 20)." })) },
  { additionalProperties: false },
);

export const receiptsInDoubt = defineTool({
  name: "receipts_in_doubt",
  title: "What may have run",
  description:
    "Lists the receipts whose outcome is not known (the command may have run, nothing confirmed it), newest first, each with the next safe tool call. " +
    "Call this after a lost or unclear answer, or when you start again after a crash, instead of running a command again.",
  input: InDoubtInput,
  output: Type.Object({ receipts: Type.Array(ReceiptSummary) }),
  mutating: false,
  async run(args: Static<typeof InDoubtInput>, call) {
    const store = await call.ctx.receipts();
    const docs = store.list({ classification: IN_DOUBT, limit: args.limit ?? 20 }).map(receiptDocument);
    const lines = docs.map(
      (d) =>
        `${d.receipt_id}\t${d.classification}\t${d.sandbox_id}\t${d.mcp_tool === null ? "" : `${d.mcp_tool} (request ${d.mcp_request_id}) `}${commandText(d)}`,
    );
    return {
      structured: { receipts: docs.map(summary) },
      text: docs.length === 0 ? "no receipt is in doubt" : `${docs.length} in doubt:\n${lines.join("\n")}`,
    };
  },
});

const ShowInput = Type.Object(
  {
    receipt_id: Type.String({
      minLength: 1,
      description: "A receipt id (rcp_…), or the execution id, process id or idempotency key it was sent with.",
    }),
    refresh: Type.Optional(
      Type.Boolean({
        description:
          "Ask the backend once what became of it (a read: it never runs anything) and record what it says, before showing it.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const receiptShow = defineTool({
  name: "receipt_show",
  title: "One receipt",
  description:
    "Shows one receipt: what was sent, its classification, exit code and output as recorded. With refresh: true, reads what the backend knows of it now " +
    "(safe: never runs anything) — the call to make when an answer was lost, before deciding whether to retry.",
  input: ShowInput,
  output: Type.Object({
    ...ReceiptSummary.properties,
    exit_code: Nullable(Type.Integer()),
    signal: Nullable(Type.String()),
    execution_id: Nullable(Type.String()),
    process_id: Nullable(Type.String()),
    stdout: Nullable(Type.String()),
    stderr: Nullable(Type.String()),
    error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
    refreshed: Nullable(Type.String({ description: "What the refresh learned, or why it learned nothing." })),
  }),
  mutating: false,
  async run(args: Static<typeof ShowInput>, call) {
    const { ctx } = call;
    const store = await ctx.receipts();
    const id = store.resolve(args.receipt_id);
    let refreshed: string | null = null;
    if (args.refresh === true) {
      const stored = store.get(id);
      const learned = await observeOnce(ctx, await apiFor(call, endpointOfReceipt(ctx, stored)), stored, "refresh", 0);
      refreshed =
        learned.classification === null
          ? `nothing new (${learned.error?.code ?? "no answer"}: ${learned.error?.message ?? ""})`
          : learned.classification;
    }
    const doc = receiptDocument(store.get(id));
    const max = call.settings.maxOutputBytes;
    const next = nextToolCall(doc);
    return {
      structured: {
        ...summary(doc),
        exit_code: doc.exit_code,
        signal: doc.signal,
        execution_id: doc.execution_id,
        process_id: doc.process_id,
        stdout: doc.stdout === null ? null : bound(doc.stdout, max).text,
        stderr: doc.stderr === null ? null : bound(doc.stderr, max).text,
        error: doc.error,
        refreshed,
      },
      text: [
        `${doc.receipt_id}\t${doc.classification}${doc.exit_code === null ? "" : `\texit ${doc.exit_code}`}\t${commandText(doc)}`,
        ...(refreshed === null ? [] : [`refreshed: ${refreshed}`]),
        ...(isInDoubt(doc.classification) && next !== null ? [next] : []),
      ].join("\n"),
    };
  },
});

/** The server's client when the receipt went where it talks, else one for where the receipt went. */
async function apiFor(call: ToolCall, endpoint: ReturnType<typeof endpointOfReceipt>) {
  return endpoint.apiUrl === call.endpoint.apiUrl ? call.api() : call.ctx.api(endpoint);
}

const ListInput = Type.Object({}, { additionalProperties: false });

export const sandboxList = defineTool({
  name: "sandbox_list",
  title: "Sandboxes",
  description: "Lists the sandboxes of the backend sbx talks to: their ids, names and states. Reads only.",
  input: ListInput,
  output: Type.Object({
    sandboxes: Type.Array(
      Type.Object({ sandbox_id: Type.String(), name: Type.String(), status: Type.String(), isolation: Type.String() }),
    ),
  }),
  mutating: false,
  async run(_args: Static<typeof ListInput>, call) {
    const sandboxes = await (await call.api()).listSandboxes();
    return {
      structured: { sandboxes },
      text:
        sandboxes.length === 0
          ? "no sandboxes yet (the first command creates `default`)"
          : sandboxes.map((s) => `${s.sandbox_id}\t${s.name}\t${s.status}\t${s.isolation}`).join("\n"),
    };
  },
});
