// The Node transport's raw read (src/platform/raw-get.ts) against a real server on a
// real Unix socket: whole bodies byte-exact, either framing it handles, the ones it
// hands back to node:http, and every way an answer can end early said as an error.

import crypto from "node:crypto";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTransport } from "../../src/platform/http-transport.js";
import { RawGetUnsupported, rawGet } from "../../src/platform/raw-get.js";
import { tempDir } from "../support/temp.js";
import { until } from "../support/wait.js";

const BIG = crypto.randomBytes(20 * 1024 * 1024 + 17);
let socketPath: string;
let server: http.Server;
let closedConnections = 0;
let seenHeaders: http.IncomingHttpHeaders = {};

beforeAll(async () => {
  socketPath = path.join(tempDir(), "raw.sock");
  server = http.createServer((req, res) => {
    seenHeaders = req.headers;
    req.socket.once("close", () => closedConnections++);
    const url = new URL(req.url ?? "/", "http://x");
    switch (url.pathname) {
      case "/length":
        res.writeHead(200, {
          "Content-Type": "application/octet-stream",
          "Content-Length": BIG.length,
          "Sbx-Offset": "5",
        });
        res.end(BIG);
        return;
      case "/empty":
        res.writeHead(200, { "Content-Length": 0 });
        res.end();
        return;
      case "/chunked":
        res.writeHead(200, { "Content-Type": "application/octet-stream" });
        res.write(BIG.subarray(0, 1000));
        res.end(BIG.subarray(1000, 3000));
        return;
      case "/short":
        res.writeHead(200, { "Content-Length": BIG.length });
        res.write(BIG.subarray(0, 100_000), () => res.destroy());
        return;
      case "/endless":
        // Bytes until the client goes away.
        res.writeHead(200, { "Content-Length": 1024 * 1024 * 1024 });
        {
          const pump = () => {
            while (res.write(BIG.subarray(0, 65536))) {}
          };
          res.on("drain", pump);
          pump();
        }
        return;
      case "/json":
        res.writeHead(404, { "Content-Type": "application/json", "Content-Length": 30 });
        res.end('{"error":{"code":"not_found"}}');
        return;
      default:
        res.writeHead(500);
        res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function drain(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

const octet = { accept: "application/octet-stream" };

describe("rawGet", () => {
  it("reads a body of Content-Length bytes whole, byte-exact, with its headers", async () => {
    const res = await rawGet({ socketPath, target: "/length?x=1", headers: octet });
    expect(res.status).toBe(200);
    expect(res.headers["sbx-offset"]).toBe("5");
    expect(seenHeaders.accept).toBe("application/octet-stream");
    const got = await drain(res.body);
    expect(got.length).toBe(BIG.length);
    expect(got.equals(BIG)).toBe(true);
  });

  it("reads an empty body and a JSON error answer", async () => {
    const empty = await rawGet({ socketPath, target: "/empty", headers: octet });
    expect((await drain(empty.body)).length).toBe(0);
    const json = await rawGet({ socketPath, target: "/json", headers: octet });
    expect(json.status).toBe(404);
    expect(await json.text()).toBe('{"error":{"code":"not_found"}}');
  });

  it("reads a body that ends with its connection", async () => {
    const lone = path.join(tempDir(), "close.sock");
    const raw = net.createServer((socket) => {
      socket.once("data", () => {
        socket.end(
          Buffer.concat([Buffer.from("HTTP/1.0 200 OK\r\nContent-Type: x\r\n\r\n"), BIG.subarray(0, 300_000)]),
        );
      });
    });
    await new Promise<void>((resolve) => raw.listen(lone, resolve));
    try {
      const res = await rawGet({ socketPath: lone, target: "/", headers: octet });
      expect((await drain(res.body)).equals(BIG.subarray(0, 300_000))).toBe(true);
    } finally {
      await new Promise<void>((resolve) => raw.close(() => resolve()));
    }
  });

  it("refuses a chunked answer before handing on a byte, and the transport asks node:http instead", async () => {
    await expect(rawGet({ socketPath, target: "/chunked", headers: octet })).rejects.toBeInstanceOf(RawGetUnsupported);
    const transport = openTransport(socketPath);
    try {
      const res = await transport.request(new URL("http://localhost/chunked"), { method: "GET", headers: octet });
      expect((await drain(res.body)).equals(BIG.subarray(0, 3000))).toBe(true);
    } finally {
      await transport.close();
    }
  });

  it("says a body cut short by the server as a reset connection, never as its end", async () => {
    const res = await rawGet({ socketPath, target: "/short", headers: octet });
    await expect(drain(res.body)).rejects.toMatchObject({ code: "ECONNRESET" });
  });

  it("stops reading and closes its connection when cancelled, aborted or left early", async () => {
    const before = closedConnections;
    const cancelled = await rawGet({ socketPath, target: "/endless", headers: octet });
    const it1 = cancelled.body[Symbol.asyncIterator]();
    await it1.next();
    cancelled.cancel();
    await until(() => closedConnections === before + 1);

    const controller = new AbortController();
    const aborted = await rawGet({ socketPath, target: "/endless", headers: octet, signal: controller.signal });
    const it2 = aborted.body[Symbol.asyncIterator]();
    await it2.next();
    controller.abort();
    await expect(drain({ [Symbol.asyncIterator]: () => it2 })).rejects.toMatchObject({ name: "AbortError" });
    await until(() => closedConnections === before + 2);

    const left = await rawGet({ socketPath, target: "/endless", headers: octet });
    for await (const _ of left.body) break;
    await until(() => closedConnections === before + 3);
  });

  it("never writes a header that carries a line break", async () => {
    expect(() =>
      rawGet({ socketPath, target: "/length", headers: { ...octet, authorization: "ApiKey a\r\nX-Evil: 1" } }),
    ).toThrow(/Invalid character/);
  });

  it("says a socket nobody listens on as the connect error it is", async () => {
    await expect(
      rawGet({ socketPath: path.join(tempDir(), "nobody.sock"), target: "/", headers: octet }),
    ).rejects.toMatchObject({ code: "ENOENT" });
  });
});
