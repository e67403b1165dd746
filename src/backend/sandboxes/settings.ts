// What a sandbox gets (docs/drivers.md): its isolation, chosen at create (`auto` is
// bwrap where it works, else none), and its limits, asked over the defaults and
// refused where this backend cannot enforce them. Pure decisions over the drivers'
// probes; the registry stores them, the drivers carry them out. The network's are
// network.ts's.

import {
  ErrorCodes,
  type Isolation,
  type NetworkMode,
  type SandboxCreateRequest,
  type SandboxLimits,
  type SandboxLimitsRequest,
  type SandboxUpdateRequest,
} from "../../protocol/types.js";
import { MAX_LABELS } from "../../protocol/labels.js";
import { labelsOf, mergeLabels, storedLabels } from "./labels.js";
import { invalidField, Refusal } from "../refusal.js";
import { type DriverSet, withDefaults } from "../drivers/index.js";
import { chooseNetworkMode, updatedEgress } from "./network.js";
import type { SandboxRow, SandboxStore } from "./store.js";

/** A sandbox's limits: what it asked for over the defaults (drivers/limits/spec.ts). */
export function limitsOf(row: SandboxRow): SandboxLimits {
  let asked: Partial<SandboxLimits> | null = null;
  if (row.limits !== null) {
    try {
      asked = JSON.parse(row.limits) as Partial<SandboxLimits>;
    } catch {
      asked = null;
    }
  }
  return withDefaults(asked);
}

/** The one line said when a sandbox without isolation is created. */
export function noIsolationWarning(name: string, reason: string | null): string {
  return `sandbox ${name} runs commands without isolation (none): they see and can change what you can. ${reason ?? ""}`.trim();
}

/**
 * The isolation and network a request gets: `auto` (the default) is bwrap where it
 * works, else none; network is off under bwrap unless asked for, and cannot be
 * withheld without isolation. Refuses (isolation_unavailable) saying why.
 */
export function chooseIsolation(
  drivers: DriverSet,
  req: SandboxCreateRequest,
): { isolation: Isolation; network: boolean; networkMode: NetworkMode } {
  const asked = req.isolation ?? "auto";
  const isolation: Isolation = asked === "auto" ? drivers.defaultIsolation : asked;
  const probe = drivers.probe(isolation);
  if (!probe.available) throw isolationUnavailable(isolation, probe.reason ?? "not available");
  if (isolation === "none" && req.network === false) {
    throw isolationUnavailable(
      "bwrap",
      `network: false needs isolation bwrap, which cannot run here: ${drivers.probe("bwrap").reason}`,
    );
  }
  const networkMode = chooseNetworkMode(req, isolation, drivers.userNetwork);
  return { isolation, network: networkMode !== "none", networkMode };
}

/** Refuses (limit_unavailable) a limit this backend cannot enforce when it was asked for explicitly. */
export function checkedLimits(drivers: DriverSet, limits: SandboxLimits, isolation: Isolation): SandboxLimits {
  const refused = drivers.limits.refusal(limits, isolation);
  if (refused !== null) {
    throw new Refusal(
      ErrorCodes.limitUnavailable,
      `the ${refused.limit} limit cannot be enforced here: ${refused.reason}`,
      {
        field: `limits.${refused.limit === "workspace" ? "workspace_bytes" : refused.limit}`,
        limit: refused.limit,
        reason: refused.reason,
      },
    );
  }
  return limits;
}

export function isolationUnavailable(isolation: Isolation, reason: string): Refusal {
  return new Refusal(ErrorCodes.isolationUnavailable, `isolation ${isolation} is not available: ${reason}`, {
    field: "isolation",
    isolation,
    reason,
  });
}

/** Names that would read as a route segment. */
const RESERVED_NAMES = ["create"];

/** A new sandbox's name: not reserved, not an id's shape, and no sandbox's name or id yet. */
export function checkNewName(store: SandboxStore, name: string): void {
  if (RESERVED_NAMES.includes(name) || name.startsWith("sbx_")) {
    throw invalidField("name", `the name ${JSON.stringify(name)} is reserved`);
  }
  if (store.getSandboxByName(name) || store.getSandboxById(name)) {
    throw new Refusal(ErrorCodes.sandboxExists, `a sandbox named ${JSON.stringify(name)} exists`, { name });
  }
}

/**
 * A PATCH's settings other than limits (egress, labels, idle timeout), checked and stored;
 * the row as it is now. Limits are updateLimits' (they reach the drivers).
 */
export function updateSettings(store: SandboxStore, row: SandboxRow, req: SandboxUpdateRequest): SandboxRow {
  let updated = row;
  if (req.egress !== undefined) {
    const policy = JSON.stringify(updatedEgress(row, req.egress));
    store.transaction(() => store.setSandboxEgress(row.sandbox_id, policy));
    updated = { ...updated, egress: policy };
  }
  if (req.labels !== undefined) {
    const labels = mergeLabels(labelsOf(row), req.labels);
    if (Object.keys(labels).length > MAX_LABELS) {
      throw invalidField("labels", `a sandbox has at most ${MAX_LABELS} labels, not ${Object.keys(labels).length}`);
    }
    const text = storedLabels(labels);
    store.transaction(() => store.setSandboxLabels(row.sandbox_id, text));
    updated = { ...updated, labels: text };
  }
  if (req.idle_timeout_ms !== undefined) {
    const ms = req.idle_timeout_ms;
    store.transaction(() => store.setSandboxIdleTimeout(row.sandbox_id, ms));
    updated = { ...updated, idle_timeout_ms: ms };
  }
  return updated;
}

/**
 * A PATCH's limits over the stored ones (a missing field stays, null lifts it), checked
 * and stored, and given to what runs in the sandbox now (drivers.limits). The workspace
 * limit cannot change (its file system has that size).
 */
export function updateLimits(
  store: SandboxStore,
  drivers: DriverSet,
  row: SandboxRow,
  asked: SandboxLimitsRequest,
): SandboxRow {
  const stored = row.limits === null ? {} : (JSON.parse(row.limits) as SandboxLimitsRequest);
  const merged: SandboxLimitsRequest = { ...stored, ...asked };
  if (asked.workspace_bytes !== undefined && withDefaults(merged).workspace_bytes !== limitsOf(row).workspace_bytes) {
    throw invalidField(
      "limits.workspace_bytes",
      "the workspace limit is set when the sandbox is created (its file system has that size); it cannot be changed",
    );
  }
  const limits = checkedLimits(drivers, withDefaults(merged), row.isolation);
  const text = JSON.stringify(merged);
  store.transaction(() => store.setSandboxLimits(row.sandbox_id, text));
  drivers.limits.update(row.sandbox_id, limits);
  return { ...row, limits: text };
}
