// The decisions of a retention sweep, apart from the files and rows they act on
// (retention.ts does the reading and deleting; docs/protocol.md, "Retention"): how old
// a finished record may get, when the size limit is passed and by how much, which
// outputs go first, and what the sweep says about it. Pure, and mutation-tested
// (docs/testing.md).

export const DAY_MS = 24 * 60 * 60 * 1000;

export interface RetentionSettings {
  /** Finished work older than this goes (--retain). */
  retainMs: number;
  /** At most this much is kept (--retain-size). */
  retainBytes: number;
  /** How long idempotency keys are kept (--key-retention): nothing inside it goes. */
  keyRetentionMs: number;
}

/** Finished records older than this go: the retention period, never shorter than the key window. */
export function horizonMs(s: RetentionSettings): number {
  return Math.max(s.retainMs, s.keyRetentionMs);
}

/**
 * The cut-offs of a sweep at `now` (ISO times; a record that ended before one is past
 * it): `aged` for the sweep by age, `keyWindow` for the sweep by size, which never
 * deletes a record whose key a receipt may still use.
 */
export function cutoffs(now: number, s: RetentionSettings): { aged: string; keyWindow: string } {
  return {
    aged: new Date(now - horizonMs(s)).toISOString(),
    keyWindow: new Date(now - s.keyRetentionMs).toISOString(),
  };
}

/** Bytes kept over the size limit (0 at or under it). */
export function overLimit(totalBytes: number, s: RetentionSettings): number {
  return Math.max(0, totalBytes - s.retainBytes);
}

/**
 * Of finished outputs, oldest first, those that go to free `excess` bytes: the shortest
 * run from the oldest whose sizes reach it, or all of them when they do not.
 */
export function outputsToDrop<T extends { bytes: number }>(oldestFirst: readonly T[], excess: number): T[] {
  let freed = 0;
  for (const [i, output] of oldestFirst.entries()) {
    if (freed >= excess) return oldestFirst.slice(0, i);
    freed += output.bytes;
  }
  return [...oldestFirst];
}

export interface SweepResult {
  deleted_executions: number;
  dropped_outputs: number;
  deleted_processes: number;
}

/** What a sweep says in the daemon's log: what went, and what is kept over the limit and why. */
export function sweepLog(result: SweepResult, overBytes: number, s: RetentionSettings): string[] {
  const lines: string[] = [];
  if (overBytes > 0) {
    const days = Math.round(s.keyRetentionMs / DAY_MS);
    lines.push(
      `retention: ${overBytes} bytes over the size limit are kept: running, or inside the ${days}-day key window`,
    );
  }
  if (result.deleted_executions + result.dropped_outputs + result.deleted_processes > 0) {
    lines.push(
      `retention: deleted ${result.deleted_executions} execution(s) and ${result.deleted_processes} process(es), dropped ${result.dropped_outputs} output(s)`,
    );
  }
  return lines;
}
