// A sandbox's egress report (GET /sandbox/{id}/egress; docs/network.md, "Evidence"):
// its policy, and the connections its proxy kept (egress/index.ts, the hub), with totals.

import type { EgressReport } from "../../protocol/types.js";
import type { EgressHub } from "../egress/index.js";
import { egressOf, networkModeOf } from "./network.js";
import type { SandboxRow } from "./store.js";

/** A sandbox's recent connections through its egress proxy, and its totals since the daemon started. */
export function egressReport(row: SandboxRow, hub: EgressHub, since = 0): EgressReport {
  const totals = hub.totalsOf(row.sandbox_id);
  return {
    sandbox_id: row.sandbox_id,
    name: row.name,
    network_mode: networkModeOf(row),
    egress: egressOf(row),
    allowed_total: totals.allowed,
    denied_total: totals.denied,
    seq: hub.changeCount(row.sandbox_id),
    connections: hub.connections(row.sandbox_id, since),
  };
}
