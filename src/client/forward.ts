// A client of the port-forward route (docs/protocol.md, "Port forwarding"): one local
// TCP connection joined, over one WebSocket to …/sandbox/{id}/port-forward/{port}, to a
// connection to that port on the sandbox's own loopback. Over the endpoint's Unix socket
// or TCP (with its key), so a remote backend's sandboxes are reachable too.

import type net from "node:net";
import type { BackendError } from "../common/errors.js";
import type { Endpoint } from "./endpoint.js";
import { webSocketTo, whenRefused } from "./terminal.js";

/** Bytes sent on the WebSocket and not yet written, at most (then the local socket is paused). */
const HIGH_WATER = 256 * 1024;
const EOF_MESSAGE = JSON.stringify({ type: "eof" });
/** The route's close code when the sandbox stopped or ended (its reason says which). */
const CLOSE_SANDBOX_ENDED = 4001;

/** How one forwarded connection ended. */
export type ForwardEnd =
  /** The backend refused it before joining (nothing listens, the sandbox does not run, …). */
  | { kind: "refused"; error: BackendError }
  /** Either side closed it. */
  | { kind: "closed" }
  /** The sandbox stopped or ended while it was open. */
  | { kind: "sandbox_ended"; reason: string }
  /** The connection inside failed, or the one to the backend dropped. */
  | { kind: "failed"; reason: string };

/**
 * Joins `local` (paused until joined) to `port` inside the sandbox at `path`; resolves
 * once the connection ended, saying how. The local socket is ended (or, on a failure,
 * reset) with it.
 */
export async function forwardConnection(endpoint: Endpoint, path: string, local: net.Socket): Promise<ForwardEnd> {
  local.pause();
  local.on("error", () => {});
  let ws: Awaited<ReturnType<typeof webSocketTo>>;
  try {
    ws = await webSocketTo(endpoint, path);
  } catch (err) {
    local.destroy();
    return { kind: "refused", error: err as BackendError };
  }
  return new Promise<ForwardEnd>((resolve) => {
    let joined = false;
    let end: ForwardEnd | null = null;
    whenRefused(ws, endpoint, "connection closed", (error) => {
      if (joined) return;
      local.destroy();
      resolve({ kind: "refused", error });
    });
    ws.once("open", () => {
      joined = true;
      // Both handlers before anything else runs: no message can come first.
      join(ws, local, (e) => {
        end ??= e;
      });
      ws.once("close", () => resolve(end ?? { kind: "closed" }));
    });
    local.once("close", () => {
      if (!joined) ws.terminate();
    });
  });
}

function join(ws: Awaited<ReturnType<typeof webSocketTo>>, local: net.Socket, said: (e: ForwardEnd) => void): void {
  let paused = false;
  const resumeWhenTaken = () => {
    if (paused && ws.bufferedAmount < HIGH_WATER) {
      paused = false;
      local.resume();
    }
  };
  local.on("data", (chunk: Buffer) => {
    if (ws.readyState !== ws.OPEN) return;
    ws.send(chunk, { binary: true }, resumeWhenTaken);
    if (ws.bufferedAmount >= HIGH_WATER) {
      paused = true;
      local.pause();
    }
  });
  local.on("end", () => {
    if (ws.readyState === ws.OPEN) ws.send(EOF_MESSAGE);
  });
  local.on("close", () => {
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000, "client closed");
  });
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (!isBinary) {
      if (data.toString("utf8") === EOF_MESSAGE) local.end();
      return;
    }
    if (!local.write(data)) {
      ws.pause();
      local.once("drain", () => ws.resume());
    }
  });
  ws.on("error", () => {
    // 'close' follows and says the end.
  });
  ws.on("close", (code: number, reason: Buffer) => {
    const why = reason.toString();
    if (code === CLOSE_SANDBOX_ENDED) said({ kind: "sandbox_ended", reason: why || "the sandbox stopped" });
    else if (code === 1000) said({ kind: "closed" });
    else
      said({
        kind: "failed",
        reason: why || (code === 1006 ? "the backend went away without a word" : `closed (${code})`),
      });
    // What the inside sent is written first; a failure drops the local connection.
    if (code === 1000) local.end();
    else local.destroy();
  });
  local.resume();
}
