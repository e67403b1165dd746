// Egress by policy (docs/network.md): each sandbox with network allow-list gets a proxy
// of its own (proxy.ts), decided by its policy (policy.ts), names resolved by the
// proxy (resolver.ts). The hub makes them and keeps each sandbox's recent connections.

import { EgressProxy, type EgressConnection } from "./proxy.js";
import type { EgressPolicy } from "./policy.js";
import { type Resolver, systemResolver } from "./resolver.js";

export { BLOCKED, type EgressConnection, type EgressProxy, parseAuthority } from "./proxy.js";
export * from "./policy.js";
export { mapResolver, parseHosts, type Resolver, resolverFrom, systemResolver } from "./resolver.js";

/** Connections a sandbox may have through its proxy at once. */
export const DEFAULT_MAX_CONNECTIONS = 128;
/** Connections kept per sandbox for `sbx sandbox egress` (oldest dropped). */
export const KEPT_CONNECTIONS = 1000;

export interface EgressHubOptions {
  resolve?: Resolver;
  maxConnections?: number;
  now?: () => number;
}

export class EgressHub {
  private readonly kept = new Map<string, EgressConnection[]>();
  /** Each sandbox's connections that ended (or were refused) since the daemon started, by verdict. */
  private readonly totals = new Map<string, { allowed: number; denied: number }>();
  /** Each sandbox's change count: every connection decided or ended adds one (`?since=`). */
  private readonly changes = new Map<string, number>();
  private readonly listeners = new Set<(sandboxId: string, c: EgressConnection) => void>();
  readonly maxConnections: number;

  constructor(private readonly opts: EgressHubOptions = {}) {
    this.maxConnections = opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  }

  /** A sandbox's proxy on its sockets in `runDir`, listening, decided by `policy` at each connection. */
  async open(
    sandboxId: string,
    runDir: string,
    owner: { uid: number; gid: number } | null,
    policy: () => EgressPolicy,
  ): Promise<EgressProxy> {
    const proxy = new EgressProxy({
      runDir,
      owner,
      policy,
      resolve: this.opts.resolve ?? systemResolver,
      maxConnections: this.maxConnections,
      now: this.opts.now ?? Date.now,
      onConnection: (c) => this.record(sandboxId, c),
    });
    await proxy.listen();
    return proxy;
  }

  /** A sandbox's recent connections, oldest first; with `since`, those decided or ended after that change. */
  connections(sandboxId: string, since = 0): EgressConnection[] {
    return (this.kept.get(sandboxId) ?? []).filter((c) => c.seq > since).map((c) => ({ ...c }));
  }

  /** A sandbox's change count now. */
  changeCount(sandboxId: string): number {
    return this.changes.get(sandboxId) ?? 0;
  }

  /** How many of a sandbox's connections were allowed and refused since the daemon started (ended ones). */
  totalsOf(sandboxId: string): { allowed: number; denied: number } {
    return { ...(this.totals.get(sandboxId) ?? { allowed: 0, denied: 0 }) };
  }

  /** Tells `fn` of every connection decided (ended_at null) and ended; returns how to stop. */
  subscribe(fn: (sandboxId: string, c: EgressConnection) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** A removed sandbox's connections go. */
  forget(sandboxId: string): void {
    this.kept.delete(sandboxId);
    this.totals.delete(sandboxId);
    this.changes.delete(sandboxId);
  }

  private record(sandboxId: string, c: EgressConnection): void {
    const seq = (this.changes.get(sandboxId) ?? 0) + 1;
    this.changes.set(sandboxId, seq);
    c.seq = seq;
    let list = this.kept.get(sandboxId);
    if (list === undefined) {
      list = [];
      this.kept.set(sandboxId, list);
    }
    if (!list.includes(c)) {
      list.push(c);
      if (list.length > KEPT_CONNECTIONS) list.splice(0, list.length - KEPT_CONNECTIONS);
    }
    if (c.ended_at !== null) {
      const totals = this.totals.get(sandboxId) ?? { allowed: 0, denied: 0 };
      if (c.allowed) totals.allowed++;
      else totals.denied++;
      this.totals.set(sandboxId, totals);
    }
    for (const fn of this.listeners) fn(sandboxId, c);
  }
}
