// A plain client of the backend's WebSocket routes (terminals, port forwards) for the
// backend's tests: what came in, binary and text apart, and how it closed; a refused
// upgrade rejects with the answer's status and body.

import { WebSocket } from "ws";

export interface WebSocketClient {
  ws: WebSocket;
  /** Binary messages received, in order, joined. */
  binary(): Buffer;
  /** Text messages received, in order. */
  text: string[];
  closed: Promise<{ code: number; reason: string }>;
}

export function openWebSocket(url: string, headers: Record<string, string> = {}): Promise<WebSocketClient> {
  const ws = new WebSocket(url, { headers });
  const chunks: Buffer[] = [];
  const text: string[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  ws.on("message", (data: Buffer, isBinary) => {
    if (isBinary) chunks.push(data);
    else text.push(data.toString());
  });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve({ ws, binary: () => Buffer.concat(chunks), text, closed }));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body })));
    });
    ws.once("error", reject);
  });
}
