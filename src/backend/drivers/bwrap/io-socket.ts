// The backend's socket for one live sandbox (docs/drivers.md, "Entering"): the sandbox's
// init connects to it once per stream of a command (stdin, stdout, stderr) and once
// per forwarded connection, and announces each with the token the backend chose for
// it. The socket is bound read-only into that sandbox only; anything inside may
// connect, so a connection whose first line is not a token the backend is waiting
// for is closed, and only so many may wait to say theirs.

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { TOKEN_LENGTH } from "../../../sandbox-init/init.js";

/** The longest socket path bound by name (sockaddr_un holds 108 bytes with its NUL). */
const MAX_SOCKET_PATH = 100;
/** How long a connection may take to say its token. */
const ANNOUNCE_TIMEOUT_MS = 10_000;
/**
 * Connections that have not said their token yet, at most, beyond one per token
 * awaited: a burst of commands opens as many at once as they have streams; more than
 * that is something inside the sandbox that is not the init.
 */
const SPARE_UNANNOUNCED = 64;

export class StreamSocket {
  private readonly server: net.Server;
  private readonly waiting = new Map<string, (socket: net.Socket) => void>();
  private unannounced = 0;

  constructor(readonly path: string) {
    this.server = net.createServer((socket) => this.accept(socket));
    this.server.on("error", () => {
      // A listening socket's errors after listen() end nothing we rely on.
    });
  }

  /** Listens; the socket file is made reachable for `owner` (the sandbox's uid) only. */
  listen(owner: { uid: number; gid: number } | null): Promise<void> {
    fs.rmSync(this.path, { force: true });
    // A Unix socket's path must fit sockaddr_un (108 bytes): a long one is bound through
    // its directory's descriptor (/proc/self/fd/N/io.sock names the same file).
    const dirFd =
      Buffer.byteLength(this.path) > MAX_SOCKET_PATH
        ? fs.openSync(path.dirname(this.path), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY)
        : null;
    const bindAt = dirFd === null ? this.path : `/proc/self/fd/${dirFd}/${path.basename(this.path)}`;
    return new Promise((resolve, reject) => {
      const closeDir = () => {
        if (dirFd !== null) fs.closeSync(dirFd);
      };
      this.server.once("error", (err) => {
        closeDir();
        reject(err);
      });
      this.server.listen(bindAt, () => {
        closeDir();
        this.server.removeAllListeners("error");
        this.server.on("error", () => {});
        try {
          if (owner !== null) fs.chownSync(this.path, owner.uid, owner.gid);
          fs.chmodSync(this.path, 0o600);
          resolve();
        } catch (err) {
          reject(err);
        }
      });
    });
  }

  /** A new token; the connection that announces it is handed to `take` (once). */
  expect(take: (socket: net.Socket) => void): string {
    const token = randomBytes(TOKEN_LENGTH / 2).toString("hex");
    this.waiting.set(token, take);
    return token;
  }

  /** A token no longer awaited (its command ended or never started). */
  forget(token: string | null): void {
    if (token !== null) this.waiting.delete(token);
  }

  close(): void {
    this.waiting.clear();
    this.server.close();
    fs.rmSync(this.path, { force: true });
  }

  private accept(socket: net.Socket): void {
    if (this.unannounced >= this.waiting.size + SPARE_UNANNOUNCED) {
      socket.destroy();
      return;
    }
    this.unannounced++;
    let head = Buffer.alloc(0);
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      this.unannounced--;
      socket.off("data", onData);
      socket.setTimeout(0);
      return true;
    };
    const refuse = () => {
      if (settle()) socket.destroy();
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      if (head.length <= TOKEN_LENGTH) return;
      const token = head.subarray(0, TOKEN_LENGTH).toString("latin1");
      const take = this.waiting.get(token);
      if (head[TOKEN_LENGTH] !== 0x0a || take === undefined) return refuse();
      this.waiting.delete(token);
      settle();
      socket.pause();
      const rest = head.subarray(TOKEN_LENGTH + 1);
      if (rest.length > 0) socket.unshift(rest);
      take(socket);
    };
    socket.on("data", onData);
    socket.on("error", refuse);
    socket.on("close", refuse);
    socket.setTimeout(ANNOUNCE_TIMEOUT_MS, refuse);
  }
}
