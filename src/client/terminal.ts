// A client of a terminal route (docs/protocol.md, "Terminals"): a WebSocket to
// …/executions/{eid}/terminal over the endpoint's Unix socket or TCP (with its key),
// carrying input and resizes one way, output and the exit the other. Only reads the
// run's state and types at it: opening one never starts anything.

import { BackendError, exitCodeOfAnswer } from "../common/errors.js";
import { type Endpoint, keyInClearProblem } from "./endpoint.js";
import { CERTIFICATE_HINT, isCertificateRefused } from "./observed.js";
import { redact } from "./redact.js";
import type { WebSocket } from "ws";

/** How a run on a terminal ended, as the route's `exit` message says. */
export interface TerminalExit {
  outcome: string;
  exit_code: number | null;
  signal: string | null;
  system_error: string | null;
  finished_at: string | null;
}

/** Why the connection ended. */
export type TerminalClose =
  | { kind: "exit"; exit: TerminalExit }
  /** Another client attached to the same run (the last one wins). */
  | { kind: "detached"; reason: string }
  /** The connection ended without an exit (the backend went away, the network dropped). */
  | { kind: "dropped"; reason: string };

export interface TerminalHandlers {
  /** Output; when it returns a promise, nothing more is read from the backend until it settles. */
  onOutput(bytes: Buffer): void | Promise<void>;
  /** Bytes of the transcript that were not kept (past the backend's output cap). */
  onGap?(offset: number, bytes: number): void;
}

export interface TerminalConnection {
  /** The transcript offset the output starts at. */
  readonly offset: number;
  /** Bytes typed; resolves once the connection took them (back-pressure). */
  send(bytes: Buffer): Promise<void>;
  resize(cols: number, rows: number): void;
  /** Resolves once the connection ended, saying how. */
  readonly closed: Promise<TerminalClose>;
  /** Ends the connection (the run goes on). */
  close(): void;
}

/**
 * The connection ended after the upgrade, before the backend attached it (a backend
 * stopping, a proxy that dropped it): no `attached` can come now. Said as a connection
 * that ends later is (`dropped`): the run may go on.
 */
export class TerminalClosedBeforeAttach extends Error {
  constructor(readonly reason: string) {
    super(`the terminal's connection ended before it was attached (${reason})`);
    this.name = "TerminalClosedBeforeAttach";
  }
}

/** Bytes queued on the connection before send() waits for it to take them. */
const SEND_HIGH_WATER = 256 * 1024;

/** Opens the terminal at `path` (an API path with its query). Throws a BackendError when refused. */
export async function openTerminal(
  endpoint: Endpoint,
  path: string,
  handlers: TerminalHandlers,
): Promise<TerminalConnection> {
  const ws = await webSocketTo(endpoint, path);
  let endReason: TerminalClose | null = null;
  let resolveClosed!: (c: TerminalClose) => void;
  const closed = new Promise<TerminalClose>((resolve) => {
    resolveClosed = resolve;
  });
  const offset = await new Promise<number>((resolve, reject) => {
    whenRefused(ws, endpoint, "terminal", reject);
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        const taken = handlers.onOutput(data);
        if (taken !== undefined) {
          ws.pause();
          void taken.finally(() => ws.resume());
        }
        return;
      }
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
      } catch {
        return;
      }
      if (msg.type === "attached") resolve(Number(msg.offset));
      else if (msg.type === "gap") handlers.onGap?.(Number(msg.offset), Number(msg.bytes));
      else if (msg.type === "exit") endReason = { kind: "exit", exit: msg as unknown as TerminalExit };
      else if (msg.type === "detached") endReason = { kind: "detached", reason: String(msg.reason) };
    });
    ws.on("close", (code: number, reason: Buffer) => {
      const how: TerminalClose = endReason ?? {
        kind: "dropped",
        reason:
          reason.length > 0
            ? reason.toString()
            : code === 1006
              ? "the backend went away without a word"
              : `the connection closed (${code})`,
      };
      resolveClosed(how);
      // Before `attached` (nothing once it came): the connection will not be attached now.
      reject(new TerminalClosedBeforeAttach(how.kind === "exit" ? "it exited" : how.reason));
    });
  });
  ws.on("error", () => {
    // After the handshake an error ends the connection: 'close' says so.
  });
  return {
    offset,
    closed,
    send: (bytes) =>
      new Promise<void>((resolve) => {
        if (ws.readyState !== ws.OPEN) return resolve();
        ws.send(bytes, { binary: true });
        if (ws.bufferedAmount < SEND_HIGH_WATER) resolve();
        else {
          const wait = () =>
            ws.bufferedAmount < SEND_HIGH_WATER || ws.readyState !== ws.OPEN ? resolve() : setTimeout(wait, 5);
          wait();
        }
      }),
    resize: (cols, rows) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: "resize", cols, rows }));
    },
    close: () => ws.close(1000, "client left"),
  };
}

/** A WebSocket to `path` on the endpoint (its Unix socket, or TCP with its key). */
export async function webSocketTo(endpoint: Endpoint, path: string): Promise<WebSocket> {
  const inClear = keyInClearProblem(endpoint);
  if (inClear !== null) throw inClear;
  const { WebSocket } = await import("ws");
  const url =
    endpoint.socketPath !== null
      ? `ws+unix://${endpoint.socketPath}:${path}`
      : `${endpoint.origin.replace(/^http/, "ws")}${path}`;
  return new WebSocket(url, {
    headers: endpoint.apiKey ? { authorization: `ApiKey ${endpoint.apiKey}` } : {},
    perMessageDeflate: false,
  });
}

/**
 * Calls `reject` with a BackendError when the upgrade is refused (the backend's JSON
 * error answer, `what: message`) or the backend cannot be reached.
 */
export function whenRefused(
  ws: WebSocket,
  endpoint: Endpoint,
  what: string,
  reject: (err: BackendError) => void,
): void {
  ws.once("unexpected-response", (_req, res) => {
    let body = "";
    res.setEncoding("utf8");
    res.on("data", (c: string) => {
      body += c;
    });
    res.on("end", () => {
      const status = res.statusCode ?? 0;
      let code = `http_${status}`;
      let message = `HTTP ${status}`;
      try {
        const e = (JSON.parse(body) as { error?: { code?: string; message?: string } }).error;
        code = e?.code ?? code;
        message = e?.message ?? message;
      } catch {
        // Not our JSON (a proxy's page): the status says it.
      }
      reject(new BackendError(code, `${what}: ${message}`, status, undefined, exitCodeOfAnswer(status, false)));
    });
  });
  ws.once("error", (err: NodeJS.ErrnoException) =>
    reject(
      new BackendError(
        err.code ?? `${what.replace(/ /g, "_")}_failed`,
        `${what}: cannot reach the backend (${redact(err.message, endpoint.apiKey)})`,
        null,
        isCertificateRefused(err.code ?? "") ? CERTIFICATE_HINT : undefined,
      ),
    ),
  );
}
