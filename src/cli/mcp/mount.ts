// The MCP server `sbx daemon run` serves at /mcp (docs/agents.md, "Over HTTP"): handed to
// the backend as a mount (src/backend/http/mount.ts), so the backend never imports the
// MCP face. The SDK and the tools load on the first request, not at the daemon's start.

import type { Mount } from "../../backend/daemon.js";
import type { Context } from "../context.js";
import type { McpSessions } from "./http.js";

/** Where the daemon serves MCP's Streamable HTTP transport. */
export const MCP_PATH = "/mcp";

export function mcpMount(ctx: Context): Mount {
  let sessions: Promise<McpSessions> | null = null;
  const load = () => {
    sessions ??= import("./http.js").then((m) => m.openSessions(ctx));
    return sessions;
  };
  return {
    path: MCP_PATH,
    serve: async (req, res, body) => (await load()).serve(req, res, body),
    close: async () => {
      if (sessions !== null) await (await sessions).close();
    },
  };
}
