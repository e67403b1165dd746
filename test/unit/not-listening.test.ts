// A request that finds nobody listening on the local daemon's socket (absent, or
// refusing) provably sent nothing. The HTTP client, a transport, reports just that;
// the CLI (src/cli/local-start.ts) starts the daemon and sends the request once, for
// the first time. A start that fails is the answer: not sent, saying why. A real HTTP
// server on a real socket stands in for the daemon that the start brings up.

import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BackendError } from "../../src/common/errors.js";
import { parseApiUrl } from "../../src/client/endpoint.js";
import { HttpClient } from "../../src/client/http.js";
import { StartingLocalDaemon } from "../../src/cli/local-start.js";
import { classifyObservation } from "../../src/receipts/classify.js";
import { tempDir } from "../support/temp.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function clientFor(socketPath: string): HttpClient {
  const client = new HttpClient({
    profile: "local",
    insecure: false,
    ...parseApiUrl(`unix:${socketPath}`),
    apiKey: null,
    autoStart: true,
  });
  cleanups.push(() => client.close());
  return client;
}

function socketPath(): string {
  const dir = tempDir("sbx-nl-");
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, "daemon.sock");
}

describe("a request to a local socket nobody listens on", () => {
  it("is reported by the HTTP client as not sent; the client starts nothing", async () => {
    const file = socketPath();
    const obs = await clientFor(file).send({
      method: "POST",
      path: "/x",
      body: Buffer.from("{}"),
      idempotencyKey: "k0",
    });
    expect(obs).toMatchObject({ kind: "transport", sent: false, code: "ENOENT" });
    expect(fs.existsSync(file)).toBe(false);
  });

  it("the CLI starts the backend, then sends the request once: the server sees one request", async () => {
    const file = socketPath();
    const seen: string[] = [];
    let starts = 0;
    const client = new StartingLocalDaemon(clientFor(file), async () => {
      starts++;
      const server = http.createServer((req, res) => {
        seen.push(`${req.method} ${req.url} ${req.headers["idempotency-key"]}`);
        res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      });
      await new Promise<void>((resolve) => server.listen(file, resolve));
      cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    });
    const obs = await client.send({
      method: "POST",
      path: "/api/v1/sandbox/default/execute",
      body: Buffer.from("{}"),
      idempotencyKey: "k1",
    });
    expect(obs).toMatchObject({ kind: "answer", status: 200 });
    expect(starts).toBe(1);
    expect(seen).toEqual(["POST /api/v1/sandbox/default/execute k1"]);
  });

  it("a start that fails is the answer: not sent, so not_started, with the reason", async () => {
    const client = new StartingLocalDaemon(clientFor(socketPath()), async () => {
      throw new BackendError("daemon_unavailable", "the local backend did not start", null, "see daemon.log");
    });
    const obs = await client.send({ method: "POST", path: "/x", body: Buffer.from("{}"), idempotencyKey: "k2" });
    expect(obs).toMatchObject({
      kind: "transport",
      sent: false,
      code: "daemon_unavailable",
      message: "the local backend did not start (see daemon.log)",
    });
    expect(classifyObservation(obs, "dispatch", "execute").classification).toBe("not_started");
  });

  it("a caller with its own recovery is told, and nothing is started", async () => {
    let starts = 0;
    const client = new StartingLocalDaemon(clientFor(socketPath()), async () => {
      starts++;
    });
    const obs = await client.send({ method: "GET", path: "/x", startBackend: false });
    expect(obs).toMatchObject({ kind: "transport", sent: false, code: "ENOENT" });
    expect(starts).toBe(0);
  });
});
