// A handler the HTTP edge serves at a path of its own, outside /api/v1 and its route
// table: MCP's Streamable HTTP transport at /mcp (docs/agents.md, "Over HTTP"). Whoever
// runs the backend hands it over (`sbx daemon run`: the CLI's MCP face), so the backend
// never imports what it serves there. The edge does for a mount what it does for every
// route: on TCP the token is required (401 without it), the body is bounded, the request
// counts as in flight (no idle exit while one is open); the mount writes its own answer.

import type { IncomingMessage, ServerResponse } from "node:http";

export interface Mount {
  /** The exact path served, e.g. "/mcp" (nothing below it). */
  path: string;
  /**
   * Answers one request, already authenticated. `body` is the whole request body
   * (bounded as every body: 413 past the limit), empty for a GET or a DELETE. Resolves
   * once the answer is written (a stream it opens may stay open after).
   */
  serve(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void>;
  /** The backend is stopping: end what the mount holds open, while the backend still serves. */
  close(): Promise<void>;
}

/** The methods whose requests carry a body worth reading. */
export function mountReadsBody(method: string): boolean {
  return method === "POST" || method === "PUT" || method === "PATCH";
}
