// Idle stop (docs/operations.md, "Idle stop"): a sandbox whose environment runs with
// nothing in it — no execution, supervised process (one waiting to restart included),
// job, terminal (each belongs to one of those) or connection to its ports — for its
// idle timeout has its environment stopped, as `sandbox stop` does; its workspace,
// image root and settings stay and the next command starts it again.
//
// Activity is told, not sampled: a run registered or ended (runs/live-runs.ts) and a
// connection opened or closed touch the sandbox; a sweep every sweepMs (real time)
// stops the ones whose last touch is older than their timeout on the backend's clock,
// so a test moves the clock instead of sleeping.

import type { IdleStatus } from "../../protocol/types.js";
import type { SandboxRow, SandboxStore } from "./store.js";

export interface IdleStopOptions {
  now: () => number;
  /** The daemon's default timeout (ms); null: off unless a sandbox sets its own. */
  defaultTimeoutMs: number | null;
  /** Between sweeps (real time). */
  sweepMs: number;
  rows: () => SandboxRow[];
  /** Whether the sandbox's environment runs (or starts): only a running one is stopped. */
  running: (row: SandboxRow) => boolean;
  /** What runs in the sandbox now besides connections, e.g. ["1 execution"]; [] when nothing. */
  work: (sandboxId: string) => string[];
  /** Stops its environment; resolves once it is stopped and the stop is recorded. */
  stop: (row: SandboxRow, idleMs: number) => Promise<void>;
  log: (line: string) => void;
}

/** The default time between sweeps: a stop comes at most this late. */
export const IDLE_SWEEP_MS = 1000;

export class IdleStop {
  /** When each sandbox was last seen busy, touched or started (the backend's clock). */
  private readonly lastActive = new Map<string, number>();
  private readonly connections = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | null = null;

  constructor(private readonly opts: IdleStopOptions) {}

  /** Something happened in the sandbox: its idle time starts again. */
  touch(sandboxId: string): void {
    this.lastActive.set(sandboxId, this.opts.now());
  }

  /** A connection to one of its ports (published, forwarded): it keeps the sandbox awake until it closes. */
  connected(sandboxId: string, conn: { once(event: "close", fn: () => void): unknown }): void {
    this.connections.set(sandboxId, (this.connections.get(sandboxId) ?? 0) + 1);
    this.touch(sandboxId);
    conn.once("close", () => {
      const n = (this.connections.get(sandboxId) ?? 1) - 1;
      if (n <= 0) this.connections.delete(sandboxId);
      else this.connections.set(sandboxId, n);
      this.touch(sandboxId);
    });
  }

  /** The timeout that applies to a sandbox (null: off), and whose it is. */
  timeoutOf(row: SandboxRow): { ms: number | null; from: "sandbox" | "daemon" } {
    if (row.idle_timeout_ms !== null)
      return { ms: row.idle_timeout_ms === 0 ? null : row.idle_timeout_ms, from: "sandbox" };
    return { ms: this.opts.defaultTimeoutMs, from: "daemon" };
  }

  /** What keeps the sandbox awake now: its runs, then its connections. */
  awake(sandboxId: string): string[] {
    const conns = this.connections.get(sandboxId) ?? 0;
    return [...this.opts.work(sandboxId), ...(conns > 0 ? [`${conns} connection${conns === 1 ? "" : "s"}`] : [])];
  }

  /** For `sandbox show`: the timeout, when it stops if nothing runs, what keeps it awake, its last stop. */
  status(row: SandboxRow): IdleStatus {
    const { ms, from } = this.timeoutOf(row);
    const awake = this.awake(row.sandbox_id);
    let stopsAt: string | null = null;
    if (ms !== null && awake.length === 0 && this.opts.running(row)) {
      stopsAt = new Date(this.lastActiveOf(row.sandbox_id) + ms).toISOString();
    }
    return { timeout_ms: ms, from, stops_at: stopsAt, awake, last_stop: lastStopOf(row) };
  }

  /** Sweeps every sweepMs until close(). */
  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.sweep(), this.opts.sweepMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  /**
   * Stops every running sandbox idle for its timeout; says which it stopped. A sandbox
   * busy now is touched (its idle time starts when its work ends); one sweep at a time.
   */
  sweep(): Promise<void> {
    if (this.sweeping !== null) return this.sweeping;
    this.sweeping = this.stopIdle().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  private async stopIdle(): Promise<void> {
    for (const row of this.opts.rows()) {
      const id = row.sandbox_id;
      const { ms } = this.timeoutOf(row);
      if (!this.opts.running(row)) {
        // Not running: its idle time starts when it starts (touched by its first run).
        this.lastActive.delete(id);
        continue;
      }
      if (this.awake(id).length > 0) {
        this.touch(id);
        continue;
      }
      const idleMs = this.opts.now() - this.lastActiveOf(id);
      if (ms === null || idleMs < ms) continue;
      try {
        await this.opts.stop(row, idleMs);
      } catch (err) {
        this.opts.log(`sandbox ${row.name}: the idle stop failed: ${(err as Error).message}`);
      }
      this.lastActive.delete(id);
    }
  }

  /** Its last activity; a running sandbox never touched (the backend just started) starts its idle time now. */
  private lastActiveOf(sandboxId: string): number {
    let at = this.lastActive.get(sandboxId);
    if (at === undefined) {
      at = this.opts.now();
      this.lastActive.set(sandboxId, at);
    }
    return at;
  }
}

function lastStopOf(row: SandboxRow): IdleStatus["last_stop"] {
  if (row.last_stop === null) return null;
  try {
    return JSON.parse(row.last_stop) as IdleStatus["last_stop"];
  } catch {
    return null;
  }
}

/** Keeps a stop that ended a running environment on the sandbox (last_stop: when, and why). */
export function keepLastStop(store: SandboxStore, sandboxId: string, now: number, reason: "idle" | "requested"): void {
  const at = new Date(now).toISOString();
  store.transaction(() => store.setSandboxLastStop(sandboxId, JSON.stringify({ at, reason })));
}
