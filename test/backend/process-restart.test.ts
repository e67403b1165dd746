import { describe, expect, it } from "vitest";
import {
  decideRestart,
  nextBackoffMs,
  RestartTracker,
  restartsInWindowAfterRun,
  STABLE_UPTIME_MS,
} from "../../src/backend/processes/restart.js";
import type { RestartPolicy } from "../../src/protocol/types.js";

const policy = (over: Partial<RestartPolicy> = {}): RestartPolicy => ({
  policy: "on-failure",
  max_restarts: 5,
  backoff_ms: 1000,
  max_backoff_ms: 30_000,
  ...over,
});

describe("nextBackoffMs", () => {
  it.each([
    [0, 1000],
    [1, 2000],
    [2, 4000],
    [3, 8000],
    [4, 16_000],
    [5, 30_000],
    [6, 30_000],
    [5000, 30_000],
  ])("after %i restarts in the window → %i ms", (n, expected) => {
    expect(nextBackoffMs(n, policy())).toBe(expected);
  });

  it("never exceeds a cap below the base", () => {
    expect(nextBackoffMs(0, { backoff_ms: 500, max_backoff_ms: 200 })).toBe(200);
  });
});

describe("restartsInWindowAfterRun", () => {
  it.each([
    [3, 0, 3],
    [3, STABLE_UPTIME_MS - 1, 3],
    [3, STABLE_UPTIME_MS, 0],
    [0, 10 * STABLE_UPTIME_MS, 0],
  ])("%i restarts, up %i ms → %i", (n, uptime, expected) => {
    expect(restartsInWindowAfterRun(n, uptime)).toBe(expected);
  });
});

describe("decideRestart", () => {
  it.each([
    {
      p: "never",
      verdict: "failed",
      n: 0,
      uptime: 0,
      expected: { restart: false, reason: "exited", restartsInWindow: 0 },
    },
    {
      p: "never",
      verdict: "succeeded",
      n: 0,
      uptime: 0,
      expected: { restart: false, reason: "exited", restartsInWindow: 0 },
    },
    {
      p: "on-failure",
      verdict: "succeeded",
      n: 1,
      uptime: 0,
      expected: { restart: false, reason: "exited", restartsInWindow: 1 },
    },
    {
      p: "on-failure",
      verdict: "failed",
      n: 0,
      uptime: 0,
      expected: { restart: true, delayMs: 1000, restartsInWindow: 1 },
    },
    {
      p: "on-failure",
      verdict: "failed",
      n: 2,
      uptime: 5,
      expected: { restart: true, delayMs: 4000, restartsInWindow: 3 },
    },
    {
      p: "on-failure",
      verdict: "failed",
      n: 5,
      uptime: 5,
      expected: { restart: false, reason: "max_restarts", restartsInWindow: 5 },
    },
    // A stable run opens a new window: budget whole again, back-off from the base.
    {
      p: "on-failure",
      verdict: "failed",
      n: 5,
      uptime: STABLE_UPTIME_MS,
      expected: { restart: true, delayMs: 1000, restartsInWindow: 1 },
    },
    {
      p: "always",
      verdict: "succeeded",
      n: 1,
      uptime: 0,
      expected: { restart: true, delayMs: 2000, restartsInWindow: 2 },
    },
    {
      p: "always",
      verdict: "failed",
      n: 4,
      uptime: 0,
      expected: { restart: true, delayMs: 16_000, restartsInWindow: 5 },
    },
  ] as const)("$p, $verdict, $n in window, up $uptime ms", ({ p, verdict, n, uptime, expected }) => {
    expect(decideRestart({ policy: policy({ policy: p }), verdict, restartsInWindow: n, uptimeMs: uptime })).toEqual(
      expected,
    );
  });

  it("max_restarts 0 never restarts", () => {
    expect(
      decideRestart({ policy: policy({ max_restarts: 0 }), verdict: "failed", restartsInWindow: 0, uptimeMs: 0 }),
    ).toEqual({ restart: false, reason: "max_restarts", restartsInWindow: 0 });
  });
});

describe("RestartTracker on a fake clock", () => {
  function fakeClock() {
    let now = 1_000_000;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  }

  it("doubles the back-off of quick failures up to the cap, then gives up at max_restarts", () => {
    const clock = fakeClock();
    const tracker = new RestartTracker(policy({ max_restarts: 7 }), clock.now);
    const delays: Array<number | string> = [];
    for (let run = 0; run < 9; run++) {
      tracker.runStarted();
      clock.advance(100);
      const decision = tracker.runEnded("failed");
      delays.push(decision.restart ? decision.delayMs : decision.reason);
      if (!decision.restart) break;
      clock.advance(decision.delayMs);
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, "max_restarts"]);
  });

  it("resets after 30 s of stable uptime, and not a moment before", () => {
    const clock = fakeClock();
    const tracker = new RestartTracker(policy(), clock.now);
    const runFor = (ms: number) => {
      tracker.runStarted();
      clock.advance(ms);
      const d = tracker.runEnded("failed");
      if (d.restart) clock.advance(d.delayMs);
      return d.restart ? d.delayMs : d.reason;
    };
    expect([runFor(10), runFor(10), runFor(10)]).toEqual([1000, 2000, 4000]);
    expect(tracker.restartsInWindow).toBe(3);
    expect(runFor(STABLE_UPTIME_MS - 1)).toBe(8000);
    expect(runFor(STABLE_UPTIME_MS)).toBe(1000);
    expect(tracker.restartsInWindow).toBe(1);
    expect(runFor(10)).toBe(2000);
  });

  it("on-failure with max_restarts 2 allows exactly three runs", () => {
    const clock = fakeClock();
    const tracker = new RestartTracker(policy({ max_restarts: 2, backoff_ms: 50 }), clock.now);
    let runs = 0;
    for (;;) {
      tracker.runStarted();
      runs++;
      clock.advance(5);
      const d = tracker.runEnded("failed");
      if (!d.restart) {
        expect(d.reason).toBe("max_restarts");
        break;
      }
      clock.advance(d.delayMs);
    }
    expect(runs).toBe(3);
  });

  it("carries a window over from a stored count (restart recovery)", () => {
    const clock = fakeClock();
    const tracker = new RestartTracker(policy({ max_restarts: 3 }), clock.now, 2);
    tracker.runStarted();
    expect(tracker.runEnded("failed")).toEqual({ restart: true, delayMs: 4000, restartsInWindow: 3 });
    tracker.runStarted();
    expect(tracker.runEnded("failed")).toMatchObject({ restart: false, reason: "max_restarts" });
  });
});
