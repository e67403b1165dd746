// A sandbox as the wire gives it (docs/protocol.md, "Sandbox"), from its stored row.

import { type Sandbox, WORKSPACE } from "../../protocol/types.js";
import { storedImageOf } from "./image-root.js";
import { labelsOf } from "./labels.js";
import { egressOf, networkModeOf } from "./network.js";
import { limitsOf } from "./settings.js";
import type { SandboxRow } from "./store.js";

export function toSandbox(row: SandboxRow): Sandbox {
  return {
    sandbox_id: row.sandbox_id,
    name: row.name,
    status: row.status,
    isolation: row.isolation,
    network: networkModeOf(row) !== "none",
    network_mode: networkModeOf(row),
    ...(row.egress !== null && { egress: egressOf(row) ?? undefined }),
    workspace: WORKSPACE,
    created_at: row.created_at,
    limits: limitsOf(row),
    labels: labelsOf(row),
    idle_timeout_ms: row.idle_timeout_ms,
    image: storedImageOf(row),
  };
}
