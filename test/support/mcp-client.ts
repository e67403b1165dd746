// `sbx mcp` over stdio driven by the MCP SDK's own Client, as an agent's client config
// starts it: bin/sbx (or the release binary, SBX_TEST_BINARY) with a home of its own.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { makeHome, removeHome, SBX_BIN, sbxEnv, TEST_BINARY } from "./cli.js";
import { stopDaemon } from "./daemon.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON documents
type Json = any;

export interface McpSession {
  /** The SBX_HOME sbx mcp and its daemon use. */
  home: string;
  client: Client;
  /** What sbx mcp wrote to its stderr so far (for failure messages). */
  stderr(): string;
  /** One tools/call (a generous guard: the machine may be loaded). */
  call(name: string, args: Record<string, unknown>): Promise<Json>;
  /** Closes the client, stops the daemon it started and removes the home. */
  close(): Promise<void>;
}

/** A client connected to `sbx mcp ARGS` in `home` (spawned as a client config does), its stderr kept for failures. */
export async function connectMcp(
  home: string,
  args: readonly string[] = [],
): Promise<{ client: Client; stderr: () => string; pid: number }> {
  const [command, argv] = TEST_BINARY === undefined ? [process.execPath, ["--", SBX_BIN]] : [TEST_BINARY, []];
  const transport = new StdioClientTransport({
    command,
    args: [...argv, "mcp", ...args],
    env: sbxEnv(home) as Record<string, string>,
    cwd: home,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const client = new Client({ name: "sbx-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => stderr, pid: transport.pid! };
}

/** Starts `sbx mcp ARGS` in a new home and connects the SDK's Client to it. */
export async function mcpOverStdio(prefix: string, args: readonly string[] = []): Promise<McpSession> {
  const home = makeHome(prefix);
  const { client, stderr } = await connectMcp(home, args);
  return {
    home,
    client,
    stderr,
    call: (name, callArgs) => client.callTool({ name, arguments: callArgs }, undefined, { timeout: 120_000 }),
    close: async () => {
      await client.close();
      await stopDaemon(home);
      removeHome(home);
    },
  };
}
