// Terminal routes (docs/protocol.md, "Terminals"): GET …/executions/{eid}/terminal
// (and …/processes/{pid}/terminal) upgraded to a WebSocket attach a client to a run
// on a terminal. A plain GET is answered 426. What is attached, from which offset of
// the transcript, is decided here; the socket itself is terminal-socket.ts's.

import { ErrorCodes } from "../../../protocol/types.js";
import type { TerminalSource } from "../../runs/index.js";
import type { LookupContext, RequestContext } from "../context.js";
import { findExecutionIn } from "./executions.js";
import { findProcess } from "./processes.js";
import { ApiError, type Reply } from "../replies.js";

/** What an upgrade needs of a request: the route's parameters, its query and the services. */
export type UpgradeContext = LookupContext & Pick<RequestContext, "query">;

export interface TerminalTarget {
  /** Which run (`execution:exe_…`): the last client attached to it is the one attached. */
  key: string;
  source: TerminalSource;
  /** Where the client's transcript starts. */
  offset: number;
  /** Said in the `attached` message. */
  hello: Record<string, unknown>;
}

/** A WebSocket route (a terminal, a port forward) asked as plain HTTP. */
export async function terminalWithoutUpgrade(_ctx: RequestContext): Promise<Reply> {
  throw new ApiError(
    426,
    ErrorCodes.upgradeRequired,
    "this route is a WebSocket: send Connection: Upgrade, Upgrade: websocket",
    {},
    { Upgrade: "websocket", Connection: "Upgrade" },
  );
}

export function executionTerminalTarget(ctx: UpgradeContext): TerminalTarget {
  const executionId = findExecutionIn(ctx).execution_id;
  const source = ctx.services.executions.terminal(executionId);
  if (source === null || source === "not_a_terminal") {
    throw new ApiError(
      409,
      ErrorCodes.notATerminal,
      `execution ${executionId} did not run on a terminal (read its output with sbx logs)`,
      { execution_id: executionId },
    );
  }
  return {
    key: `execution:${executionId}`,
    source,
    offset: startOffset(ctx, source),
    hello: { execution_id: executionId },
  };
}

export function processTerminalTarget(ctx: UpgradeContext): TerminalTarget {
  const processId = findProcess(ctx).process_id;
  const source = ctx.services.processes.terminal(processId);
  if (source === null || source === "not_a_terminal") {
    throw new ApiError(
      409,
      ErrorCodes.notATerminal,
      `process ${processId} does not run on a terminal (read its logs with sbx process logs)`,
      { process_id: processId },
    );
  }
  return {
    key: `process:${processId}`,
    source,
    offset: startOffset(ctx, source),
    hello: { process_id: processId },
  };
}

/** `offset` (default: the transcript's end, what comes next) must not be past the end. */
function startOffset(ctx: UpgradeContext, source: TerminalSource): number {
  const raw = ctx.query.get("offset");
  const size = source.size();
  if (raw === null) return size;
  const offset = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(offset)) {
    throw new ApiError(400, ErrorCodes.invalidRequest, "offset must be a whole number of bytes", { field: "offset" });
  }
  if (offset > size) {
    throw new ApiError(422, ErrorCodes.invalidCursor, `offset ${offset} is past the transcript's ${size} bytes`, {
      offset,
      size,
    });
  }
  return offset;
}
