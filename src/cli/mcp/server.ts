// sbx mcp: a Model Context Protocol server over stdio (docs/agents.md). Its tools go
// through the CLI's own context: the same profile, the same client, the same receipt
// store, receipts written before anything is sent. Stdout is the protocol's; anything
// sbx would print goes to stderr.

import { Readable, Writable } from "node:stream";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { Api } from "../../client/api.js";
import type { Endpoint } from "../../client/endpoint.js";
import { UsageError } from "../../common/errors.js";
import { ExitCodes } from "../../common/exit-codes.js";
import { VERSION } from "../../version.js";
import type { RunFn } from "../command.js";
import { chooseSandbox } from "../command-flags.js";
import type { Context } from "../context.js";
import type { IO } from "../io/io.js";
import { receiptsText } from "./evidence.js";
import { MCP_TOOLS } from "./registry.js";
import { errorAnswer, type ServerSettings, type Tool, type ToolCall, toResult } from "./tool.js";

export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;

interface RawMcpFlags {
  sandbox?: string;
  tools?: string;
  maxOutputBytes?: string;
  manageSandboxes?: boolean;
}

/**
 * The tools `--tools` names: names, `read-only` (the tools that change nothing), or `all`;
 * sandbox_create and sandbox_stop only when `manage` (--manage-sandboxes) allows them.
 */
export function chooseTools(spec: string | undefined, manage = false, every: readonly Tool[] = MCP_TOOLS): Tool[] {
  const all = every.filter((t) => manage || t.manages !== true);
  const withheld = every.filter((t) => !all.includes(t));
  if (spec === undefined || spec === "all") return [...all];
  const words = spec
    .split(",")
    .map((w) => w.trim())
    .filter((w) => w !== "");
  const chosen = new Set<Tool>();
  for (const word of words) {
    if (word === "read-only") {
      for (const t of all) if (!t.mutating) chosen.add(t);
      continue;
    }
    if (word === "all") {
      for (const t of all) chosen.add(t);
      continue;
    }
    const tool = all.find((t) => t.name === word);
    if (tool === undefined && withheld.some((t) => t.name === word)) {
      throw new UsageError(`--tools: ${word} creates or stops sandboxes`, "allow it with --manage-sandboxes");
    }
    if (tool === undefined) {
      throw new UsageError(
        `--tools: no tool ${JSON.stringify(word)}`,
        `tools: ${all.map((t) => t.name).join(", ")}; or read-only, all`,
      );
    }
    chosen.add(tool);
  }
  if (chosen.size === 0) throw new UsageError("--tools names no tool", "e.g. --tools read-only,run_command");
  return all.filter((t) => chosen.has(t));
}

export function parseSettings(raw: RawMcpFlags, defaultSandbox: string | undefined): ServerSettings {
  let maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES;
  if (raw.maxOutputBytes !== undefined) {
    if (!/^[0-9]{1,9}$/.test(raw.maxOutputBytes) || Number(raw.maxOutputBytes) < 256) {
      throw new UsageError(`--max-output-bytes ${raw.maxOutputBytes}: a number of bytes, 256 at least`);
    }
    maxOutputBytes = Number(raw.maxOutputBytes);
  }
  return { sandbox: chooseSandbox(raw.sandbox, defaultSandbox), maxOutputBytes };
}

/** The IO of a server whose stdout is the protocol's: what sbx would print there goes to stderr. */
export function stderrOnly(io: IO): IO {
  return Object.assign(Object.create(io) as IO, {
    out: (line: string) => io.err(line),
    writeOut: (chunk: string | Uint8Array) => io.writeErr(chunk),
    writeOutPaced: (chunk: Uint8Array) => io.writeErrPaced(chunk),
  });
}

/** The protocol's streams: sbx's stdin and stdout as its IO has them (a test's buffers, or the process's). */
function protocolStreams(io: IO): { input: Readable; output: Writable } {
  async function* bytes() {
    for await (const chunk of io.stdinChunks()) yield Buffer.from(chunk);
  }
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      io.writeOutPaced(chunk).then(() => done(), done);
    },
  });
  return { input: Readable.from(bytes()), output };
}

/** The tool's input schema as plain JSON Schema (TypeBox's markers are symbols, dropped here). */
function jsonSchema(schema: unknown): { type: "object"; [k: string]: unknown } {
  return JSON.parse(JSON.stringify(schema)) as { type: "object"; [k: string]: unknown };
}

/** How often a call the client asked progress of says it is still waiting. */
export const PROGRESS_EVERY_MS = 1_000;

type SendNotification = (n: {
  method: "notifications/progress";
  params: { progressToken: string | number; progress: number; total?: number; message: string };
}) => Promise<void>;

/**
 * MCP progress for a call whose client sent a progressToken: every second, the seconds
 * waited so far (of its yield_ms or timeout_ms, when it has one). Returns its stop.
 */
function progress(
  token: string | number | undefined,
  tool: string,
  args: Record<string, unknown>,
  send: SendNotification,
): () => void {
  if (token === undefined) return () => undefined;
  const waitMs = typeof args.yield_ms === "number" ? args.yield_ms : args.timeout_ms;
  const total = typeof waitMs === "number" && waitMs > 0 ? waitMs / 1000 : undefined;
  let seconds = 0;
  const timer = setInterval(() => {
    seconds += PROGRESS_EVERY_MS / 1000;
    const message = `${tool}: waited ${seconds} s${total === undefined ? "" : ` of ${total} s`}; it has not ended`;
    send({
      method: "notifications/progress",
      params: { progressToken: token, progress: seconds, ...(total === undefined ? {} : { total }), message },
    }).catch(() => undefined);
  }, PROGRESS_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** The backend a server's tools act on, and its client, made on first use (one for all the sessions of /mcp). */
export interface BackendClient {
  endpoint: Endpoint;
  api: () => Promise<Api>;
}

export function backendClient(ctx: Context, endpoint: Endpoint): BackendClient {
  let api: Promise<Api> | null = null;
  const clientOnce = () => {
    api ??= ctx.api(endpoint).catch((err: unknown) => {
      api = null;
      throw err;
    });
    return api;
  };
  return { endpoint, api: clientOnce };
}

/**
 * The server, its tools bound to `ctx`. Every call runs with its own interrupt (the
 * client's cancellation) and never touches stdout; the client is made on first use.
 */
export function createServer(
  ctx: Context,
  tools: readonly Tool[],
  settings: ServerSettings,
  backend: BackendClient = backendClient(ctx, ctx.endpoint()),
): { server: Server; settled: () => Promise<void> } {
  const inFlight = new Set<Promise<unknown>>();
  const server = new Server({ name: "sbx", version: VERSION }, { capabilities: { tools: {} } });
  const validator = new AjvJsonSchemaValidator();
  const checks = new Map(tools.map((t) => [t.name, validator.getValidator(jsonSchema(t.input))]));
  const { endpoint, api: clientOnce } = backend;
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: jsonSchema(t.input),
      outputSchema: jsonSchema(t.output),
      annotations: { title: t.title, readOnlyHint: !t.mutating, openWorldHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (tool === undefined) {
      const text = `sbx: no tool ${JSON.stringify(request.params.name)} here; tools: ${tools.map((t) => t.name).join(", ")}`;
      return { content: [{ type: "text" as const, text }], isError: true };
    }
    const args = request.params.arguments ?? {};
    const checked = checks.get(tool.name)!(args);
    if (!checked.valid) {
      const text = `sbx: ${tool.name}: the input does not match its schema (${checked.errorMessage}); nothing was run`;
      return { content: [{ type: "text" as const, text }], isError: true };
    }
    const callCtx: Context = {
      ...ctx,
      interrupt: AbortSignal.any([ctx.interrupt, extra.signal]),
      // No Ctrl-C belongs to one call here: the server's own interrupt ends the server.
      onFirstInterrupt: () => () => undefined,
    };
    const call: ToolCall = {
      ctx: callCtx,
      endpoint,
      api: clientOnce,
      settings,
      tool: tool.name,
      requestId: extra.requestId,
      receipts: [],
    };
    const running = tool.run(args as never, call);
    inFlight.add(running);
    const stopProgress = progress(request.params._meta?.progressToken, tool.name, args, extra.sendNotification);
    try {
      return toResult(ctx, await running);
    } catch (err) {
      const { text } = errorAnswer(ctx, err);
      return { content: [{ type: "text" as const, text: text + receiptsText(call) }], isError: true };
    } finally {
      stopProgress();
      inFlight.delete(running);
    }
  });
  // A call whose client went away still ends its receipt before the store is closed.
  const settled = async () => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  };
  return { server, settled };
}

/** Bound to `sbx mcp` by the command tree: serves until the client closes stdin (or SIGTERM). */
export const action: RunFn = async (ctx, c) => {
  const raw = c.optsWithGlobals() as RawMcpFlags;
  const tools = chooseTools(raw.tools, raw.manageSandboxes === true);
  const settings = parseSettings(raw, ctx.config.read().settings.sandbox);
  const serving: Context = { ...ctx, io: stderrOnly(ctx.io) };
  const { server, settled } = createServer(serving, tools, settings);
  const { input, output } = protocolStreams(ctx.io);
  const transport = new StdioServerTransport(input, output);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    input.once("end", () => void transport.close());
    ctx.interrupt.addEventListener("abort", () => void transport.close(), { once: true });
  });
  await server.connect(transport);
  ctx.io.verbose(`sbx: mcp server on stdio with ${tools.map((t) => t.name).join(", ")}`);
  await closed;
  await settled();
  return ExitCodes.ok;
};
