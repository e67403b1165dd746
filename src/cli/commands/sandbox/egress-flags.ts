// The egress flags of `sbx sandbox create` and `update` (docs/network.md): domains and
// ranges a sandbox with network allow-list may reach, given one by one or in a file.

import fs from "node:fs";
import { UsageError } from "../../../common/errors.js";
import type { EgressPolicy, EgressPolicyRequest } from "../../../protocol/types.js";

export interface EgressFlagValues {
  allowDomain?: string[];
  denyDomain?: string[];
  allowCidr?: string[];
  egressPolicy?: string;
}

const FIELDS = ["allow_domains", "deny_domains", "allow_cidrs"] as const;

/** The policy a file says: JSON `{allow_domains?, deny_domains?, allow_cidrs?}`, each a list of strings. */
export function readPolicyFile(file: string): EgressPolicyRequest {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(
      `--egress-policy ${file}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message}`,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--egress-policy ${file}: not JSON (${(err as Error).message})`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new UsageError(
      `--egress-policy ${file}: a JSON object {allow_domains, deny_domains, allow_cidrs} is expected`,
    );
  }
  const policy: EgressPolicyRequest = {};
  for (const [key, value] of Object.entries(doc)) {
    if (!(FIELDS as readonly string[]).includes(key)) {
      throw new UsageError(
        `--egress-policy ${file}: unknown field ${JSON.stringify(key)} (known: ${FIELDS.join(", ")})`,
      );
    }
    if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
      throw new UsageError(`--egress-policy ${file}: ${key} must be a list of strings`);
    }
    policy[key as (typeof FIELDS)[number]] = value as string[];
  }
  return policy;
}

/** The policy asked for by the flags (a file's lists, then each flag's added), or undefined when none was given. */
export function egressFromFlags(raw: EgressFlagValues): EgressPolicyRequest | undefined {
  const given = raw.allowDomain !== undefined || raw.denyDomain !== undefined || raw.allowCidr !== undefined;
  if (!given && raw.egressPolicy === undefined) return undefined;
  const base = raw.egressPolicy === undefined ? {} : readPolicyFile(raw.egressPolicy);
  return {
    allow_domains: [...(base.allow_domains ?? []), ...(raw.allowDomain ?? [])],
    deny_domains: [...(base.deny_domains ?? []), ...(raw.denyDomain ?? [])],
    allow_cidrs: [...(base.allow_cidrs ?? []), ...(raw.allowCidr ?? [])],
  };
}

/**
 * For update: a file replaces the policy; each flag adds to the list it names (a domain
 * denied also leaves the allow-list).
 */
export function updatedPolicy(current: EgressPolicy, raw: EgressFlagValues): EgressPolicyRequest | undefined {
  const asked = egressFromFlags(raw);
  if (asked === undefined) return undefined;
  if (raw.egressPolicy !== undefined) return asked;
  const denied = new Set(raw.denyDomain ?? []);
  return {
    allow_domains: [...current.allow_domains.filter((d) => !denied.has(d)), ...(raw.allowDomain ?? [])],
    deny_domains: [...current.deny_domains, ...(raw.denyDomain ?? [])],
    allow_cidrs: [...current.allow_cidrs, ...(raw.allowCidr ?? [])],
  };
}

/** The policy in a few lines for `sandbox show`. */
export function policyLines(policy: EgressPolicy): Array<[string, string]> {
  const list = (l: string[]) => (l.length === 0 ? "(none)" : l.join(" "));
  return [
    ["allow_domains", list(policy.allow_domains)],
    ["deny_domains", list(policy.deny_domains)],
    ["allow_cidrs", list(policy.allow_cidrs)],
  ];
}
