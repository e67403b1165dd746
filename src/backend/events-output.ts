// An execution's full output on disk, one file per stream (<dir>/stdout, <dir>/stderr):
// every byte the process wrote, also past the event output budget. Appended as the
// output arrives (the page cache survives a daemon kill -9), fsynced when the
// execution ends, and read back by byte offset (GET …/output, `reset` snapshots).

import fs from "node:fs";
import path from "node:path";
import type { OutputStream } from "../protocol/types.js";

export const OUTPUT_STREAMS: readonly OutputStream[] = ["stdout", "stderr"];

export class OutputFiles {
  private readonly fds: Record<OutputStream, number | null>;

  private constructor(fds: Record<OutputStream, number>) {
    this.fds = fds;
  }

  /** Creates the directory (0700) and both files (0600, empty). */
  static create(dir: string): OutputFiles {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const open = (stream: OutputStream) =>
      fs.openSync(path.join(dir, stream), fs.constants.O_CREAT | fs.constants.O_WRONLY | fs.constants.O_APPEND, 0o600);
    const stdout = open("stdout");
    try {
      return new OutputFiles({ stdout, stderr: open("stderr") });
    } catch (err) {
      fs.closeSync(stdout);
      throw err;
    }
  }

  append(stream: OutputStream, chunk: Buffer): void {
    const fd = this.fds[stream];
    if (fd === null) return;
    let written = 0;
    while (written < chunk.length) written += fs.writeSync(fd, chunk, written);
  }

  /** Closes both files; with `sync`, their data reaches the disk first. */
  close(opts: { sync: boolean }): void {
    for (const stream of OUTPUT_STREAMS) {
      const fd = this.fds[stream];
      if (fd === null) continue;
      this.fds[stream] = null;
      try {
        if (opts.sync) fs.fdatasyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
  }
}

/** Bytes in a stream's file, or null when there is no file. */
export function outputSize(dir: string, stream: OutputStream): number | null {
  try {
    return fs.statSync(path.join(dir, stream)).size;
  } catch {
    return null;
  }
}

/** Reads [offset, offset + limit) of a stream's file, clamped to its size; null when there is no file. */
export function readOutputRange(dir: string, stream: OutputStream, offset: number, limit: number): Buffer | null {
  let fd: number;
  try {
    fd = fs.openSync(path.join(dir, stream), "r");
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
