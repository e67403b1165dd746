// sbx's MCP server over Streamable HTTP at /mcp on a real daemon (`sbx daemon run
// --listen`), driven by the SDK's own StreamableHTTPClientTransport: on the daemon's
// Unix socket (no token, as every route there) and on TCP, where the token is required
// exactly as for /api/v1 (401 without it, nothing run). Sessions as the spec has them:
// Mcp-Session-Id made at initialize, 404 for a session the server does not know, 400
// for a call without one, DELETE ends it. Every call leaves its receipt in the daemon's
// home, read back with `sbx receipts show`.

import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import { resolvePaths } from "../../src/config/paths.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startForegroundDaemon, stopForegroundDaemon } from "../support/daemon.js";
import { runMainJson } from "../support/in-process.js";
import { refusedPort } from "../support/misbehaving-server.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON documents
type Json = any;

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const MCP_HEADERS = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

describe("sbx mcp over Streamable HTTP at /mcp on the daemon", () => {
  let home: string;
  let daemon: ChildProcess;
  let tcp: string;
  let token: string;
  let unixAgent: Agent;
  /** fetch on the daemon's Unix socket (the origin's host is a placeholder). */
  let unixFetch: typeof fetch;
  const clients: Client[] = [];

  beforeAll(async () => {
    home = makeHome("sbx-mcp-http-");
    const port = await refusedPort();
    daemon = await startForegroundDaemon(home, ["--listen", `127.0.0.1:${port}`]);
    tcp = `http://127.0.0.1:${port}`;
    token = fs.readFileSync(path.join(home, "daemon", "token"), "utf8").trim();
    unixAgent = new Agent({ connect: { socketPath: resolvePaths({ SBX_HOME: home }).socketPath } });
    unixFetch = ((url: string | URL, init?: RequestInit) =>
      undiciFetch(url, { ...(init as object), dispatcher: unixAgent })) as unknown as typeof fetch;
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    // A daemon with sessions open (and their event streams) still stops, and cleanly.
    if (daemon) await stopForegroundDaemon(daemon);
    expect(daemon?.exitCode).toBe(0);
    await unixAgent?.close();
    removeHome(home);
  });

  async function connect(over: "unix" | "tcp"): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport =
      over === "unix"
        ? new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), { fetch: unixFetch })
        : new StreamableHTTPClientTransport(new URL(`${tcp}/mcp`), {
            requestInit: { headers: { Authorization: `Bearer ${token}` } },
          });
    const client = new Client({ name: "sbx-http-test", version: "1.0.0" });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  const call = (client: Client, name: string, args: Record<string, unknown>): Promise<Json> =>
    client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });

  async function receipt(id: string): Promise<Json> {
    return (await runMainJson<Json>(["receipts", "show", id, "--json"], { home })).doc;
  }

  async function receiptCount(): Promise<number> {
    const { doc } = await runMainJson<Json[]>(["receipts", "list", "--json", "--limit", "1000"], { home });
    return doc.length;
  }

  it("on the Unix socket: a session of its own, the tools of sbx mcp, and run_process leaving its receipt", async () => {
    const { client, transport } = await connect("unix");
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain("run_process");
    expect(names).toContain("receipts_in_doubt");
    // As `sbx mcp` without --manage-sandboxes: the agent uses the sandboxes there are.
    expect(names).not.toContain("sandbox_create");

    const result = await call(client, "run_process", { argv: ["sh", "-c", "echo over-http"], yield_ms: 60_000 });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status: "exited", exit_code: 0, stdout: "over-http\n" });
    const doc = await receipt(result.structuredContent.receipt_id);
    expect(doc).toMatchObject({ kind: "process_start", mcp_tool: "run_process" });
    expect(doc.mcp_request_id).toMatch(/^[0-9]+$/);
  });

  it("on TCP with the token: the same tools, a run_command and its receipt", async () => {
    const { client, transport } = await connect("tcp");
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const result = await call(client, "run_command", { argv: ["sh", "-c", "echo tcp; exit 4"] });
    expect(result.structuredContent).toMatchObject({ status: "exited", exit_code: 4, stdout: "tcp\n" });
    const doc = await receipt(result.structuredContent.receipt_id);
    expect(doc).toMatchObject({ kind: "execute", exit_code: 4, mcp_tool: "run_command" });
  });

  it("on TCP without the token (or a wrong one): 401 as on every route, and nothing runs", async () => {
    const before = await receiptCount();
    for (const auth of [{}, { Authorization: `Bearer ${"x".repeat(43)}` }] as Record<string, string>[]) {
      const res = await fetch(`${tcp}/mcp`, {
        method: "POST",
        headers: { ...MCP_HEADERS, ...auth },
        body: JSON.stringify(INITIALIZE),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="sbx"');
      expect(((await res.json()) as Json).error.code).toBe("unauthorized");
    }
    const client = new Client({ name: "no-token", version: "1.0.0" });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${tcp}/mcp`)))).rejects.toThrow();
    expect(await receiptCount()).toBe(before);
  });

  it("keeps sessions as the spec says: an id at initialize, 400 without one, 404 for one it does not know", async () => {
    const opened = await unixFetch("http://localhost/mcp", {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify(INITIALIZE),
    });
    expect(opened.status).toBe(200);
    const id = opened.headers.get("mcp-session-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await opened.text();

    const list = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
    const without = await unixFetch("http://localhost/mcp", {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify(list),
    });
    expect(without.status).toBe(400);
    expect(((await without.json()) as Json).error.message).toContain("Mcp-Session-Id");

    const unknown = await unixFetch("http://localhost/mcp", {
      method: "POST",
      headers: { ...MCP_HEADERS, "Mcp-Session-Id": "00000000-0000-4000-8000-000000000000" },
      body: JSON.stringify(list),
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Json).error.code).toBe(-32001);

    const notJson = await unixFetch("http://localhost/mcp", { method: "POST", headers: MCP_HEADERS, body: "{" });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as Json).error.code).toBe(-32700);
  });

  it("ends a session on DELETE: its id is unknown afterwards, and a new session works", async () => {
    const { client, transport } = await connect("unix");
    const id = transport.sessionId!;
    await client.listTools();
    await transport.terminateSession();
    expect(transport.sessionId).toBeUndefined();
    const after = await unixFetch("http://localhost/mcp", {
      method: "POST",
      headers: { ...MCP_HEADERS, "Mcp-Session-Id": id },
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list", params: {} }),
    });
    expect(after.status).toBe(404);
    await after.text();
    const again = await connect("unix");
    expect(again.transport.sessionId).not.toBe(id);
    expect((await again.client.listTools()).tools.length).toBeGreaterThan(0);
  });
});
