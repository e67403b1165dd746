// The port-forward route's WebSocket (docs/protocol.md, "Port forwarding"): one
// WebSocket is one connection to a port on a sandbox's own loopback, joined by the
// sandbox's driver before the upgrade. Binary messages are the connection's bytes both
// ways; `{"type":"eof"}` says a side will send nothing more (a half-close). Both ways
// hold back: the inside connection is read only while the WebSocket took what was
// sent (under HIGH_WATER), and the WebSocket is read only while the inside takes it.

import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import { EnvironmentEndedError } from "../drivers/index.js";
import { CLOSE_GOING_AWAY, CLOSE_NORMAL, CLOSE_POLICY } from "./terminal-socket.js";

/** Bytes sent to the client and not yet written to its connection, at most (then the inside is paused). */
const HIGH_WATER = 256 * 1024;
/** The sandbox's environment stopped or ended: the reason says which. */
export const CLOSE_SANDBOX_ENDED = 4001;
/** The connection inside failed (reset): the reason says how. */
export const CLOSE_CONNECTION_ERROR = 1011;

export const EOF_MESSAGE = JSON.stringify({ type: "eof" });

/** Every forwarded connection the backend holds, so that all end when it stops. */
export class Forwards {
  private readonly all = new Set<() => void>();

  /** Joins `ws` and `inside` until either ends. */
  relay(ws: WebSocket, inside: Duplex): void {
    const stop = relay(ws, inside, () => this.all.delete(stop));
    this.all.add(stop);
  }

  get count(): number {
    return this.all.size;
  }

  /** The backend stops: every forwarded connection ends (1001). */
  closeAll(): void {
    for (const stop of [...this.all]) stop();
  }
}

function relay(ws: WebSocket, inside: Duplex, onDone: () => void): () => void {
  let done = false;
  let paused = false;
  let failure: Error | null = null;
  const finish = (code: number, reason: string) => {
    if (done) return;
    done = true;
    onDone();
    inside.destroy();
    // A close reason is at most 123 bytes.
    ws.close(code, Buffer.from(reason).subarray(0, 120).toString());
  };
  const resumeWhenTaken = () => {
    if (paused && ws.bufferedAmount < HIGH_WATER) {
      paused = false;
      inside.resume();
    }
  };
  inside.on("data", (chunk: Buffer) => {
    ws.send(chunk, { binary: true }, resumeWhenTaken);
    if (ws.bufferedAmount >= HIGH_WATER) {
      paused = true;
      inside.pause();
    }
  });
  inside.on("end", () => {
    if (!done) ws.send(EOF_MESSAGE);
  });
  inside.on("error", (err) => {
    failure = err;
  });
  inside.on("close", () => {
    if (failure instanceof EnvironmentEndedError) finish(CLOSE_SANDBOX_ENDED, failure.message);
    else if (failure !== null) finish(CLOSE_CONNECTION_ERROR, `the connection inside failed: ${failure.message}`);
    else finish(CLOSE_NORMAL, "closed");
  });
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (done) return;
    if (isBinary) {
      if (!inside.write(data)) {
        ws.pause();
        inside.once("drain", () => ws.resume());
      }
      return;
    }
    if (data.toString("utf8") === EOF_MESSAGE) {
      inside.end();
      return;
    }
    ws.send(
      JSON.stringify({ type: "error", message: 'not a message of this route (binary bytes, or {"type":"eof"})' }),
    );
    finish(CLOSE_POLICY, "unknown message");
  });
  // The client went away: so does the connection inside.
  ws.on("close", () => finish(CLOSE_NORMAL, "client closed"));
  ws.on("error", () => finish(CLOSE_NORMAL, "client failed"));
  // The socket may have been paused where it was taken (its token read first).
  inside.resume();
  return () => finish(CLOSE_GOING_AWAY, "the backend is stopping");
}
