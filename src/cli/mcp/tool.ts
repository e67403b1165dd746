// What a tool of `sbx mcp` is (docs/agents.md): a name, a description written for a
// model, a JSON Schema for its input and its output (TypeBox, as the wire's schemas),
// and the work it does with the CLI's own context. Results are structured content
// with a short text beside it; sbx's errors become tool errors in sbx's words.

import type { Static, TObject, TSchema } from "@sinclair/typebox";
import { Type } from "@sinclair/typebox";
import type { Api } from "../../client/api.js";
import type { Endpoint } from "../../client/endpoint.js";
import { SbxError } from "../../common/errors.js";
import { randomUUID } from "../../platform/random.js";
import type { Context } from "../context.js";
import { redactForDisplay } from "../secrets.js";

/** What `sbx mcp` was started with, the same for every call. */
export interface ServerSettings {
  /** The sandbox a tool acts on when its input names none. */
  sandbox: string;
  /** Bytes of each output stream a result carries at most (first and last parts kept). */
  maxOutputBytes: number;
}

/** What one call gets: the context (its interrupt is the call's), the client, the MCP request. */
export interface ToolCall {
  ctx: Context;
  endpoint: Endpoint;
  api: () => Promise<Api>;
  settings: ServerSettings;
  /** The tool called, and the client's id of this call: both kept on the receipts it writes. */
  tool: string;
  requestId: string | number;
  /** The receipts this call wrote for the requests it sent that change something (evidence.ts). */
  receipts: string[];
}

/** What a receipt keeps of the tool call it was made for (receipts.db: mcp_tool, mcp_request_id). */
export function receiptTag(call: ToolCall): { tool: string; requestId: string } {
  return { tool: call.tool, requestId: String(call.requestId) };
}

/** A tool's answer: the structured result, the text a model reads first, and whether it failed. */
export interface ToolAnswer {
  structured: Record<string, unknown>;
  text: string;
  isError?: boolean;
}

export interface Tool<I extends TObject = TObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: TObject;
  /** Changes something in a sandbox (left out of `--tools read-only`). */
  mutating: boolean;
  /** Creates or stops sandboxes: offered only with --manage-sandboxes. */
  manages?: boolean;
  run(args: Static<I>, call: ToolCall): Promise<ToolAnswer>;
}

/** A tool, typed by its input schema (the registry holds them all alike). */
export function defineTool<I extends TObject>(tool: Tool<I>): Tool {
  return tool as unknown as Tool;
}

/** Optional, nullable where a value may be unknown. */
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const SandboxArg = Type.Optional(
  Type.String({
    description: "Sandbox id or name; default: the one `sbx mcp` was started with (--sandbox), else `default`.",
    pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$",
  }),
);

export const IdempotencyKeyArg = Type.Optional(
  Type.String({
    description:
      "Your key for this call (1-255 of A-Z a-z 0-9 _ : . -). Reuse it when you retry the SAME call after a lost or unclear answer: the backend then returns the original execution instead of running it twice. Omitted: a fresh key (a retry would run again).",
    pattern: "^[A-Za-z0-9_:.-]{1,255}$",
  }),
);

/** A fresh idempotency key that says which tool made it. */
export function toolKey(tool: string, given: string | undefined): string {
  return given ?? `mcp-${tool}-${randomUUID()}`;
}

/** One output stream bounded: the first and last parts kept, what was left out counted. */
export interface BoundedText {
  text: string;
  omitted_bytes: number;
}

export const BoundedFields = (stream: "stdout" | "stderr") => ({
  [stream]: Type.String({ description: `The ${stream} this result carries (bounded: see ${stream}_omitted_bytes).` }),
  [`${stream}_omitted_bytes`]: Type.Integer({
    minimum: 0,
    description: "Bytes left out of the middle to keep the result bounded (0: nothing left out).",
  }),
});

export function bound(text: string | null, maxBytes: number): BoundedText {
  const bytes = Buffer.from(text ?? "", "utf8");
  if (bytes.length <= maxBytes) return { text: text ?? "", omitted_bytes: 0 };
  const head = Math.ceil(maxBytes / 2);
  const tail = maxBytes - head;
  const omitted = bytes.length - head - tail;
  return {
    text: `${bytes.subarray(0, head).toString("utf8")}\n[… ${omitted} bytes omitted …]\n${bytes.subarray(bytes.length - tail).toString("utf8")}`,
    omitted_bytes: omitted,
  };
}

/** A tool error in sbx's words: the message and its hint, never a stack or a key. */
export function errorAnswer(ctx: Context, err: unknown): { text: string; code: string } {
  if (err instanceof SbxError) {
    const text = `sbx: ${err.message}${err.hint === undefined ? "" : `\nhint: ${err.hint}`}`;
    return { text: redactForDisplay(ctx, text), code: err.code };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { text: redactForDisplay(ctx, `sbx: ${message}`), code: "internal" };
}

/** The answer as MCP's CallToolResult, every key this sbx knows taken out of it. */
export function toResult(ctx: Context, answer: ToolAnswer) {
  return {
    content: [{ type: "text" as const, text: redactForDisplay(ctx, answer.text) }],
    structuredContent: redactDeep(ctx, answer.structured) as Record<string, unknown>,
    ...(answer.isError === true ? { isError: true } : {}),
  };
}

/** Every string inside a value redacted (never the JSON text: a short key could break it). */
function redactDeep(ctx: Context, value: unknown): unknown {
  if (typeof value === "string") return redactForDisplay(ctx, value);
  if (Array.isArray(value)) return value.map((v) => redactDeep(ctx, v));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(ctx, v)]));
  }
  return value;
}
