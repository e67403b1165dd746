// One sandbox's egress proxy (docs/network.md, "Allow-list"): two servers on Unix
// sockets in the sandbox's run directory, bound into the sandbox, which the sandbox's
// init forwards its loopback proxy ports to: HTTP (CONNECT tunnels and plain http://
// requests) on one, SOCKS5 on the other.
//
// Every connection is decided by the sandbox's policy as it is at that moment
// (policy.ts): the name first, then every address the proxy resolved it to (resolver.ts;
// the sandbox resolves nothing). A refusal is answered in the client's protocol: HTTP
// 403 with a body that says why, or SOCKS5 reply 2 (connection not allowed by ruleset).
// A CONNECT tunnel whose TLS ClientHello names another host than the CONNECT target is
// closed before a byte of it reaches the destination (sni.ts).
//
// Bounded per sandbox: at most `maxConnections` at once (past it, 503 or a SOCKS
// refusal), request heads of at most 16 KiB, and data moved with back-pressure.

import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { Socks5Server } from "@pondwader/socks5-server";
import type { EgressPolicy } from "./policy.js";
import { decideAddress, decideName, isAddress, normalName } from "./policy.js";
import type { Resolver } from "./resolver.js";
import { MAX_HELLO_BYTES, readClientHello } from "./sni.js";
import { EGRESS_HTTP_SOCKET, EGRESS_SOCKS_SOCKET } from "../../sandbox-init/egress.js";

/** One connection the sandbox asked the proxy for, allowed or refused. */
export interface EgressConnection {
  /** The sandbox's change count when it was last decided or ended (EgressHub stamps it; 0 until then). */
  seq: number;
  at: string;
  host: string;
  port: number;
  protocol: "http" | "connect" | "socks5";
  allowed: boolean;
  /** Why it was refused, or why an allowed one failed (the destination did not answer); null otherwise. */
  reason: string | null;
  /** The address reached (allowed) or null. */
  address: string | null;
  bytes_out: number;
  bytes_in: number;
  ended_at: string | null;
}

export interface EgressProxyOptions {
  /** The sandbox's run directory: the sockets are made there (EGRESS_HTTP_SOCKET, EGRESS_SOCKS_SOCKET). */
  runDir: string;
  /** Who the socket belongs to (the sandbox's uid when the backend is root); null: the backend's user. */
  owner: { uid: number; gid: number } | null;
  /** The sandbox's policy now: read at each connection, so a change applies to the next one. */
  policy: () => EgressPolicy;
  resolve: Resolver;
  /** Connections at once; past it new ones are refused. */
  maxConnections: number;
  /** Told when a connection was decided (`ended_at` null) and again when it ended. */
  onConnection: (c: EgressConnection) => void;
  now: () => number;
}

/** The start of a refusal's body (docs/network.md, "What a denial looks like"). */
export const BLOCKED = "blocked by the sandbox's egress policy";

/** How long a destination may take to accept a connection. */
const CONNECT_TIMEOUT_MS = 30_000;
const SOCKS_VERSION = 0x05;
const NO_ACCEPTABLE_METHOD = 0xff;

type Decided = { ok: true; address: string } | { ok: false; reason: string; denied: boolean };

export class EgressProxy {
  private readonly servers: { server: net.Server; path: string }[];
  private readonly http: http.Server;
  private readonly socks = new Socks5Server();
  private readonly active = new Set<net.Socket>();

  constructor(private readonly opts: EgressProxyOptions) {
    this.http = http.createServer({ maxHeaderSize: 16 * 1024 });
    this.http.on("connect", (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      void this.tunnel(req, socket, head);
    });
    this.http.on("request", (req, res) => void this.forward(req, res));
    this.http.on("clientError", (_err, socket) => {
      if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
      else socket.destroy();
    });
    this.socks.setConnectionHandler((conn, sendStatus) => {
      void this.socksConnect(conn.socket as net.Socket, conn.destAddress, conn.destPort, sendStatus);
    });
    this.servers = [
      { file: EGRESS_HTTP_SOCKET, socks: false },
      { file: EGRESS_SOCKS_SOCKET, socks: true },
    ].map(({ file, socks }) => {
      const server = net.createServer((socket) => this.accept(socket, socks));
      server.on("error", () => {});
      return { server, path: path.join(opts.runDir, file) };
    });
  }

  async listen(): Promise<void> {
    for (const { server, path: at } of this.servers) {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(at, () => {
          try {
            const owner = this.opts.owner;
            if (owner !== null) fs.chownSync(at, owner.uid, owner.gid);
            fs.chmodSync(at, 0o600);
            resolve();
          } catch (err) {
            reject(err);
          }
        });
      });
    }
  }

  /** Connections open now. */
  get connections(): number {
    return this.active.size;
  }

  close(): void {
    for (const { server } of this.servers) server.close();
    for (const socket of this.active) socket.destroy();
    this.active.clear();
  }

  private accept(socket: net.Socket, socks: boolean): void {
    socket.on("error", () => {});
    if (this.active.size >= this.opts.maxConnections) {
      const reason = `too many connections from this sandbox at once (at most ${this.opts.maxConnections})`;
      this.note({ host: "", port: 0, protocol: socks ? "socks5" : "http", allowed: false, reason });
      // SOCKS5: no method acceptable; HTTP: 503, said.
      if (socks) socket.end(Buffer.from([SOCKS_VERSION, NO_ACCEPTABLE_METHOD]));
      else socket.end(httpAnswer(503, "Service Unavailable", `egress proxy: ${reason}\n`));
      return;
    }
    this.active.add(socket);
    socket.once("close", () => this.active.delete(socket));
    if (socks) this.socks._handleConnection(socket);
    else this.http.emit("connection", socket);
  }

  /** Whether host:port may be reached now, and at which address. */
  private async decide(host: string, port: number): Promise<Decided> {
    const policy = this.opts.policy();
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      return { ok: false, reason: `port ${port} is not a port`, denied: true };
    }
    if (isAddress(host)) {
      const d = decideAddress(policy, host, null);
      return d.allowed
        ? { ok: true, address: host.replace(/^\[|\]$/g, "") }
        : { ok: false, reason: d.reason, denied: true };
    }
    const name = normalName(host);
    const byName = decideName(policy, name);
    if (!byName.allowed) return { ok: false, reason: byName.reason, denied: true };
    let addresses: string[];
    try {
      addresses = await this.opts.resolve(name);
    } catch (err) {
      return {
        ok: false,
        reason: `${name} does not resolve (${(err as NodeJS.ErrnoException).code ?? "error"})`,
        denied: false,
      };
    }
    // Every address must be allowed: one denied address is a rebinding, whichever would be used.
    for (const address of addresses) {
      const d = decideAddress(policy, address, name);
      if (!d.allowed) return { ok: false, reason: d.reason, denied: true };
    }
    const first = addresses[0];
    if (first === undefined) return { ok: false, reason: `${name} resolves to no address`, denied: false };
    return { ok: true, address: first };
  }

  /** A CONNECT tunnel: decided, then joined once the client's TLS names the same host. */
  private async tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    const target = parseAuthority(req.url ?? "");
    if (target === null) {
      client.end(httpAnswer(400, "Bad Request", "egress proxy: CONNECT needs host:port\n"));
      return;
    }
    const { host, port } = target;
    const decided = await this.decide(host, port);
    if (!decided.ok) {
      this.note({ host, port, protocol: "connect", allowed: !decided.denied, reason: decided.reason });
      client.end(
        decided.denied
          ? blockedAnswer(host, decided.reason)
          : httpAnswer(502, "Bad Gateway", `egress proxy: ${decided.reason}\n`),
      );
      return;
    }
    const upstream = await connectTo(decided.address, port).catch((err: Error) => err);
    if (upstream instanceof Error) {
      this.note({ host, port, protocol: "connect", allowed: true, reason: upstream.message });
      client.end(httpAnswer(502, "Bad Gateway", `egress proxy: ${host}:${port}: ${upstream.message}\n`));
      return;
    }
    const record = this.note({
      host,
      port,
      protocol: "connect",
      allowed: true,
      reason: null,
      address: decided.address,
    });
    client.write("HTTP/1.1 200 Connection established\r\n\r\n");
    // What the destination says flows at once (a server may speak first); what the
    // client says waits until its first bytes are known not to name another TLS host.
    upstream.pipe(client);
    let first = head;
    const check = () => {
      const hello = readClientHello(first);
      if (hello.state === "partial" && first.length < MAX_HELLO_BYTES) return false;
      client.removeListener("data", onData);
      client.pause();
      const sni = hello.state === "hello" ? hello.serverName : null;
      if (sni !== null && normalName(sni) !== normalName(host)) {
        record.allowed = false;
        record.reason = `the TLS handshake asks for ${sni}, the CONNECT was for ${host}`;
        upstream.destroy();
        client.destroy();
        return true;
      }
      upstream.write(first);
      client.pipe(upstream);
      client.resume();
      return true;
    };
    const onData = (chunk: Buffer) => {
      first = Buffer.concat([first, chunk]);
      check();
    };
    this.whenClosed(record, client, upstream);
    if (!check()) {
      client.on("data", onData);
      client.resume();
    }
  }

  /** A plain http:// request through the proxy (absolute-form URL). */
  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res.writeHead(400, { "content-type": "text/plain" }).end("egress proxy: ask for an absolute http:// URL\n");
      return;
    }
    if (url.protocol !== "http:") {
      res
        .writeHead(400, { "content-type": "text/plain" })
        .end("egress proxy: only http:// is forwarded; https goes through CONNECT\n");
      return;
    }
    const host = url.hostname;
    const port = url.port === "" ? 80 : Number(url.port);
    const decided = await this.decide(host, port);
    if (!decided.ok) {
      this.note({ host: unbracket(host), port, protocol: "http", allowed: !decided.denied, reason: decided.reason });
      const body = decided.denied
        ? `${BLOCKED}: ${unbracket(host)} not allowed\n${decided.reason}\n`
        : `egress proxy: ${decided.reason}\n`;
      res
        .writeHead(decided.denied ? 403 : 502, { "content-type": "text/plain; charset=utf-8", connection: "close" })
        .end(body);
      return;
    }
    const record = this.note({
      host: unbracket(host),
      port,
      protocol: "http",
      allowed: true,
      reason: null,
      address: decided.address,
    });
    const headers = { ...req.headers };
    for (const h of ["proxy-connection", "proxy-authorization", "connection", "keep-alive"]) delete headers[h];
    const upstream = http.request({
      host: decided.address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      agent: false,
      timeout: CONNECT_TIMEOUT_MS,
    });
    upstream.on("socket", (socket: net.Socket) => this.whenClosed(record, null, socket));
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("timeout", () => upstream.destroy(new Error("the destination did not answer")));
    upstream.on("error", (err) => {
      record.reason = err.message;
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(`egress proxy: ${err.message}\n`);
      else res.destroy();
    });
    req.pipe(upstream);
  }

  private async socksConnect(
    client: net.Socket,
    host: string | undefined,
    port: number | undefined,
    sendStatus: (
      status: "REQUEST_GRANTED" | "CONNECTION_NOT_ALLOWED" | "HOST_UNREACHABLE" | "CONNECTION_REFUSED",
    ) => void,
  ): Promise<void> {
    client.on("error", () => {});
    const target = host ?? "";
    const decided = await this.decide(target, port ?? 0);
    if (!decided.ok) {
      this.note({
        host: target,
        port: port ?? 0,
        protocol: "socks5",
        allowed: !decided.denied,
        reason: decided.reason,
      });
      sendStatus(decided.denied ? "CONNECTION_NOT_ALLOWED" : "HOST_UNREACHABLE");
      return;
    }
    const upstream = await connectTo(decided.address, port ?? 0).catch((err: NodeJS.ErrnoException) => err);
    if (upstream instanceof Error) {
      this.note({ host: target, port: port ?? 0, protocol: "socks5", allowed: true, reason: upstream.message });
      sendStatus(
        (upstream as NodeJS.ErrnoException).code === "ECONNREFUSED" ? "CONNECTION_REFUSED" : "HOST_UNREACHABLE",
      );
      return;
    }
    const record = this.note({
      host: target,
      port: port ?? 0,
      protocol: "socks5",
      allowed: true,
      reason: null,
      address: decided.address,
    });
    sendStatus("REQUEST_GRANTED");
    this.whenClosed(record, client, upstream);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Records a decided connection (and tells it); the record is updated in place until it ends. */
  private note(c: {
    host: string;
    port: number;
    protocol: EgressConnection["protocol"];
    allowed: boolean;
    reason: string | null;
    address?: string;
  }): EgressConnection {
    const record: EgressConnection = {
      seq: 0,
      at: new Date(this.opts.now()).toISOString(),
      host: c.host,
      port: c.port,
      protocol: c.protocol,
      allowed: c.allowed,
      reason: c.reason,
      address: c.address ?? null,
      bytes_out: 0,
      bytes_in: 0,
      ended_at: c.address === undefined ? new Date(this.opts.now()).toISOString() : null,
    };
    this.opts.onConnection(record);
    return record;
  }

  /** When the destination's connection closes: its bytes counted, the client's side closed too. */
  private whenClosed(record: EgressConnection, client: net.Socket | null, upstream: net.Socket): void {
    upstream.on("error", () => client?.destroy());
    client?.on("close", () => upstream.destroy());
    upstream.once("close", () => {
      client?.destroy();
      record.bytes_out = upstream.bytesWritten;
      record.bytes_in = upstream.bytesRead;
      record.ended_at = new Date(this.opts.now()).toISOString();
      this.opts.onConnection(record);
    });
  }
}

/** A connection to a decided address, once it is accepted. */
function connectTo(address: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: address, port });
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy(new Error("the destination did not answer")));
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.setTimeout(0);
      socket.removeListener("error", reject);
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}

/** host:port of a CONNECT (IPv6 in brackets), or null. */
export function parseAuthority(authority: string): { host: string; port: number } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s/]+):(\d{1,5})$/.exec(authority);
  if (m === null) return null;
  return { host: unbracket(m[1]!), port: Number(m[2]) };
}

function unbracket(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

function httpAnswer(status: number, text: string, body: string): string {
  return `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** The answer to a refused CONNECT: 403, saying which host and why. */
function blockedAnswer(host: string, reason: string): string {
  return httpAnswer(403, "Forbidden", `${BLOCKED}: ${host} not allowed\n${reason}\n`);
}
