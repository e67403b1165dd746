// Writing a file's bytes so that runs of zeros stay holes: a sparse file (a disk
// image, `truncate -s 3G`) copied out takes on the destination's disk what it took in
// the sandbox, not its whole apparent size. Whole blocks of zeros, aligned to the
// file's offsets, are skipped (seeked over) instead of written; the file's length is
// set at the end, so trailing holes count too. What is read back is the same bytes.

import fs from "node:fs";

/** The unit of holes: a page, the block size of every file system sbx writes on. */
const BLOCK = 4096;
const ZEROS = Buffer.alloc(1024 * 1024);

function allZero(chunk: Uint8Array, start: number, end: number): boolean {
  for (let at = start; at < end; at += ZEROS.length) {
    const n = Math.min(ZEROS.length, end - at);
    if (Buffer.compare(chunk.subarray(at, at + n), ZEROS.subarray(0, n)) !== 0) return false;
  }
  return true;
}

/**
 * Writes a new, empty file sequentially, leaving holes where zeros go: a piece of
 * zeros is not written at all (a hole reads back as zeros), the pieces being the
 * file's blocks, so a block with data in it is written whole.
 */
export class SparseWriter {
  private position = 0;

  constructor(private readonly fd: number) {}

  /** Bytes handed over so far (the file's length once finished). */
  get length(): number {
    return this.position;
  }

  write(chunk: Uint8Array): void {
    let lastWritten = -1; // where the last write ended, in chunk
    // Wholly zero (most of a sparse file, in 1 MiB pieces): one comparison, nothing written.
    if (!allZero(chunk, 0, chunk.length)) {
      let at = 0;
      let pending = -1; // start (in chunk) of a run of blocks to write
      while (at < chunk.length) {
        // To the next block boundary of the file, or the chunk's end.
        const end = Math.min(chunk.length, at + BLOCK - ((this.position + at) % BLOCK));
        const hole = allZero(chunk, at, end);
        if (hole && pending >= 0) {
          this.writeAt(chunk, pending, at);
          lastWritten = at;
          pending = -1;
        } else if (!hole && pending < 0) pending = at;
        at = end;
      }
      if (pending >= 0) {
        this.writeAt(chunk, pending, chunk.length);
        lastWritten = chunk.length;
      }
    }
    this.position += chunk.length;
    // A hole at the end is made part of the file at once: the file's length follows the
    // copy (a partial file watched grows as the bytes arrive, holes or not).
    if (lastWritten !== chunk.length && chunk.length > 0) fs.ftruncateSync(this.fd, this.position);
  }

  /** Sets the file's length (a trailing hole is part of it; it already is, said once more). */
  finish(): void {
    fs.ftruncateSync(this.fd, this.position);
  }

  private writeAt(chunk: Uint8Array, start: number, end: number): void {
    let offset = start;
    while (offset < end) offset += fs.writeSync(this.fd, chunk, offset, end - offset, this.position + offset);
  }
}
