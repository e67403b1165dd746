// Duration and time flags: the check every duration flag shares, and --since/--before.
// Parsing a duration itself is src/common/duration.ts.

import { formatDuration, parseDuration } from "../common/duration.js";
import { UsageError } from "../common/errors.js";
import { JOB_TIMEOUT_MAX_MS } from "../protocol/jobs.js";
import { PROCESS_TIMEOUT_MAX_MS } from "../protocol/types.js";

/**
 * A point in time for --since/--before: an ISO-8601 date or time, or a duration
 * ago ("7d", "24h"). Returns an ISO string, or null when it is neither.
 */
export function parseTimeArg(text: string, now = Date.now()): string | null {
  const ago = parseDuration(text);
  if (ago !== null) return new Date(now - ago).toISOString();
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return null;
  const t = Date.parse(text);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/**
 * A duration flag's value in ms. Bad input is refused before anything is sent
 * (UsageError, exit 125): not a duration, or outside [min, max]; `overMax` says
 * where a longer one fits (the hint under the refusal).
 */
export function durationOption(
  flag: string,
  text: string,
  range: { min?: number; max?: number; overMax?: (ms: number) => string } = {},
): number {
  const ms = parseDuration(text);
  const min = range.min ?? 1;
  const max = range.max ?? Number.POSITIVE_INFINITY;
  // The range is said either way: `--timeout 0` learns what it may be, not only what it is not.
  const allowed = Number.isFinite(max)
    ? `from ${formatDuration(min)} to ${formatDuration(max)}`
    : `of at least ${formatDuration(min)}`;
  if (ms === null) {
    throw new UsageError(
      `${flag} ${JSON.stringify(text)} is not a duration: give one ${allowed}, with its unit (e.g. 1500ms, 30s, 2m)`,
    );
  }
  if (ms < min || ms > max) {
    throw new UsageError(
      `${flag} ${text} is out of range: give one ${allowed}`,
      ms > max ? range.overMax?.(ms) : undefined,
    );
  }
  return ms;
}

/**
 * Where work longer than an execution's (or a job's) limit runs: a job (sbx jobs run,
 * up to JOB_TIMEOUT_MAX_MS) or a supervised process (sbx process start, up to
 * PROCESS_TIMEOUT_MAX_MS). Only the ones whose limit takes `ms` are named.
 */
export function longerWorkHint(text: string, ms: number): string {
  const ways = [
    ms <= JOB_TIMEOUT_MAX_MS
      ? `a job: sbx jobs run --timeout ${text} -- CMD (up to ${formatDuration(JOB_TIMEOUT_MAX_MS)})`
      : null,
    ms <= PROCESS_TIMEOUT_MAX_MS
      ? `a supervised process: sbx process start --timeout ${text} -- CMD (up to ${formatDuration(PROCESS_TIMEOUT_MAX_MS)})`
      : `a supervised process without a time limit: sbx process start -- CMD`,
  ].filter((w) => w !== null);
  return `longer work runs as ${ways.join(", or as ")}`;
}

/**
 * `--idle-timeout`: a duration of at least one second, or 0/off (no idle stop); with
 * `allowDefault` (update), `default` is null: the daemon's default again.
 */
export function idleTimeoutOption(text: string, allowDefault = false): number | null {
  const t = text.trim();
  if (t === "0" || t === "off") return 0;
  if (allowDefault && t === "default") return null;
  const ms = parseDuration(t);
  if (ms === null || ms < 1000 || ms > 365 * 86_400_000) {
    throw new UsageError(
      `--idle-timeout ${JSON.stringify(text)}: a duration from 1s to 365d (e.g. 30s, 15m, 2h), or 0/off${allowDefault ? ", or default" : ""}`,
    );
  }
  return ms;
}
