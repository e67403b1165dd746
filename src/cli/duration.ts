// Duration parsing for flags: "1500ms", "30s", "2m", "1h", and the check every
// duration flag shares.

import { UsageError } from "./errors.js";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a duration into milliseconds; returns null when it is not one. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  if (!Number.isFinite(ms)) return null;
  return Math.round(ms);
}

/** Formats milliseconds the way a person writes them: 1500ms, 30s, 2m, 1m30s. */
export function formatDuration(ms: number): string {
  if (ms < 1000 || ms % 1000 !== 0) return `${ms}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s}s`;
  if (s % 60 === 0) return s % 3600 === 0 ? `${s / 3600}h` : `${s / 60}m`;
  return `${Math.floor(s / 60)}m${s % 60}s`;
}

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
 * (UsageError, exit 125): not a duration, or outside [min, max].
 */
export function durationOption(flag: string, text: string, range: { min?: number; max?: number } = {}): number {
  const ms = parseDuration(text);
  if (ms === null) throw new UsageError(`${flag} ${JSON.stringify(text)} is not a duration (use e.g. 1500ms, 30s, 2m)`);
  const min = range.min ?? 1;
  const max = range.max ?? Number.POSITIVE_INFINITY;
  if (ms < min || ms > max) {
    throw new UsageError(
      `${flag} ${text} is out of range (${formatDuration(min)}..${Number.isFinite(max) ? formatDuration(max) : "∞"})`,
    );
  }
  return ms;
}
