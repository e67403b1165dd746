// What a job keeps of its output, without I/O: the head as it came, then a tail
// trimmed from its front; the omitted middle counted exactly, never stored twice.

import { describe, expect, it } from "vitest";
import { JobOutputWriter, OutputKeeper, outputBudget } from "../../src/backend/jobs/output.js";

const bytes = (n: number, c = "x") => Buffer.from(c.repeat(n));

describe("outputBudget", () => {
  it("splits a budget into head and tail, with chunks that trim the tail finely", () => {
    expect(outputBudget(8 * 1024 * 1024)).toEqual({ headBytes: 4194304, tailBytes: 4194304, chunkBytes: 65536 });
    expect(outputBudget(1001)).toEqual({ headBytes: 500, tailBytes: 501, chunkBytes: 125 });
    expect(outputBudget(2)).toEqual({ headBytes: 1, tailBytes: 1, chunkBytes: 1 });
    expect(() => outputBudget(1)).toThrow(RangeError);
  });
});

describe("OutputKeeper", () => {
  it("keeps everything while within the budget, in chunks with offsets", () => {
    const k = new OutputKeeper({ headBytes: 10, tailBytes: 10, chunkBytes: 4 });
    const d = k.take("stdout", bytes(12));
    expect(d.remove).toEqual([]);
    expect(d.insert.map((c) => [c.seq, c.offset, c.data.length, c.head])).toEqual([
      [1, 0, 4, true],
      [2, 4, 4, true],
      [3, 8, 2, true],
      [4, 10, 2, false],
    ]);
    expect([k.totalBytes, k.omittedBytes, k.lastSeq]).toEqual([12, 0, 4]);
  });

  it("past the budget drops the oldest tail chunks: deleted when stored, never inserted when not", () => {
    const k = new OutputKeeper({ headBytes: 4, tailBytes: 6, chunkBytes: 3 });
    const first = k.take("stdout", bytes(10));
    expect(first.insert.map((c) => [c.seq, c.offset, c.head])).toEqual([
      [1, 0, true],
      [2, 3, true],
      [3, 4, false],
      [4, 7, false],
    ]);
    const second = k.take("stderr", bytes(7, "e"));
    // seq 5 (3 bytes), 6 (3), 7 (1) arrive; 3 and 4 (stored) go, then 5 (never stored).
    expect(second.remove).toEqual([3, 4]);
    expect(second.insert.map((c) => [c.seq, c.offset, c.stream, c.data.length])).toEqual([
      [6, 13, "stderr", 3],
      [7, 16, "stderr", 1],
    ]);
    expect([k.totalBytes, k.omittedBytes]).toEqual([17, 9]);
  });

  it("what is kept plus what is omitted is always what was produced", () => {
    const k = new OutputKeeper(outputBudget(300));
    const kept = new Map<number, number>();
    let produced = 0;
    for (let i = 1; i <= 60; i++) {
      const d = k.take(i % 3 === 0 ? "stderr" : "stdout", bytes(i * 7));
      produced += i * 7;
      for (const seq of d.remove) kept.delete(seq);
      for (const c of d.insert) kept.set(c.seq, c.data.length);
      const sum = [...kept.values()].reduce((a, b) => a + b, 0);
      expect(sum + k.omittedBytes).toBe(produced);
      expect(sum).toBeLessThanOrEqual(300);
    }
  });
});

describe("JobOutputWriter", () => {
  it("coalesces consecutive output of one stream; what cannot be kept is counted, never copied or stored", () => {
    let armed = 0;
    const w = new JobOutputWriter(
      "job_1",
      new OutputKeeper({ headBytes: 2, tailBytes: 4, chunkBytes: 2 }),
      () => armed++,
    );
    w.push("stdout", Buffer.from("ab"));
    w.push("stdout", Buffer.from("cd"));
    w.push("stderr", Buffer.from("EF"));
    w.push("stdout", Buffer.from("gh"));
    w.push("stdout", Buffer.alloc(0));
    expect(armed).toBe(4);
    const d = w.drain();
    expect(d.remove).toEqual([]);
    expect(d.insert.map((c) => [c.seq, c.stream, c.data.toString(), c.head])).toEqual([
      [1, "stdout", "ab", true],
      [2, "stderr", "EF", false],
      [3, "stdout", "gh", false],
    ]);
    expect(w.dirty).toBe(false);
    expect([w.keeper.omittedBytes, w.keeper.totalBytes]).toEqual([2, 8]);
    expect(d.insert.map((c) => c.offset)).toEqual([0, 4, 6]);
  });

  it("a chunk dropped within one drain is never stored; one stored before is deleted", () => {
    const w = new JobOutputWriter("job_2", new OutputKeeper({ headBytes: 1, tailBytes: 4, chunkBytes: 2 }), () => {});
    w.push("stdout", Buffer.from("hij"));
    expect(w.drain().insert.map((c) => [c.seq, c.data.toString()])).toEqual([
      [1, "h"],
      [2, "ij"],
    ]);
    w.push("stdout", Buffer.from("kl"));
    w.push("stderr", Buffer.from("m"));
    // Two more bytes than the tail holds: "ij" (stored) goes.
    const d = w.drain();
    expect(d.remove).toEqual([2]);
    expect(d.insert.map((c) => [c.seq, c.stream, c.data.toString()])).toEqual([
      [3, "stdout", "kl"],
      [4, "stderr", "m"],
    ]);
  });
});
