// The client of the terminal route (src/client/terminal.ts) against a server that
// accepts the WebSocket and then closes it before attaching it (a backend stopping, a
// proxy dropping the connection): the client says the connection ended, as it does
// when one ends later, instead of waiting for ever for an `attached` that cannot come;
// and `sbx attach` on a real terminal says so and exits 255 (it may still run), the
// terminal's mode restored. And `sbx exec -it` whose command started and whose backend
// is gone before its terminal could be opened says it may still run (255), never that
// nothing ran (75: safe to send again, which would run it twice).

import http from "node:http";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { parseApiUrl } from "../../src/client/endpoint.js";
import { openTerminal, TerminalClosedBeforeAttach } from "../../src/client/terminal.js";
import { sbxEnv } from "../support/cli.js";
import { runMainJson } from "../support/in-process.js";
import { sseFrame } from "../support/misbehaving-server.js";
import { sbxSession } from "../support/outer-terminal.js";
import { itNeeding } from "../support/requirements.js";
import { tempDir } from "../support/temp.js";

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A server on a Unix socket whose WebSocket route closes every connection at once, with this code and reason. */
async function closingAtOnce(code: number, reason: string): Promise<string> {
  const socketPath = path.join(tempDir("sbx-term-close-"), "daemon.sock");
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server });
  wss.on("connection", (ws) => ws.close(code, reason));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return socketPath;
}

it("a terminal closed after the upgrade, before it was attached, is said dropped with the server's reason", async () => {
  const socketPath = await closingAtOnce(1001, "the backend is stopping");
  const endpoint = {
    ...parseApiUrl(`unix:${socketPath}`),
    profile: null,
    apiKey: null,
    autoStart: false,
    insecure: false,
  };
  const opened = openTerminal(endpoint, "/api/v1/sandbox/default/executions/exe_x/terminal?offset=0", {
    onOutput: () => undefined,
  });
  await expect(opened).rejects.toBeInstanceOf(TerminalClosedBeforeAttach);
  await expect(opened).rejects.toMatchObject({ reason: "the backend is stopping" });
});

itNeeding("pty", "sbx attach to a terminal closed before it was attached: said, 255, the mode restored", async () => {
  const socketPath = await closingAtOnce(1001, "the backend is stopping");
  const home = tempDir("sbx-term-close-home-");
  // A whole execution id and a sandbox name: nothing is looked up before the terminal.
  const s = sbxSession(path.join(home, "session"), "attach exe_0123456789abcdef0123 -s default", {
    cwd: home,
    env: { ...sbxEnv(home), SBX_API_URL: `unix:${socketPath}` },
  });
  try {
    await s.t.waitFor(
      "the connection to the backend ended (the backend is stopping); exe_0123456789abcdef0123 may still be running",
      "sbx to say the connection ended",
    );
    const end = await s.over();
    expect(end.code).toBe(255);
    expect(end.sameMode).toBe(true);
  } finally {
    s.t.kill();
  }
});

/**
 * A backend that starts the execute it is sent (its stream says `started`) and is gone
 * at once, before anything else can reach it: it stops listening as it answers.
 */
async function goneAfterStarting(executionId: string): Promise<string> {
  const socketPath = path.join(tempDir("sbx-term-gone-"), "daemon.sock");
  const server = http.createServer((req, res) => {
    server.close();
    req.resume();
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.end(
      sseFrame(1, "started", {
        execution_id: executionId,
        sandbox_id: "default",
        started_at: new Date().toISOString(),
      }),
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return socketPath;
}

itNeeding(
  "pty",
  "sbx exec -it whose backend is gone once its command started: it may still run (255), not 75",
  async () => {
    const eid = "exe_00112233445566778899";
    const socketPath = await goneAfterStarting(eid);
    const home = tempDir("sbx-term-gone-home-");
    const s = sbxSession(path.join(home, "session"), "exec -it -s default -- sh", {
      cwd: home,
      env: { ...sbxEnv(home), SBX_API_URL: `unix:${socketPath}` },
    });
    try {
      await s.t.waitFor(`${eid} may still be running`, "sbx to say it may still run");
      const end = await s.over();
      expect(end.code).toBe(255);
      expect(end.sameMode).toBe(true);
    } finally {
      s.t.kill();
    }
    // Its receipt says it started, and nothing was sent again.
    const { doc } = await runMainJson<Array<{ classification: string; execution_id: string }>>(
      ["receipts", "list", "--json"],
      { home },
    );
    expect(doc).toMatchObject([{ classification: "running", execution_id: eid }]);
  },
);
