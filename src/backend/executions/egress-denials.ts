// Egress denials on an execution (docs/network.md, "Evidence"): every connection its
// sandbox's egress proxy refused while the execution ran is charged to it — counted
// (`total`), the first EGRESS_DENIED_KEPT kept with host, port, protocol and reason, and
// each told to `onDenied` (its event log's `egress_denied` event).
//
// Attribution is by time and sandbox: the proxy knows the sandbox a connection came
// from, not the process (its sockets are reached through the sandbox's init). So a
// refusal is charged to every execution running in that sandbox at that moment, from
// its admission to its end: with one command at a time that is exact; with several at
// once each of them carries the refusals of all (never fewer than its own). Refusals
// while no execution runs (a supervised process, a background program left behind)
// are on `sbx sandbox egress` only.

import { EGRESS_DENIED_KEPT, type EgressDenial, type EgressDenied } from "../../protocol/types.js";
import type { EgressConnection, EgressHub } from "../egress/index.js";

interface Charged {
  sandboxId: string;
  denied: EgressDenied;
  /** Connections counted already (a record is told again when it ends). */
  counted: WeakSet<EgressConnection>;
  onDenied: (denial: EgressDenial, total: number) => void;
}

export class EgressDenials {
  /** Running executions by id. */
  private readonly running = new Map<string, Charged>();
  /** Running executions by sandbox. */
  private readonly bySandbox = new Map<string, Set<string>>();

  constructor(hub: EgressHub | null) {
    hub?.subscribe((sandboxId, c) => this.told(sandboxId, c));
  }

  /** From now on, refusals in `sandboxId` are charged to `executionId`. */
  begin(executionId: string, sandboxId: string, onDenied: Charged["onDenied"]): void {
    this.running.set(executionId, { sandboxId, denied: { total: 0, first: [] }, counted: new WeakSet(), onDenied });
    let ids = this.bySandbox.get(sandboxId);
    if (ids === undefined) {
      ids = new Set();
      this.bySandbox.set(sandboxId, ids);
    }
    ids.add(executionId);
  }

  /** What was charged so far; null when nothing was refused (or it does not run). */
  current(executionId: string): EgressDenied | null {
    const c = this.running.get(executionId);
    return c === undefined || c.denied.total === 0 ? null : { total: c.denied.total, first: [...c.denied.first] };
  }

  /** The execution ended: what was charged to it (null: nothing), and nothing more is. */
  end(executionId: string): EgressDenied | null {
    const denied = this.current(executionId);
    const c = this.running.get(executionId);
    if (c !== undefined) {
      this.running.delete(executionId);
      const ids = this.bySandbox.get(c.sandboxId);
      ids?.delete(executionId);
      if (ids?.size === 0) this.bySandbox.delete(c.sandboxId);
    }
    return denied;
  }

  private told(sandboxId: string, c: EgressConnection): void {
    // A refusal is told once decided (ended_at set); an SNI mismatch turns a tunnel into one when it closes.
    if (c.allowed || c.ended_at === null) return;
    const ids = this.bySandbox.get(sandboxId);
    if (ids === undefined) return;
    const denial: EgressDenial = {
      at: c.at,
      host: c.host,
      port: c.port,
      protocol: c.protocol,
      reason: c.reason ?? "refused",
    };
    for (const id of ids) {
      const charged = this.running.get(id)!;
      if (charged.counted.has(c)) continue;
      charged.counted.add(c);
      charged.denied.total++;
      if (charged.denied.first.length < EGRESS_DENIED_KEPT) charged.denied.first.push(denial);
      charged.onDenied(denial, charged.denied.total);
    }
  }
}
