// An agent's life with a server, through `sbx mcp` over stdio and the SDK's Client:
// run_process of an HTTP server returns `running` (never a success) with a handle;
// continue_process reads it by cursor; another run_process hits it (curl, inside the same
// sandbox); its access log is read on from the cursor; an interrupt ends it. And a
// one-shot `stdin` for run_process: the text, then its end.

import { afterAll, beforeAll, describe, expect } from "vitest";
import { type McpSession, mcpOverStdio } from "../support/mcp-client.js";
import { runMainJson } from "../support/in-process.js";
import { refusedPort } from "../support/misbehaving-server.js";
import { itNeeding } from "../support/requirements.js";
import { until } from "../support/wait.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON documents
type Json = any;

describe("sbx mcp: a server's life, as an agent lives it", () => {
  let mcp: McpSession;
  beforeAll(async () => {
    mcp = await mcpOverStdio("sbx-mcp-life-");
  });
  afterAll(async () => {
    await mcp?.close();
  });
  const call = (name: string, args: Record<string, unknown>): Promise<Json> => mcp.call(name, args);

  itNeeding("tools", "serves, is hit by another run_process, is read by cursor, and ends on an interrupt", async () => {
    // Free on this host too, should the sandbox share its network (isolation none).
    const port = String(await refusedPort());
    expect(
      (await call("write_file", { path: "www/hello.txt", content: "hello from the server\n" })).isError,
    ).toBeFalsy();
    const server = await call("run_process", {
      argv: ["python3", "-u", "-m", "http.server", port, "--bind", "127.0.0.1"],
      cwd: "/workspace/www",
      yield_ms: 200,
    });
    expect(server.isError, `${JSON.stringify(server)}\n${mcp.stderr()}`).toBeFalsy();
    // Still running after its yield: running with a handle and cursors, never a success.
    expect(server.structuredContent).toMatchObject({ status: "running", outcome: null, exit_code: null });
    const handle = server.structuredContent.handle;

    let cursors = { stdout_cursor: 0, stderr_cursor: 0 };
    let said = "";
    await until(
      async () => {
        const r = await call("continue_process", { handle, ...cursors });
        said += r.structuredContent.stdout;
        cursors = {
          stdout_cursor: r.structuredContent.stdout_cursor,
          stderr_cursor: r.structuredContent.stderr_cursor,
        };
        return said.includes(`port ${port}`);
      },
      30_000,
      "the server to say it serves",
    );

    const hit = await call("run_process", {
      argv: ["curl", "-sS", "--max-time", "20", `http://127.0.0.1:${port}/hello.txt`],
      yield_ms: 30_000,
    });
    expect(hit.structuredContent).toMatchObject({
      status: "exited",
      exit_code: 0,
      stdout: "hello from the server\n",
    });

    // Its access log, read on from the cursor: only what came after.
    const logged = await until<Json>(
      async () => {
        const r = await call("continue_process", { handle, ...cursors });
        return r.structuredContent.stderr.includes("GET /hello.txt") ? r : undefined;
      },
      30_000,
      "the server's access log line",
    );
    expect(logged.structuredContent.stdout).not.toContain(`port ${port}`);

    const ended = await call("continue_process", { handle, signal: "interrupt", yield_ms: 30_000 });
    expect(ended.structuredContent).toMatchObject({ status: "exited", signal_sent: "SIGINT" });
    expect(ended.structuredContent.stdout).toContain("Keyboard interrupt received");
  });

  itNeeding("tools", "gives run_process a one-shot stdin: the text, then its end", async () => {
    const r = await call("run_process", {
      argv: ["sh", "-c", "cat; echo done"],
      stdin: "one shot\n",
      yield_ms: 30_000,
    });
    expect(r.structuredContent).toMatchObject({ status: "exited", exit_code: 0, stdout: "one shot\ndone\n" });
    // The write is evidenced as every write is: a receipt of its own, after the start's.
    const { doc } = await runMainJson<Json[]>(["receipts", "list", "--json", "--limit", "5"], { home: mcp.home });
    const write = doc.find((x: Json) => x.kind === "request" && x.mcp_tool === "run_process");
    expect(write, JSON.stringify(doc)).toBeDefined();
  });
});
