// Durations as people write them: "1500ms", "30s", "2m", "1h", "7d". Parsed the same
// way everywhere a duration is read (flags, settings, the daemon's fault grammar).

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
