// The port-forward route (docs/protocol.md, "Port forwarding"): one WebSocket is one
// connection to a port on a sandbox's own loopback, over the Unix socket and over TCP
// with the token; refusals are JSON answers before the switch; a half-close is passed
// on; a sandbox without isolation's loopback is the host's.

import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeNeeding } from "../support/requirements.js";
import { openWebSocket } from "../support/websocket.js";
import { startTestBackend, type TestBackend, until } from "./support.js";

const TOKEN = "port-forward-test-token-0123456789abcdef";
const EOF = JSON.stringify({ type: "eof" });

/** Opens the route; rejects with the answer's status and body when refused. */
async function join(url: string, headers: Record<string, string> = {}) {
  const c = await openWebSocket(url, headers);
  return { ...c, received: () => c.binary().toString() };
}

/** A server on the host's loopback that answers what it read, upper-cased, once its client is done sending. */
async function shoutServer(): Promise<{ port: number; close(): void }> {
  const server = net.createServer({ allowHalfOpen: true }, (s) => {
    let got = "";
    s.on("data", (c: Buffer) => {
      got += c.toString();
    });
    s.on("end", () => s.end(got.toUpperCase()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() };
}

describe("port forwarding to a sandbox without isolation (its loopback is the host's)", () => {
  let b: TestBackend;
  let tcp: number;
  beforeAll(async () => {
    b = await startTestBackend({ listen: { host: "127.0.0.1", port: 0 }, token: TOKEN });
    tcp = b.handle.port!;
    const created = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "plain", isolation: "none" } });
    expect(created.status, created.text).toBe(201);
  });
  afterAll(async () => {
    await b?.stop();
  });

  it("joins a connection over TCP with the token; the client's half-close reaches the server, whose answer comes back", async () => {
    const server = await shoutServer();
    const url = `ws://127.0.0.1:${tcp}/api/v1/sandbox/plain/port-forward/${server.port}`;
    await expect(join(url)).rejects.toMatchObject({ status: 401 });
    const j = await join(url, { authorization: `Bearer ${TOKEN}` });
    j.ws.send(Buffer.from("hello"));
    j.ws.send(EOF);
    expect(await j.closed).toEqual({ code: 1000, reason: "closed" });
    expect(j.received()).toBe("HELLO");
    expect(j.text).toEqual([EOF]);
    server.close();
  });

  it("refusals are JSON answers before the switch: nothing listening (502), a bad port (400), no such sandbox (404), plain HTTP (426)", async () => {
    const closed = await shoutServer();
    closed.close();
    const unix = (path: string) => `ws+unix://${b.socketPath}:${path}`;
    await expect(join(unix(`/api/v1/sandbox/plain/port-forward/${closed.port}`))).rejects.toMatchObject({
      status: 502,
      body: expect.stringContaining('"code":"connection_refused"'),
    });
    await expect(join(unix("/api/v1/sandbox/plain/port-forward/99999"))).rejects.toMatchObject({
      status: 400,
      body: expect.stringContaining('"field":"port"'),
    });
    await expect(join(unix("/api/v1/sandbox/nosuch/port-forward/80"))).rejects.toMatchObject({
      status: 404,
      body: expect.stringContaining("sandbox_not_found"),
    });
    const plain = await b.api("GET", "/api/v1/sandbox/plain/port-forward/80");
    expect(plain.status).toBe(426);
    expect(plain.json.error.code).toBe("upgrade_required");
  });
});

describeNeeding(["bwrap", "tools"], "port forwarding into a live sandbox", () => {
  let b: TestBackend;
  beforeAll(async () => {
    b = await startTestBackend();
    const created = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "box", isolation: "bwrap" } });
    expect(created.status, created.text).toBe(201);
  });
  afterAll(async () => {
    await b?.stop();
  });
  const url = (port: number) => `ws+unix://${b.socketPath}:/api/v1/sandbox/box/port-forward/${port}`;

  it("a stopped sandbox is not started by a forward (409 sandbox_not_running)", async () => {
    await expect(join(url(8000))).rejects.toMatchObject({
      status: 409,
      body: expect.stringContaining('"code":"sandbox_not_running"'),
    });
    expect((await b.api("GET", "/api/v1/sandbox/box")).json.environment.state).toBe("stopped");
  });

  it("reaches a server on the sandbox's private loopback, half-close included; stopping the sandbox closes it 4001", async () => {
    // Answers what it read, upper-cased, once its client is done sending; then holds the next connection open.
    const script =
      "import socket\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('127.0.0.1',8000))\ns.listen()\nc,_=s.accept()\nd=b''\nwhile True:\n  x=c.recv(4096)\n  if not x: break\n  d+=x\nc.sendall(d.upper())\nc.close()\nc,_=s.accept()\nc.sendall(b'held')\nimport time\ntime.sleep(600)\n";
    const started = await b.api("POST", "/api/v1/sandbox/box/processes", {
      body: { command: ["python3", "-c", script] },
    });
    expect(started.status, started.text).toBe(201);
    const j = await until(() => join(url(8000)).catch(() => undefined), 30_000, "the server inside to listen");
    j.ws.send(Buffer.from("from the host"));
    j.ws.send(EOF);
    expect(await j.closed).toEqual({ code: 1000, reason: "closed" });
    expect(j.received()).toBe("FROM THE HOST");

    const held = await join(url(8000));
    await until(() => held.received() === "held", 10_000, "the greeting");
    const stopped = await b.api("POST", "/api/v1/sandbox/box/stop", { headers: { "Idempotency-Key": "pf-stop" } });
    expect(stopped.status, stopped.text).toBe(200);
    expect(await held.closed).toEqual({ code: 4001, reason: "the sandbox stopped" });
  });
});
