// SparseWriter: the bytes read back are exactly those written, however the chunks cut
// them (across block boundaries, zeros at the edges, a trailing hole), and blocks of
// zeros take no room.

import { randomBytes, randomInt } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SparseWriter } from "../../src/files/sparse.js";
import { makeHome, removeHome } from "../support/cli.js";

function writeInPieces(file: string, data: Buffer, cut: () => number): void {
  const fd = fs.openSync(file, "wx");
  try {
    const out = new SparseWriter(fd);
    for (let at = 0; at < data.length; ) {
      const n = Math.min(cut(), data.length - at);
      out.write(data.subarray(at, at + n));
      at += n;
      // The length follows what was handed over, trailing holes included (a partial file watched grows).
      expect(fs.fstatSync(fd).size).toBe(at);
    }
    out.finish();
    expect(out.length).toBe(data.length);
  } finally {
    fs.closeSync(fd);
  }
}

describe("SparseWriter", () => {
  it("writes back the same bytes however they are cut, and leaves blocks of zeros as holes", (t) => {
    const dir = makeHome("sbx-sparse-");
    t.onTestFinished(() => removeHome(dir));
    // Data, zeros of odd lengths, data ending mid-block, a trailing run of zeros.
    const data = Buffer.concat([
      randomBytes(5000),
      Buffer.alloc(3 * 1024 * 1024 + 123),
      randomBytes(1),
      Buffer.alloc(4095),
      randomBytes(8193),
      Buffer.alloc(2 * 1024 * 1024 + 7),
    ]);
    for (const [i, cut] of [
      () => 1024 * 1024,
      () => 4096,
      () => randomInt(1, 70_000),
      () => 1 + randomInt(0, 13),
    ].entries()) {
      const file = path.join(dir, `f${i}`);
      writeInPieces(file, i === 3 ? data.subarray(0, 200_000) : data, cut);
      const expected = i === 3 ? data.subarray(0, 200_000) : data;
      expect(fs.readFileSync(file).equals(expected)).toBe(true);
      if (i !== 3) expect(fs.statSync(file).blocks * 512).toBeLessThan(64 * 1024);
    }
  });

  it("a file of zeros only is one hole of its length", (t) => {
    const dir = makeHome("sbx-sparse-");
    t.onTestFinished(() => removeHome(dir));
    const file = path.join(dir, "zeros");
    writeInPieces(file, Buffer.alloc(10 * 1024 * 1024), () => 1024 * 1024);
    expect(fs.statSync(file).size).toBe(10 * 1024 * 1024);
    expect(fs.statSync(file).blocks).toBe(0);
  });
});
