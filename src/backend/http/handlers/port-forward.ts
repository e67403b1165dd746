// The port-forward route (docs/protocol.md, "Port forwarding"): GET
// /sandbox/{id}/port-forward/{port} upgraded to a WebSocket is one connection to that
// port on the sandbox's own loopback. The connection inside is joined *before* the
// upgrade, so a sandbox that does not run or a port where nothing listens is an
// ordinary JSON error answer (409 sandbox_not_running, 502 connection_refused); the
// bytes themselves are forward-socket.ts's. A plain GET is answered 426.

import type { Duplex } from "node:stream";
import { ErrorCodes } from "../../../protocol/types.js";
import type { UpgradeContext } from "./terminals.js";
import { ApiError } from "../replies.js";

export interface ForwardTarget {
  sandboxId: string;
  port: number;
  /** The connection inside, joined. */
  inside: Duplex;
}

/** Joins a connection to the route's port in its sandbox; refuses as the module says. */
export async function openPortForward(ctx: UpgradeContext): Promise<ForwardTarget> {
  const { sandboxes } = ctx.services;
  const row = sandboxes.resolve(ctx.params.id!, { createDefault: false });
  const raw = ctx.params.port ?? "";
  const port = /^[0-9]{1,5}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(port >= 1 && port <= 65535)) {
    throw new ApiError(
      400,
      ErrorCodes.invalidRequest,
      `port must be a whole number from 1 to 65535, not ${JSON.stringify(raw)}`,
      {
        field: "port",
      },
    );
  }
  const inside = await sandboxes.connect(row, port);
  return { sandboxId: row.sandbox_id, port, inside };
}
