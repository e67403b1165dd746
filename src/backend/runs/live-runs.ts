// The runs a backend holds right now — executions running, supervised processes not
// ended for good (running, waiting to restart, stopping), jobs running — in one
// registry that the three use. It alone decides whether a new run may start (not
// once shutdown began), ends every run of a sandbox (sandbox rm --force) or of the
// backend (shutdown) and waits for their ends to be stored, forgets them all as a
// crash would (a test's simulated crash), and counts them (the daemon's idleness).
// What a run is and how it ends stays its domain's: each registers a LiveRun.

import { randomBytes } from "node:crypto";
import { notStarted } from "../refusal.js";

export type RunKind = "execution" | "process" | "job";

/** Why every run of a sandbox or of the backend is being ended. */
export type EndReason = "sandbox_removed" | "sandbox_stopped" | "shutdown";

/** What the registry needs of a run. */
export interface LiveRun {
  readonly sandboxId: string;
  /**
   * Ends it (TERM to its process group, KILL after the grace) as its domain ends it
   * for this reason; resolves once its end is stored.
   */
  end(reason: EndReason): Promise<void>;
  /** Forgets it without ending it, as a crash would (restart recovery handles it). */
  abandon(): void;
}

/** A kind's runs that are admitted but not started (queued jobs): ended before the live ones. */
export interface KindOptions {
  /** Ends them; says how many. */
  endUnstartedIn?(sandboxId: string): number;
}

/** A kind's runs by id, telling each change's sandbox (a run starting or ending is activity). */
class WatchedRuns<T extends LiveRun> extends Map<string, T> {
  constructor(private readonly changed: (sandboxId: string) => void) {
    super();
  }

  override set(id: string, run: T): this {
    super.set(id, run);
    this.changed?.(run.sandboxId);
    return this;
  }

  override delete(id: string): boolean {
    const run = this.get(id);
    const had = super.delete(id);
    if (run !== undefined) this.changed(run.sandboxId);
    return had;
  }
}

/** A new boot id: drawn once each time a backend starts. */
export function newBoot(): string {
  return `boot_${randomBytes(8).toString("hex")}`;
}

export class LiveRuns {
  /**
   * The boot these runs belong to (docs/protocol.md, "Ownership fences"): drawn when
   * the backend starts, never again in its life. Every run records it; a handle names it.
   */
  readonly boot: string;
  private readonly kinds = new Map<RunKind, { runs: Map<string, LiveRun>; opts: KindOptions }>();
  private state: "accepting" | "shutting_down" | "abandoned" = "accepting";
  /** Told the sandbox of every run registered or forgotten (idle stop: sandboxes/idle.ts). */
  onChange: (sandboxId: string) => void = () => {};

  constructor(boot: string = newBoot()) {
    this.boot = boot;
  }

  /** The map a domain keeps its live runs of one kind in (by id); the registry reads them all. */
  of<T extends LiveRun>(kind: RunKind, opts: KindOptions = {}): Map<string, T> {
    let entry = this.kinds.get(kind);
    if (!entry) {
      entry = { runs: new WatchedRuns((sandboxId) => this.onChange(sandboxId)), opts };
      this.kinds.set(kind, entry);
    }
    return entry.runs as Map<string, T>;
  }

  /** False once shutdown began (or the runs were abandoned): nothing new may start. */
  get accepting(): boolean {
    return this.state === "accepting";
  }

  /** True once the runs were abandoned (a simulated crash): nothing of them is stored any more. */
  get abandoned(): boolean {
    return this.state === "abandoned";
  }

  /** True once shutdown began (not after a simulated crash). */
  get shuttingDown(): boolean {
    return this.state === "shutting_down";
  }

  /** Refuses a new run once shutdown began: not_started (shutting_down), nothing was started. */
  requireAccepting(): void {
    if (!this.accepting) throw notStarted("shutting_down", "the backend is shutting down; nothing was started");
  }

  /** Live runs of every kind, or of one. */
  count(kind?: RunKind): number {
    let n = 0;
    for (const [k, { runs }] of this.kinds) if (kind === undefined || k === kind) n += runs.size;
    return n;
  }

  /** Live runs of a sandbox, by kind. */
  countIn(sandboxId: string): Record<RunKind, number> {
    const counts: Record<RunKind, number> = { execution: 0, process: 0, job: 0 };
    for (const [kind, { runs }] of this.kinds) {
      for (const run of runs.values()) if (run.sandboxId === sandboxId) counts[kind]++;
    }
    return counts;
  }

  /**
   * Ends every run of a sandbox (sandbox rm --force, sandbox stop); resolves once their
   * ends are stored. Says how many admitted runs that were not started (queued jobs) it ended.
   */
  async endAllIn(
    sandboxId: string,
    reason: "sandbox_removed" | "sandbox_stopped" = "sandbox_removed",
  ): Promise<number> {
    let unstarted = 0;
    for (const { opts } of this.kinds.values()) unstarted += opts.endUnstartedIn?.(sandboxId) ?? 0;
    await Promise.all(this.all().flatMap((run) => (run.sandboxId === sandboxId ? [run.end(reason)] : [])));
    return unstarted;
  }

  /** Stops accepting, ends every run and resolves once their ends are stored. */
  async shutdown(): Promise<void> {
    if (this.state === "accepting") this.state = "shutting_down";
    await Promise.all(this.all().map((run) => run.end("shutdown")));
  }

  /** Forgets every run without ending it, as a crash would. */
  abandon(): void {
    this.state = "abandoned";
    for (const run of this.all()) run.abandon();
    for (const { runs } of this.kinds.values()) runs.clear();
  }

  private all(): LiveRun[] {
    return [...this.kinds.values()].flatMap(({ runs }) => [...runs.values()]);
  }
}
