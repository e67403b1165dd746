// When a supervised process is started again, kept pure so that it can be
// table-tested with a fake clock. The back-off doubles from `backoff_ms` up to
// `max_backoff_ms` with each restart in the current window; a run that stayed up
// for STABLE_UPTIME_MS closes the window (the next delay is `backoff_ms` again and
// the `max_restarts` budget is whole again). After `max_restarts` restarts in one
// window the process is left ended.

import type { RestartPolicy } from "../../protocol/types.js";

export const STABLE_UPTIME_MS = 30_000;

/** The delay before restart number `restartsInWindow + 1` of the current window. */
export function nextBackoffMs(
  restartsInWindow: number,
  policy: Pick<RestartPolicy, "backoff_ms" | "max_backoff_ms">,
): number {
  const { backoff_ms: base, max_backoff_ms: max } = policy;
  if (restartsInWindow <= 0) return Math.min(base, max);
  // 2^n overflows nothing below 2^1023; past the cap the answer is the cap anyway.
  const delay = base * 2 ** Math.min(restartsInWindow, 1000);
  return Number.isFinite(delay) ? Math.min(delay, max) : max;
}

/** A run that stayed up long enough opens a new window. */
export function restartsInWindowAfterRun(
  restartsInWindow: number,
  uptimeMs: number,
  stableUptimeMs = STABLE_UPTIME_MS,
): number {
  return uptimeMs >= stableUptimeMs ? 0 : restartsInWindow;
}

/** How a run ended, as far as the restart policy cares. */
export type RunVerdict = "succeeded" | "failed";

export type RestartDecision =
  | { restart: true; delayMs: number; restartsInWindow: number }
  | {
      restart: false;
      /** `exited`: the policy does not restart this end; `max_restarts`: the budget of the window is spent. */
      reason: "exited" | "max_restarts";
      restartsInWindow: number;
    };

/** Decides what follows the end of a run. */
export function decideRestart(input: {
  policy: RestartPolicy;
  verdict: RunVerdict;
  restartsInWindow: number;
  uptimeMs: number;
  stableUptimeMs?: number;
}): RestartDecision {
  const { policy, verdict } = input;
  const window = restartsInWindowAfterRun(input.restartsInWindow, input.uptimeMs, input.stableUptimeMs);
  const wanted = policy.policy === "always" || (policy.policy === "on-failure" && verdict === "failed");
  if (!wanted) return { restart: false, reason: "exited", restartsInWindow: window };
  if (window >= policy.max_restarts) return { restart: false, reason: "max_restarts", restartsInWindow: window };
  return { restart: true, delayMs: nextBackoffMs(window, policy), restartsInWindow: window + 1 };
}

/** The restart bookkeeping of one process, over an injected clock. */
export class RestartTracker {
  private startedAtMs: number | null = null;

  constructor(
    private readonly policy: RestartPolicy,
    private readonly now: () => number,
    private window = 0,
    private readonly stableUptimeMs = STABLE_UPTIME_MS,
  ) {}

  /** Restarts in the current window. */
  get restartsInWindow(): number {
    return this.window;
  }

  runStarted(): void {
    this.startedAtMs = this.now();
  }

  runEnded(verdict: RunVerdict): RestartDecision {
    const uptimeMs = this.startedAtMs === null ? 0 : this.now() - this.startedAtMs;
    this.startedAtMs = null;
    const decision = decideRestart({
      policy: this.policy,
      verdict,
      restartsInWindow: this.window,
      uptimeMs,
      stableUptimeMs: this.stableUptimeMs,
    });
    this.window = decision.restartsInWindow;
    return decision;
  }
}
