// A new sandbox's row in backend.db (store.ts), from what create or the first use of
// `default` settled (registry.ts): the settings stored as the columns keep them.

import type { EgressPolicy, Isolation, NetworkMode, SandboxLimitsRequest } from "../../protocol/types.js";
import type { PublishSpec } from "./published.js";
import type { SandboxRow } from "./store.js";

export interface NewSandbox {
  sandboxId: string;
  name: string | undefined;
  isolation: Isolation;
  network: boolean;
  networkMode: NetworkMode;
  egress?: EgressPolicy | null;
  publish?: PublishSpec[];
  limits?: SandboxLimitsRequest | null;
  /** Stored already (labels.ts storedLabels). */
  labels?: string | null;
  idleTimeoutMs?: number | null;
  /** Stored already (the image's JSON record). */
  image?: string | null;
}

/** The row, created at `createdAt` (ms since the epoch), running as host uid `uid` (drivers/identity.ts). */
export function newSandboxRow(spec: NewSandbox, createdAt: number, uid: number): SandboxRow {
  return {
    sandbox_id: spec.sandboxId,
    name: spec.name ?? spec.sandboxId,
    status: "ready",
    isolation: spec.isolation,
    network: spec.network ? 1 : 0,
    created_at: new Date(createdAt).toISOString(),
    uid,
    limits: spec.limits == null ? null : JSON.stringify(spec.limits),
    network_mode: spec.networkMode,
    publish: spec.publish === undefined || spec.publish.length === 0 ? null : JSON.stringify(spec.publish),
    image: spec.image ?? null,
    labels: spec.labels ?? null,
    egress: spec.egress == null ? null : JSON.stringify(spec.egress),
    idle_timeout_ms: spec.idleTimeoutMs ?? null,
    last_stop: null,
  };
}
