// Offset arithmetic of a supervised process's log stream, kept pure so that it can
// be table-tested. A stream is a run of segment files, each named by the logical
// offset of its first byte; offsets count every byte the stream ever produced
// (all restarts, all rotations), so they only grow. Old segments are deleted to
// bound the bytes kept; a read below the oldest kept byte is moved up to it.

export interface Segment {
  /** Logical offset of the segment's first byte (also its file name). */
  start: number;
  length: number;
}

/**
 * What a stream holds: contiguous segments, oldest first, and the logical end (the
 * total bytes produced). The last segment ends at `end`; with no segment (nothing
 * written yet, or every file lost) the stream starts again at `end`.
 */
export interface StreamLayout {
  readonly segments: readonly Segment[];
  readonly end: number;
}

export const EMPTY_LAYOUT: StreamLayout = { segments: [], end: 0 };

export function segmentEnd(s: Segment): number {
  return s.start + s.length;
}

/** The logical offset of the oldest byte still kept; `end` when nothing is kept. */
export function oldestOffset(layout: StreamLayout): number {
  return layout.segments[0]?.start ?? layout.end;
}

/** Bytes kept on disk. */
export function keptBytes(layout: StreamLayout): number {
  return layout.segments.reduce((n, s) => n + s.length, 0);
}

/** The segment holding the byte at `offset` and the position in its file, or null (rotated away or not yet written). */
export function locateOffset(layout: StreamLayout, offset: number): { index: number; position: number } | null {
  const segments = layout.segments;
  // Binary search: the last segment starting at or before `offset`.
  let lo = 0;
  let hi = segments.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (segments[mid]!.start <= offset) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  if (found < 0) return null;
  const segment = segments[found]!;
  if (offset >= segmentEnd(segment)) return null;
  return { index: found, position: offset - segment.start };
}

export interface ReadPiece {
  segmentStart: number;
  /** Byte position in the segment's file. */
  position: number;
  length: number;
}

export interface ReadPlan {
  /** Where the read starts: the offset asked for, or the oldest kept one when that was rotated away. */
  offset: number;
  rotated: boolean;
  pieces: ReadPiece[];
  /** Where the next read goes on. */
  nextOffset: number;
}

/** Plans a read of up to `limit` bytes from `offset`, which must not exceed `end`. */
export function planRead(layout: StreamLayout, offset: number, limit: number): ReadPlan {
  if (offset > layout.end) throw new RangeError(`offset ${offset} is beyond the end ${layout.end}`);
  const oldest = oldestOffset(layout);
  const rotated = offset < oldest;
  let at = rotated ? oldest : offset;
  const from = at;
  const pieces: ReadPiece[] = [];
  let left = Math.max(0, limit);
  const first = locateOffset(layout, from);
  for (let i = first?.index ?? layout.segments.length; i < layout.segments.length && left > 0; i++) {
    const s = layout.segments[i]!;
    const position = at - s.start;
    const length = Math.min(left, s.length - position);
    if (length <= 0) continue;
    pieces.push({ segmentStart: s.start, position, length });
    at += length;
    left -= length;
  }
  return { offset: from, rotated, pieces, nextOffset: at };
}

export interface AppendPiece {
  segmentStart: number;
  /** Offset of this piece within the appended chunk. */
  from: number;
  length: number;
  /** A new segment file starts with this piece. */
  opens: boolean;
}

/**
 * Plans appending `chunkLength` bytes: fills the last segment up to `segmentBytes`,
 * then opens new segments of at most `segmentBytes` each. Returns the pieces and
 * the layout after the append (before retention).
 */
export function planAppend(
  layout: StreamLayout,
  chunkLength: number,
  segmentBytes: number,
): { pieces: AppendPiece[]; layout: StreamLayout } {
  const segments = layout.segments.map((s) => ({ ...s }));
  const pieces: AppendPiece[] = [];
  let end = layout.end;
  let from = 0;
  while (from < chunkLength) {
    let last = segments[segments.length - 1];
    let opens = false;
    if (last === undefined || last.length >= segmentBytes) {
      last = { start: end, length: 0 };
      segments.push(last);
      opens = true;
    }
    const length = Math.min(chunkLength - from, segmentBytes - last.length);
    pieces.push({ segmentStart: last.start, from, length, opens });
    last.length += length;
    end += length;
    from += length;
  }
  return { pieces, layout: { segments, end } };
}

/**
 * Which oldest segments to delete so that at most `keepBytes` stay kept. The
 * segment being written (the last) is never deleted, so a stream keeps between
 * `keepBytes - segmentBytes` and `keepBytes` bytes once it is that long.
 */
export function planRetention(layout: StreamLayout, keepBytes: number): { drop: Segment[]; layout: StreamLayout } {
  let kept = keptBytes(layout);
  let first = 0;
  while (kept > keepBytes && first < layout.segments.length - 1) {
    kept -= layout.segments[first]!.length;
    first++;
  }
  return {
    drop: layout.segments.slice(0, first),
    layout: { segments: layout.segments.slice(first), end: layout.end },
  };
}

/**
 * Rebuilds a layout from the segment files found on disk (any order). Only the
 * contiguous run ending with the newest file is kept; older files before a gap are
 * returned as `stray` (to delete). `knownEnd` is the end recorded in the database:
 * when the files end before it, bytes were lost and no file is kept, so that
 * offsets never go back and the kept segments stay contiguous up to `end`.
 */
export function layoutFromFiles(files: readonly Segment[], knownEnd = 0): { layout: StreamLayout; stray: Segment[] } {
  const sorted = [...files].sort((a, b) => a.start - b.start);
  let first = sorted.length - 1;
  while (first > 0 && segmentEnd(sorted[first - 1]!) === sorted[first]!.start) first--;
  const last = sorted[sorted.length - 1];
  const filesEnd = last === undefined ? 0 : segmentEnd(last);
  if (last === undefined || knownEnd > filesEnd) {
    return { layout: { segments: [], end: Math.max(knownEnd, filesEnd) }, stray: sorted };
  }
  return { layout: { segments: sorted.slice(first), end: filesEnd }, stray: sorted.slice(0, first) };
}

/** Name of a segment file: `<stream>.<start>.log`. */
export function segmentFileName(stream: string, start: number): string {
  return `${stream}.${start}.log`;
}

/** The start offset of a segment file of `stream`, or null for any other file. */
export function parseSegmentFileName(stream: string, name: string): number | null {
  const m = /^([a-z]+)\.(0|[1-9][0-9]{0,15})\.log$/.exec(name);
  if (!m || m[1] !== stream) return null;
  const start = Number(m[2]);
  return Number.isSafeInteger(start) ? start : null;
}
