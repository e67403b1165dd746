// A sandbox's network as asked at create (docs/drivers.md, "Network modes"): which
// mode it gets and which ports it publishes. Pure decisions; the registry stores them,
// the drivers carry them out, published.ts listens.

import net from "node:net";
import {
  type EgressPolicy,
  type EgressPolicyRequest,
  ErrorCodes,
  type Isolation,
  type NetworkMode,
  type SandboxCreateRequest,
} from "../../protocol/types.js";
import { normalPolicy, policyProblem } from "../egress/index.js";
import type { SandboxRow } from "./store.js";
import { invalidField, Refusal } from "../refusal.js";
import type { PublishSpec } from "./published.js";

/** At most this many published ports per sandbox. */
export const MAX_PUBLISHED = 32;

/** A sandbox's network mode as stored, or as sandboxes made before modes had it. */
export function networkModeOf(row: Pick<SandboxRow, "network" | "network_mode">): NetworkMode {
  const mode = row.network_mode;
  if (mode === "none" || mode === "allow-list" || mode === "user" || mode === "host") return mode;
  return row.network === 1 ? "host" : "none";
}

/** A sandbox's published ports as stored. */
export function publishedOf(row: Pick<SandboxRow, "publish">): PublishSpec[] {
  if (row.publish === null) return [];
  try {
    const specs = JSON.parse(row.publish) as PublishSpec[];
    return Array.isArray(specs) ? specs : [];
  } catch {
    return [];
  }
}

/**
 * The network mode a create request gets under `isolation`: `network_mode` when given
 * (it must agree with `network`), else `network: true` is user-mode networking and
 * anything else none. Without isolation there is only the host's. Refuses what cannot
 * be had here (network_unavailable, saying why).
 */
export function chooseNetworkMode(
  req: SandboxCreateRequest,
  isolation: Isolation,
  userNet: { available: boolean; reason: string | null },
): NetworkMode {
  const asked: NetworkMode | undefined =
    req.network_mode ?? (req.egress !== undefined ? "allow-list" : req.network === true ? "user" : undefined);
  if (asked !== undefined && req.network !== undefined && req.network !== (asked !== "none")) {
    throw invalidField("network", `network: ${req.network} contradicts network_mode: ${asked}`);
  }
  if (req.egress !== undefined && asked !== "allow-list") {
    throw invalidField("egress", `an egress policy is for network_mode allow-list, not ${asked}`);
  }
  if (isolation === "none") {
    // Without isolation there is only the host's network: `network: true` gets it (as it
    // always did); a mode asked for by name that is not the host's is refused.
    const named = req.network_mode ?? (req.egress !== undefined ? "allow-list" : undefined);
    if (named === "none" || named === "user" || named === "allow-list") {
      throw networkUnavailable(named, "a sandbox without isolation (none) has the host's network and only that");
    }
    return "host";
  }
  const mode = asked ?? "none";
  if (isolation === "slurm" && mode !== "none") {
    throw networkUnavailable(
      mode,
      mode === "host"
        ? "a sandbox on Slurm runs on a node the scheduler chooses: the daemon's host network is not there to share"
        : "user-mode networking is not carried to a Slurm node yet",
    );
  }
  if (mode === "user" && !userNet.available) {
    throw networkUnavailable(
      "user",
      `${userNet.reason ?? "user-mode networking is not available"}; --network host gives the host's network instead`,
    );
  }
  return mode;
}

/** Whether a sandbox's network mode can be had here now: user needs what the probe found; none and host always can. */
export function networkStatus(
  mode: NetworkMode,
  userNet: { available: boolean; reason: string | null },
): { available: boolean; reason: string | null } {
  if (mode !== "user" || userNet.available) return { available: true, reason: null };
  return { available: false, reason: userNet.reason ?? "user-mode networking is not available" };
}

/** The ports a create request publishes, checked: host_ip an address (default 127.0.0.1), no port twice. */
export function choosePublished(req: SandboxCreateRequest, isolation: Isolation): PublishSpec[] {
  const asked = req.publish ?? [];
  if (asked.length === 0) return [];
  if (isolation === "none") {
    throw invalidField(
      "publish",
      "a sandbox without isolation (none) shares the host's network: its servers are reachable at their own port",
    );
  }
  if (isolation === "slurm") {
    throw invalidField(
      "publish",
      "a sandbox on Slurm runs on a node the scheduler chooses: a port published on the daemon's machine would not reach it",
    );
  }
  if (asked.length > MAX_PUBLISHED) throw invalidField("publish", `at most ${MAX_PUBLISHED} published ports`);
  const specs: PublishSpec[] = [];
  for (const p of asked) {
    const hostIp = p.host_ip ?? "127.0.0.1";
    if (net.isIP(hostIp) === 0) throw invalidField("publish", `host_ip ${JSON.stringify(hostIp)} is not an IP address`);
    const spec = { port: p.port, host_ip: hostIp, host_port: p.host_port ?? 0 };
    if (specs.some((s) => s.port === spec.port)) throw invalidField("publish", `port ${spec.port} is published twice`);
    if (spec.host_port !== 0 && specs.some((s) => s.host_ip === hostIp && s.host_port === spec.host_port)) {
      throw invalidField("publish", `host port ${spec.host_port} is used twice`);
    }
    specs.push(spec);
  }
  return specs;
}

function networkUnavailable(mode: NetworkMode, reason: string): Refusal {
  return new Refusal(ErrorCodes.networkUnavailable, `network ${mode} is not available: ${reason}`, {
    field: "network",
    network_mode: mode,
    reason,
  });
}

/** A sandbox's egress policy as stored (network allow-list), or null. */
export function egressOf(row: Pick<SandboxRow, "egress"> | undefined): EgressPolicy | null {
  if (row === undefined || row.egress === null) return null;
  try {
    return JSON.parse(row.egress) as EgressPolicy;
  } catch {
    return null;
  }
}

/** The egress policy a sandbox of `mode` starts with: what was asked (checked, normalised) for allow-list, else null. */
export function chooseEgress(asked: EgressPolicyRequest | undefined, mode: NetworkMode): EgressPolicy | null {
  if (mode !== "allow-list") return null;
  return checkedPolicy({
    allow_domains: asked?.allow_domains ?? [],
    deny_domains: asked?.deny_domains ?? [],
    allow_cidrs: asked?.allow_cidrs ?? [],
  });
}

/** A sandbox's policy with the lists asked for replacing its own; refused for a mode other than allow-list. */
export function updatedEgress(row: SandboxRow, asked: EgressPolicyRequest): EgressPolicy {
  const mode = networkModeOf(row);
  const stored = egressOf(row);
  if (mode !== "allow-list" || stored === null) {
    throw invalidField("egress", `sandbox ${row.name} has network ${mode}: an egress policy is for network allow-list`);
  }
  return checkedPolicy({ ...stored, ...asked } as EgressPolicy);
}

function checkedPolicy(policy: EgressPolicy): EgressPolicy {
  const problem = policyProblem(policy);
  if (problem !== null) throw invalidField(`egress.${problem.field}`, problem.message);
  return normalPolicy(policy);
}
