import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "../../src/common/duration.js";
import { parseTimeArg } from "../../src/cli/duration.js";

describe("parseDuration", () => {
  it.each([
    ["1500ms", 1500],
    ["30s", 30_000],
    ["2m", 120_000],
    ["1h", 3_600_000],
    ["1.5s", 1500],
    ["1.25s", 1250],
    ["0.5ms", 1],
    ["7d", 604_800_000],
    [" 10s ", 10_000],
  ])("%s → %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "10", "s", "banana", "-5s", "5 s", "1e3ms", "5S", "1m30s", "1.s", ".5s"])("refuses %j", (text) => {
    expect(parseDuration(text)).toBeNull();
  });

  it("refuses a number too large to be a number of milliseconds", () => {
    expect(parseDuration(`${"9".repeat(400)}ms`)).toBeNull();
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0ms"],
    [999, "999ms"],
    [1000, "1s"],
    [1500, "1500ms"],
    [30_000, "30s"],
    [59_000, "59s"],
    [60_000, "1m"],
    [120_000, "2m"],
    [90_000, "1m30s"],
    [3_600_000, "1h"],
    [3_660_000, "61m"],
    [7_200_000, "2h"],
  ])("%d ms → %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe("parseTimeArg", () => {
  const now = Date.parse("2026-11-29T12:00:00.000Z");
  it("takes a duration ago", () => {
    expect(parseTimeArg("1d", now)).toBe("2026-11-28T12:00:00.000Z");
  });
  it("takes ISO-8601 dates and times", () => {
    expect(parseTimeArg("2026-11-01", now)).toBe("2026-11-01T00:00:00.000Z");
    expect(parseTimeArg("2026-11-01T10:00:00Z", now)).toBe("2026-11-01T10:00:00.000Z");
  });
  it("refuses anything else", () => {
    expect(parseTimeArg("yesterday", now)).toBeNull();
    expect(parseTimeArg("2026-13-45", now)).toBeNull();
  });
});
