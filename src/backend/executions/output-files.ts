// An execution's full output on disk, one file per stream (<dir>/stdout, <dir>/stderr):
// every byte the process wrote, also past the event output budget, up to a cap per
// stream (DEFAULT_EXECUTION_OUTPUT_MAX_BYTES): past it the file stops growing (the
// process keeps running; the rest of the stream is not kept anywhere but the record's
// tail) and the stream counts as truncated. Appended as the output arrives (the page cache survives a daemon kill -9), fsynced when the
// execution ends, and read back by byte offset (GET …/output, `reset` snapshots).

import fs from "node:fs";
import path from "node:path";
import type { OutputStream } from "../../protocol/types.js";

export const OUTPUT_STREAMS: readonly OutputStream[] = ["stdout", "stderr"];
/** Bytes of each stream an execution's output file keeps at most. */
export const DEFAULT_EXECUTION_OUTPUT_MAX_BYTES = 256 * 1024 * 1024;

export class OutputFiles {
  private readonly fds: Record<OutputStream, number | null>;
  /** Bytes appended to each file (what was kept). */
  private readonly keptBytes: Record<OutputStream, number> = { stdout: 0, stderr: 0 };
  /** Bytes offered past the cap, per stream. */
  private readonly droppedBytes: Record<OutputStream, number> = { stdout: 0, stderr: 0 };

  private constructor(
    fds: Record<OutputStream, number>,
    /** Bytes kept per stream at most. */
    readonly maxBytes: number,
    /** The directory of the two files. */
    readonly dir: string,
  ) {
    this.fds = fds;
  }

  /** Creates the directory (0700) and both files (0600, empty); each keeps at most `maxBytes`. */
  static create(dir: string, maxBytes: number = DEFAULT_EXECUTION_OUTPUT_MAX_BYTES): OutputFiles {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const open = (stream: OutputStream) =>
      fs.openSync(outputFile(dir, stream), fs.constants.O_CREAT | fs.constants.O_WRONLY | fs.constants.O_APPEND, 0o600);
    const stdout = open("stdout");
    try {
      return new OutputFiles({ stdout, stderr: open("stderr") }, maxBytes, dir);
    } catch (err) {
      fs.closeSync(stdout);
      throw err;
    }
  }

  /** Bytes of the stream kept in its file. */
  kept(stream: OutputStream): number {
    return this.keptBytes[stream];
  }

  /** Some of the stream was not kept: it went past the cap. */
  truncated(stream: OutputStream): boolean {
    return this.droppedBytes[stream] > 0;
  }

  /** Bytes of the stream offered so far, kept or not: the offset of the next chunk. */
  offered(stream: OutputStream): number {
    return this.keptBytes[stream] + this.droppedBytes[stream];
  }

  /** Appends what fits under the cap; the rest is only counted. Returns how many bytes of the chunk fit. */
  append(stream: OutputStream, chunk: Buffer): number {
    const room = Math.max(0, this.maxBytes - this.keptBytes[stream]);
    const keep = Math.min(room, chunk.length);
    this.droppedBytes[stream] += chunk.length - keep;
    const fd = this.fds[stream];
    if (fd === null || keep === 0) return keep;
    let written = 0;
    try {
      while (written < keep) written += fs.writeSync(fd, chunk, written, keep - written);
    } finally {
      this.keptBytes[stream] += written;
    }
    return keep;
  }

  /** Closes both files; with `sync`, their data reaches the disk first (a file with none has nothing to sync). */
  close(opts: { sync: boolean }): void {
    for (const stream of OUTPUT_STREAMS) {
      const fd = this.fds[stream];
      if (fd === null) continue;
      this.fds[stream] = null;
      try {
        if (opts.sync && this.keptBytes[stream] > 0) fs.fdatasyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
  }
}

/** Bytes in a stream's file, or null when there is no file. */
/** The file that holds a stream of an execution's full output. */
export function outputFile(dir: string, stream: OutputStream): string {
  return path.join(dir, stream);
}

export function outputSize(dir: string, stream: OutputStream): number | null {
  try {
    return fs.statSync(outputFile(dir, stream)).size;
  } catch {
    return null;
  }
}

/** Reads [offset, offset + limit) of a stream's file, clamped to its size; null when there is no file. */
export function readOutputRange(dir: string, stream: OutputStream, offset: number, limit: number): Buffer | null {
  let fd: number;
  try {
    fd = fs.openSync(outputFile(dir, stream), "r");
  } catch {
    return null;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const length = Math.max(0, Math.min(limit, size - offset));
    const buf = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const n = fs.readSync(fd, buf, read, length - read, offset + read);
      if (n === 0) break;
      read += n;
    }
    return buf.subarray(0, read);
  } finally {
    fs.closeSync(fd);
  }
}
