// A sandbox's egress policy and the decisions made by it (docs/network.md, "Allow-list").
// Pure: the proxy (proxy.ts) asks, for each connection, whether a name may be reached
// and whether an address it resolved to (or was given) may be. Default deny.
//
// - A name is allowed when an allow pattern matches it and no deny pattern does:
//   `pypi.org` matches only itself, `*.pythonhosted.org` every name below
//   pythonhosted.org (not pythonhosted.org itself), as sandbox-runtime does.
// - An IP literal is allowed only inside an allowed CIDR.
// - What an allowed name resolves to must be a public unicast address, or inside an
//   allowed CIDR: a name that resolves to loopback, a private, link-local or other
//   special range is refused (DNS rebinding), unless that range is allowed by CIDR.

import ipaddr from "ipaddr.js";

export interface EgressPolicy {
  /** Names (exact, or `*.domain` for every name below it) that may be reached. */
  allow_domains: string[];
  /** Names refused even where an allow pattern matches (same syntax). */
  deny_domains: string[];
  /** Address ranges (CIDR, or a single address) that may be reached, by literal or by resolution. */
  allow_cidrs: string[];
}

export const EMPTY_POLICY: EgressPolicy = { allow_domains: [], deny_domains: [], allow_cidrs: [] };

/** At most this many entries in each list of a policy. */
export const MAX_POLICY_ENTRIES = 256;

export type Decision = { allowed: true } | { allowed: false; reason: string };

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/** A host name as compared: lower case, without a trailing dot. */
export function normalName(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

/** Why a domain pattern is not one (null: it is): a name, or `*.` and a name. */
export function patternProblem(pattern: string): string | null {
  const name = normalName(pattern.startsWith("*.") ? pattern.slice(2) : pattern);
  if (name.length === 0 || name.length > 253) return `${JSON.stringify(pattern)} is not a domain name`;
  if (ipaddr.isValid(name)) return `${JSON.stringify(pattern)} is an address: allow it with a CIDR`;
  if (!name.split(".").every((label) => LABEL.test(label))) {
    return `${JSON.stringify(pattern)} is not a domain name (letters, digits, - and _ between dots; *. only in front)`;
  }
  return null;
}

/** Why a CIDR is not one (null: it is). A single address counts as its own /32 or /128. */
export function cidrProblem(cidr: string): string | null {
  try {
    parseRange(cidr);
    return null;
  } catch {
    return `${JSON.stringify(cidr)} is not an address range (as 203.0.113.0/24 or 2001:db8::/32)`;
  }
}

/** The first problem of a policy, or null: patterns and ranges well formed, lists bounded. */
export function policyProblem(policy: EgressPolicy): { field: string; message: string } | null {
  for (const field of ["allow_domains", "deny_domains", "allow_cidrs"] as const) {
    const list = policy[field];
    if (list.length > MAX_POLICY_ENTRIES) return { field, message: `at most ${MAX_POLICY_ENTRIES} entries` };
    for (const entry of list) {
      const problem = field === "allow_cidrs" ? cidrProblem(entry) : patternProblem(entry);
      if (problem !== null) return { field, message: problem };
    }
  }
  return null;
}

/** A policy with each list normalised (lower case, no trailing dot) and without repeats. */
export function normalPolicy(policy: EgressPolicy): EgressPolicy {
  const unique = (list: string[]) => [...new Set(list)];
  return {
    allow_domains: unique(policy.allow_domains.map(normalName)),
    deny_domains: unique(policy.deny_domains.map(normalName)),
    allow_cidrs: unique(policy.allow_cidrs.map((c) => c.trim())),
  };
}

/** Whether a pattern matches a (normalised) name. */
export function patternMatches(pattern: string, name: string): boolean {
  const p = normalName(pattern);
  if (p.startsWith("*.")) return name.endsWith(p.slice(1)) && name.length > p.length - 1;
  return name === p;
}

/** Whether a name may be reached (before it is resolved). */
export function decideName(policy: EgressPolicy, host: string): Decision {
  const name = normalName(host);
  if (policy.deny_domains.some((p) => patternMatches(p, name))) {
    return { allowed: false, reason: `${name} is denied by the sandbox's egress policy` };
  }
  if (policy.allow_domains.some((p) => patternMatches(p, name))) return { allowed: true };
  return { allowed: false, reason: `${name} is not on the sandbox's allow-list` };
}

/** Whether a host as given is an IP literal (with or without IPv6 brackets). */
export function isAddress(host: string): boolean {
  return ipaddr.isValid(unbracket(host));
}

/**
 * Whether an address may be reached: inside an allowed CIDR; or, when it is what an
 * allowed name resolved to (`byName`), a public unicast address.
 */
export function decideAddress(policy: EgressPolicy, address: string, byName: string | null): Decision {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(unbracket(address));
  } catch {
    return { allowed: false, reason: `${address} is not an address` };
  }
  for (const cidr of policy.allow_cidrs) {
    const [base, bits] = parseRange(cidr);
    if (base.kind() === ip.kind() && ip.match(base, bits)) return { allowed: true };
  }
  if (byName === null) return { allowed: false, reason: `${ip.toString()} is not in an allowed CIDR` };
  const range = ip.range();
  if (range === "unicast") return { allowed: true };
  return {
    allowed: false,
    reason: `${byName} resolves to ${ip.toString()}, a ${range} address, which is not in an allowed CIDR`,
  };
}

function unbracket(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

function parseRange(cidr: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  const text = cidr.trim();
  if (text.includes("/")) {
    return ipaddr.parseCIDR(text);
  }
  const ip = ipaddr.parse(text);
  return [ip, ip.kind() === "ipv4" ? 32 : 128];
}
