// One stream (stdout or stderr) of a supervised process on disk: segment files
// `<stream>.<startOffset>.log` in the process's log directory, rotated at the
// segment size and trimmed to the bytes kept (arithmetic in logs-math.ts).
// Writes and reads are synchronous, so a read always sees a consistent layout and
// every byte counted in `end` is already in the page cache. Readers at the end may
// wait for more bytes (long-poll).

import fs from "node:fs";
import path from "node:path";
import type { ProcessStream } from "../../protocol/types.js";
import {
  layoutFromFiles,
  oldestOffset,
  parseSegmentFileName,
  planAppend,
  planRead,
  planRetention,
  type Segment,
  type StreamLayout,
  segmentFileName,
} from "./logs-math.js";

export const DEFAULT_LOG_SEGMENT_BYTES = 8 * 1024 * 1024;
export const DEFAULT_LOG_KEEP_BYTES = 64 * 1024 * 1024;

export interface LogLimits {
  /** A segment file is closed and a new one begun at this size. */
  segmentBytes: number;
  /** Oldest segments are deleted beyond this many bytes per stream (never the one being written). */
  keepBytes: number;
}

export interface LogRead {
  offset: number;
  rotated: boolean;
  data: Buffer;
  nextOffset: number;
  oldestOffset: number;
}

/** A range of one segment file, open (its descriptor the reader's to close). */
export interface OpenPiece {
  fd: number;
  position: number;
  length: number;
}

/** What `openRange` opened: the bytes [offset, nextOffset), as descriptors. */
export interface LogRange extends Omit<LogRead, "data"> {
  pieces: OpenPiece[];
}

export class ProcessLogStream {
  private layout: StreamLayout;
  /** The open segment being appended to. */
  private active: { start: number; fd: number } | null = null;
  private sealed = false;
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly dir: string,
    readonly stream: ProcessStream,
    private readonly limits: LogLimits,
    layout: StreamLayout,
  ) {
    this.layout = layout;
  }

  /**
   * Opens a stream from the files in `dir` (created 0700 if missing). `knownEnd` is
   * the end recorded in the database, so offsets never go back even if files went
   * missing. Files that cannot belong to the stream any more are deleted.
   */
  static open(dir: string, stream: ProcessStream, limits: LogLimits, knownEnd = 0): ProcessLogStream {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const files: Segment[] = [];
    for (const name of fs.readdirSync(dir)) {
      const start = parseSegmentFileName(stream, name);
      if (start === null) continue;
      files.push({ start, length: fs.statSync(path.join(dir, name)).size });
    }
    const { layout, stray } = layoutFromFiles(files, knownEnd);
    for (const s of stray) fs.rmSync(path.join(dir, segmentFileName(stream, s.start)), { force: true });
    return new ProcessLogStream(dir, stream, limits, layout);
  }

  /** Bytes the stream produced over the process's life (the next byte's offset). */
  get end(): number {
    return this.layout.end;
  }

  get oldestOffset(): number {
    return oldestOffset(this.layout);
  }

  /** True once no more bytes will come. */
  get isSealed(): boolean {
    return this.sealed;
  }

  /** Appends bytes, rotating and trimming as needed. A failed write drops the rest of the chunk (and throws). */
  append(chunk: Buffer): void {
    if (this.sealed) throw new Error(`the ${this.stream} log is sealed`);
    if (chunk.length === 0) return;
    try {
      const { pieces } = planAppend(this.layout, chunk.length, this.limits.segmentBytes);
      for (const piece of pieces) {
        const fd = this.fdFor(piece.segmentStart, piece.opens);
        try {
          writeFully(fd, chunk.subarray(piece.from, piece.from + piece.length));
        } catch (err) {
          // Cut a partial write back off, so the file holds exactly what the layout counts.
          const counted = this.layout.segments.find((s) => s.start === piece.segmentStart)?.length ?? 0;
          tryTruncate(fd, counted);
          throw err;
        }
        // Counted only once written: the layout never claims a byte that is not on disk.
        this.layout = planAppend(this.layout, piece.length, this.limits.segmentBytes).layout;
      }
    } finally {
      this.trim();
      this.wake();
    }
  }

  /** Reads up to `limit` bytes from `offset` (≤ end); an offset rotated away reads from the oldest kept. */
  read(offset: number, limit: number): LogRead {
    const plan = planRead(this.layout, offset, limit);
    const parts: Buffer[] = [];
    for (const piece of plan.pieces) {
      const part = readPiece(this.fileOf(piece.segmentStart), piece.position, piece.length);
      parts.push(part);
      // A file shorter than counted (removed under us): stop there rather than skip bytes.
      if (part.length < piece.length) break;
    }
    const data = Buffer.concat(parts);
    return {
      offset: plan.offset,
      rotated: plan.rotated,
      data,
      nextOffset: plan.offset + data.length,
      oldestOffset: oldestOffset(this.layout),
    };
  }

  /**
   * As `read`, but the bytes are left in their files: each piece's segment is opened
   * now, in the same turn as the layout is read, so a segment rotated away or trimmed
   * later is still read whole through its descriptor (segments are only ever appended
   * to or deleted). For raw reads, streamed to the socket without being held
   * (http/replies.ts sendOpenPieces); the caller closes every descriptor.
   */
  openRange(offset: number, limit: number): LogRange {
    const plan = planRead(this.layout, offset, limit);
    const pieces: OpenPiece[] = [];
    let nextOffset = plan.offset;
    for (const piece of plan.pieces) {
      let fd: number;
      try {
        fd = fs.openSync(this.fileOf(piece.segmentStart), "r");
      } catch (err) {
        // Removed under us: stop there rather than skip bytes.
        if ((err as NodeJS.ErrnoException).code === "ENOENT") break;
        for (const p of pieces) fs.closeSync(p.fd);
        throw err;
      }
      pieces.push({ fd, position: piece.position, length: piece.length });
      nextOffset += piece.length;
    }
    return { offset: plan.offset, rotated: plan.rotated, pieces, nextOffset, oldestOffset: oldestOffset(this.layout) };
  }

  /** The last `bytes` kept, not starting inside a UTF-8 character when cut. */
  tail(bytes: number): Buffer {
    const from = Math.max(this.oldestOffset, this.end - bytes);
    const data = this.read(from, bytes).data;
    if (from === 0) return data;
    let skip = 0;
    while (skip < 3 && skip < data.length && (data[skip]! & 0xc0) === 0x80) skip++;
    return data.subarray(skip);
  }

  /**
   * Waits until the stream holds bytes past `offset`, it is sealed, `ms` passed or
   * `signal` aborted, whichever comes first.
   */
  waitForBytes(offset: number, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.end > offset || this.sealed || ms <= 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => wake(), ms);
      const wake = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", wake);
        this.waiters.delete(wake);
        resolve();
      };
      this.waiters.add(wake);
      signal?.addEventListener("abort", wake, { once: true });
    });
  }

  /** No more bytes will come: closes the file and wakes every waiting reader. */
  seal(): void {
    if (this.sealed) return;
    this.sealed = true;
    this.closeActive();
    this.wake();
  }

  /** Closes the file without sealing (the daemon goes away; the stream may go on in a later run). */
  closeFile(): void {
    this.closeActive();
  }

  private wake(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private fileOf(start: number): string {
    return path.join(this.dir, segmentFileName(this.stream, start));
  }

  private fdFor(start: number, opens: boolean): number {
    if (this.active?.start === start) return this.active.fd;
    this.closeActive();
    // A new segment starts empty; the last one found on disk is continued.
    const fd = fs.openSync(this.fileOf(start), opens ? "w" : "a", 0o600);
    this.active = { start, fd };
    return fd;
  }

  private closeActive(): void {
    if (this.active === null) return;
    try {
      fs.closeSync(this.active.fd);
    } catch {
      // already closed
    }
    this.active = null;
  }

  private trim(): void {
    const { drop, layout } = planRetention(this.layout, this.limits.keepBytes);
    for (const s of drop) {
      if (this.active?.start === s.start) this.closeActive();
      fs.rmSync(this.fileOf(s.start), { force: true });
    }
    this.layout = layout;
  }
}

function writeFully(fd: number, data: Buffer): void {
  let written = 0;
  while (written < data.length) written += fs.writeSync(fd, data, written, data.length - written);
}

function tryTruncate(fd: number, length: number): void {
  try {
    fs.ftruncateSync(fd, length);
  } catch {
    // the disk is in trouble already; the next open finds the file's real size
  }
}

/** Up to `length` bytes of a file from `position`; fewer when the file is shorter or gone. */
function readPiece(file: string, position: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let fd: number;
  try {
    fd = fs.openSync(file, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return Buffer.alloc(0);
    throw err;
  }
  try {
    let got = 0;
    while (got < length) {
      const n = fs.readSync(fd, buf, got, length - got, position + got);
      if (n === 0) break;
      got += n;
    }
    return got === length ? buf : buf.subarray(0, got);
  } finally {
    fs.closeSync(fd);
  }
}
