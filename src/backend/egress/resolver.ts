// How the egress proxy turns a name into addresses (docs/network.md, "Names"): the
// sandbox never resolves a name itself (it has no route to a resolver); the proxy does,
// after the name was allowed, and checks every address it got (policy.ts).
//
// The daemon uses the system's resolver. A hosts-file style map replaces it where the
// destinations are local (tests; SBX_EGRESS_HOSTS for a daemon): then a name that is
// not in the map is not found, and the system's resolver is never asked.

import dns from "node:dns";
import fs from "node:fs";
import ipaddr from "ipaddr.js";

/** The addresses a name resolves to; throws (code ENOTFOUND) when it resolves to none. */
export type Resolver = (name: string) => Promise<string[]>;

/** The system's resolver (getaddrinfo), every address. */
export const systemResolver: Resolver = async (name) => {
  const found = await dns.promises.lookup(name, { all: true, verbatim: true });
  return found.map((a) => a.address);
};

/** Names to addresses as a hosts file says them: `ADDRESS NAME [NAME…]` a line, `#` comments. */
export function parseHosts(text: string): Map<string, string[]> {
  const hosts = new Map<string, string[]>();
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    if (line === "") continue;
    const [address, ...names] = line.split(/\s+/);
    if (address === undefined || !ipaddr.isValid(address))
      throw new Error(`hosts: ${JSON.stringify(raw)} does not start with an address`);
    for (const name of names) {
      const key = name.toLowerCase();
      hosts.set(key, [...(hosts.get(key) ?? []), address]);
    }
  }
  return hosts;
}

/** A resolver that answers from a map only. */
export function mapResolver(hosts: Map<string, string[]>): Resolver {
  return async (name) => {
    const found = hosts.get(name.toLowerCase());
    if (found === undefined || found.length === 0) {
      throw Object.assign(new Error(`${name} is not in the egress hosts map`), { code: "ENOTFOUND" });
    }
    return found;
  };
}

/** The resolver from a hosts file (read once), or the system's when none is named. */
export function resolverFrom(hostsFile: string | undefined): Resolver {
  if (hostsFile === undefined || hostsFile === "") return systemResolver;
  return mapResolver(parseHosts(fs.readFileSync(hostsFile, "utf8")));
}
