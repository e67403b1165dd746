// The decisions of a retention sweep (src/backend/retention/rules.ts): the
// horizon never shorter than the key window, the cut-offs, the size limit, which
// outputs go first, and what the daemon's log says. test/backend/retention.test.ts
// runs them against a real backend.

import { describe, expect, it } from "vitest";
import {
  cutoffs,
  DAY_MS,
  horizonMs,
  outputsToDrop,
  overLimit,
  type RetentionSettings,
  sweepLog,
} from "../../src/backend/retention/rules.js";

const settings = (over: Partial<RetentionSettings> = {}): RetentionSettings => ({
  retainMs: 30 * DAY_MS,
  retainBytes: 1000,
  keyRetentionMs: 7 * DAY_MS,
  ...over,
});
const NOW = Date.parse("2026-11-30T12:00:00.000Z");

describe("horizonMs", () => {
  it.each([
    [30, 7, 30],
    [1, 7, 7],
    [7, 7, 7],
  ])("--retain %id with --key-retention %id keeps finished work %id", (retain, key, kept) => {
    expect(horizonMs(settings({ retainMs: retain * DAY_MS, keyRetentionMs: key * DAY_MS }))).toBe(kept * DAY_MS);
  });
});

describe("cutoffs", () => {
  it("by age at the horizon, for space at the key window", () => {
    expect(cutoffs(NOW, settings())).toEqual({
      aged: "2026-10-31T12:00:00.000Z",
      keyWindow: "2026-11-23T12:00:00.000Z",
    });
  });

  it("a --retain shorter than the key window does not bring the age cut-off closer", () => {
    expect(cutoffs(NOW, settings({ retainMs: DAY_MS }))).toEqual({
      aged: "2026-11-23T12:00:00.000Z",
      keyWindow: "2026-11-23T12:00:00.000Z",
    });
  });
});

describe("overLimit", () => {
  it.each([
    [999, 0],
    [1000, 0],
    [1001, 1],
    [5000, 4000],
  ])("%i bytes against 1000 → %i over", (total, over) => {
    expect(overLimit(total, settings())).toBe(over);
  });
});

describe("outputsToDrop", () => {
  const outputs = [
    { id: "oldest", bytes: 300 },
    { id: "older", bytes: 200 },
    { id: "newer", bytes: 500 },
  ];
  const ids = (excess: number) => outputsToDrop(outputs, excess).map((o) => o.id);

  it("drops the oldest first, only as many as free the excess", () => {
    expect(ids(1)).toEqual(["oldest"]);
    expect(ids(300)).toEqual(["oldest"]);
    expect(ids(301)).toEqual(["oldest", "older"]);
    expect(ids(500)).toEqual(["oldest", "older"]);
    expect(ids(501)).toEqual(["oldest", "older", "newer"]);
  });

  it("drops them all when they cannot free enough, and none when nothing is over", () => {
    expect(ids(10_000)).toEqual(["oldest", "older", "newer"]);
    expect(ids(0)).toEqual([]);
    expect(outputsToDrop([], 100)).toEqual([]);
  });

  it("counts empty outputs as freeing nothing", () => {
    expect(outputsToDrop([{ bytes: 0 }, { bytes: 0 }, { bytes: 10 }], 5)).toHaveLength(3);
  });
});

describe("sweepLog", () => {
  const none = { deleted_executions: 0, dropped_outputs: 0, deleted_processes: 0 };

  it("says nothing after a sweep that did nothing and is under the limit", () => {
    expect(sweepLog(none, 0, settings())).toEqual([]);
  });

  it("says what went, whichever kind it was", () => {
    for (const result of [
      { ...none, deleted_executions: 2 },
      { ...none, dropped_outputs: 1 },
      { ...none, deleted_processes: 3 },
    ]) {
      expect(sweepLog(result, 0, settings())).toEqual([
        `retention: deleted ${result.deleted_executions} execution(s) and ${result.deleted_processes} process(es), dropped ${result.dropped_outputs} output(s)`,
      ]);
    }
  });

  it("says how much is kept over the limit and why, in whole days of the key window", () => {
    expect(sweepLog({ ...none, deleted_executions: 1 }, 42, settings({ keyRetentionMs: 2.6 * DAY_MS }))).toEqual([
      "retention: 42 bytes over the size limit are kept: running, or inside the 3-day key window",
      "retention: deleted 1 execution(s) and 0 process(es), dropped 0 output(s)",
    ]);
  });
});
