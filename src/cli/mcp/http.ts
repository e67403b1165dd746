// sbx mcp over MCP's Streamable HTTP transport, at /mcp on the daemon's listeners
// (docs/agents.md, "Over HTTP"). The daemon's edge authenticates each request as it
// does every route; here each session (Mcp-Session-Id, made at `initialize`) is a server
// of its own with the same tools as `sbx mcp` on stdio, acting through one client of the
// daemon's own Unix socket: every call writes the same receipts, in the daemon's home.

import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { localEndpoint } from "../../client/endpoint.js";
import { randomUUID } from "../../platform/random.js";
import type { Context } from "../context.js";
import { type BackendClient, backendClient, chooseTools, createServer, parseSettings, stderrOnly } from "./server.js";
import type { ServerSettings, Tool } from "./tool.js";

/** Sessions kept at once; opening one more closes the one used least recently. */
export const MAX_SESSIONS = 64;

interface Session {
  transport: StreamableHTTPServerTransport;
  /** Ends the waits of the session's calls (the daemon is stopping). */
  stop: AbortController;
  settled: () => Promise<void>;
  lastUsed: number;
}

/** A JSON-RPC error answer, as the SDK's transport writes its own. */
function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null });
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function opensSession(message: unknown): boolean {
  return Array.isArray(message) ? message.some((m) => isInitializeRequest(m)) : isInitializeRequest(message);
}

export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  /** Sessions with calls still running, whichever ended (for the daemon's stop). */
  private readonly unsettled = new Set<Session>();
  private closed = false;

  constructor(
    private readonly ctx: Context,
    private readonly tools: readonly Tool[],
    private readonly settings: ServerSettings,
    private readonly backend: BackendClient,
  ) {}

  get count(): number {
    return this.sessions.size;
  }

  async serve(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    let message: unknown;
    if (body.length > 0) {
      try {
        message = JSON.parse(body.toString("utf8"));
      } catch {
        return jsonRpcError(res, 400, -32700, "Parse error: the body is not JSON");
      }
    }
    const id = header(req, "mcp-session-id");
    if (id !== undefined) {
      const session = this.sessions.get(id);
      if (session === undefined) {
        // The spec's answer to a session the server does not know: the client starts a new one.
        return jsonRpcError(
          res,
          404,
          -32001,
          "Session not found: send initialize (without Mcp-Session-Id) for a new one",
        );
      }
      session.lastUsed = performance.now();
      return session.transport.handleRequest(req, res, message);
    }
    if (req.method !== "POST" || !opensSession(message)) {
      return jsonRpcError(res, 400, -32000, "Bad Request: Mcp-Session-Id header is required (initialize first)");
    }
    if (this.closed) return jsonRpcError(res, 503, -32000, "the daemon is stopping");
    const session = await this.open();
    return session.transport.handleRequest(req, res, message);
  }

  /** A new session: its own server and transport, its id given at initialize. */
  private async open(): Promise<Session> {
    const stop = new AbortController();
    const ctx: Context = { ...this.ctx, interrupt: AbortSignal.any([this.ctx.interrupt, stop.signal]) };
    const { server, settled } = createServer(ctx, this.tools, this.settings, this.backend);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, session);
        this.evict();
      },
    });
    const session: Session = { transport, stop, settled, lastUsed: performance.now() };
    // A DELETE, an eviction or the daemon's stop: calls in flight run on and complete their receipts.
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
      this.unsettled.add(session);
      void settled().then(() => this.unsettled.delete(session));
    };
    await server.connect(transport);
    return session;
  }

  /** Past MAX_SESSIONS, the session used least recently is closed (its client gets 404 and starts anew). */
  private evict(): void {
    while (this.sessions.size > MAX_SESSIONS) {
      const [id, oldest] = [...this.sessions].reduce((a, b) => (b[1].lastUsed < a[1].lastUsed ? b : a));
      this.sessions.delete(id);
      void oldest.transport.close();
    }
  }

  /** The daemon is stopping: every call stops waiting (its receipt says so), then the sessions close. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.sessions.values(), ...this.unsettled];
    for (const s of all) s.stop.abort();
    await Promise.allSettled(all.map((s) => s.settled()));
    await Promise.allSettled(all.map((s) => s.transport.close()));
  }
}

/** The sessions of a daemon whose Unix socket is `paths.socketPath`: the tools `sbx mcp` offers by default. */
export function openSessions(ctx: Context): McpSessions {
  const serving: Context = { ...ctx, io: stderrOnly(ctx.io) };
  const settings = parseSettings({}, ctx.config.read().settings.sandbox);
  // The daemon's own socket, never a profile's backend elsewhere, and never started on demand: it is this process.
  const backend = backendClient(serving, { ...localEndpoint(ctx.paths), autoStart: false });
  return new McpSessions(serving, chooseTools(undefined), settings, backend);
}
