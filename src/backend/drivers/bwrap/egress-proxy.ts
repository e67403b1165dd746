// A sandbox with network allow-list (docs/network.md): its egress proxy, opened on
// sockets in its run directory when its environment starts, closed when it ends.
// The sandbox's init is told (EGRESS_FLAG) to forward its loopback proxy ports there.

import { EMPTY_POLICY, type EgressHub, type EgressProxy } from "../../egress/index.js";
import { SpawnError, type SandboxPlacement } from "../driver.js";
import type { HostIdentity } from "../identity.js";

export { EGRESS_FLAG } from "../../../sandbox-init/egress.js";
export type { EgressHub } from "../../egress/index.js";

/** The sandbox's proxy, listening once the promise settles; null for every mode but allow-list. */
export function openEgressProxy(
  hub: EgressHub | undefined,
  placement: SandboxPlacement,
  runDir: string,
  identity: HostIdentity | null,
): Promise<EgressProxy> | null {
  if (placement.network !== "allow-list") return null;
  if (hub === undefined) {
    throw new SpawnError("EBWRAP", "network allow-list is not available: this backend has no egress proxy");
  }
  const policy = placement.egressPolicy ?? (() => null);
  const proxy = hub.open(placement.sandboxId, runDir, identity, () => policy() ?? EMPTY_POLICY);
  proxy.catch(() => {});
  return proxy;
}

/** Closes a proxy opened by openEgressProxy (or nothing). */
export function closeEgressProxy(proxy: Promise<EgressProxy> | null): void {
  void proxy?.then(
    (p) => p.close(),
    () => {},
  );
}
