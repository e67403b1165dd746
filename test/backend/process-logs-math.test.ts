import { describe, expect, it } from "vitest";
import {
  EMPTY_LAYOUT,
  layoutFromFiles,
  locateOffset,
  oldestOffset,
  parseSegmentFileName,
  planAppend,
  planRead,
  planRetention,
  type StreamLayout,
  segmentFileName,
} from "../../src/backend/processes/logs-math.js";

/** Three segments of 10 bytes: offsets 20..49 kept, 0..19 rotated away. */
const ROTATED: StreamLayout = {
  segments: [
    { start: 20, length: 10 },
    { start: 30, length: 10 },
    { start: 40, length: 10 },
  ],
  end: 50,
};
const EMPTY: StreamLayout = { segments: [], end: 0 };
/** Nothing kept, 7 bytes produced (files lost). */
const LOST: StreamLayout = { segments: [], end: 7 };

describe("oldestOffset", () => {
  it.each([
    ["rotated", ROTATED, 20],
    ["empty", EMPTY, 0],
    ["files lost", LOST, 7],
  ] as const)("%s → %i", (_name, layout, expected) => {
    expect(oldestOffset(layout)).toBe(expected);
  });
});

describe("locateOffset", () => {
  it.each([
    [0, null],
    [19, null],
    [20, { index: 0, position: 0 }],
    [29, { index: 0, position: 9 }],
    [30, { index: 1, position: 0 }],
    [45, { index: 2, position: 5 }],
    [49, { index: 2, position: 9 }],
    [50, null],
    [99, null],
  ] as const)("offset %i → %j", (offset, expected) => {
    expect(locateOffset(ROTATED, offset)).toEqual(expected);
  });
});

describe("planRead", () => {
  it.each([
    {
      what: "inside one segment",
      offset: 22,
      limit: 5,
      expected: { offset: 22, rotated: false, nextOffset: 27, pieces: [{ segmentStart: 20, position: 2, length: 5 }] },
    },
    {
      what: "across segments",
      offset: 25,
      limit: 20,
      expected: {
        offset: 25,
        rotated: false,
        nextOffset: 45,
        pieces: [
          { segmentStart: 20, position: 5, length: 5 },
          { segmentStart: 30, position: 0, length: 10 },
          { segmentStart: 40, position: 0, length: 5 },
        ],
      },
    },
    {
      what: "up to the end, limit larger than what is left",
      offset: 44,
      limit: 1000,
      expected: { offset: 44, rotated: false, nextOffset: 50, pieces: [{ segmentStart: 40, position: 4, length: 6 }] },
    },
    {
      what: "below the oldest kept: moved up to it, rotated",
      offset: 3,
      limit: 4,
      expected: { offset: 20, rotated: true, nextOffset: 24, pieces: [{ segmentStart: 20, position: 0, length: 4 }] },
    },
    {
      what: "at the end: nothing yet",
      offset: 50,
      limit: 10,
      expected: { offset: 50, rotated: false, nextOffset: 50, pieces: [] },
    },
    {
      what: "segment boundary exactly",
      offset: 30,
      limit: 10,
      expected: { offset: 30, rotated: false, nextOffset: 40, pieces: [{ segmentStart: 30, position: 0, length: 10 }] },
    },
  ])("$what", ({ offset, limit, expected }) => {
    expect(planRead(ROTATED, offset, limit)).toEqual(expected);
  });

  it.each([
    ["empty stream at 0", EMPTY, 0, { offset: 0, rotated: false, nextOffset: 0, pieces: [] }],
    ["files lost, read from 0", LOST, 0, { offset: 7, rotated: true, nextOffset: 7, pieces: [] }],
    ["files lost, read at the end", LOST, 7, { offset: 7, rotated: false, nextOffset: 7, pieces: [] }],
  ] as const)("%s", (_name, layout, offset, expected) => {
    expect(planRead(layout, offset, 100)).toEqual(expected);
  });

  it("refuses an offset past the end, saying both", () => {
    expect(() => planRead(ROTATED, 51, 1)).toThrow(new RangeError("offset 51 is beyond the end 50"));
  });

  it("reads nothing of an empty segment (a file opened, nothing written to it yet)", () => {
    const layout = {
      segments: [
        { start: 0, length: 10 },
        { start: 10, length: 0 },
      ],
      end: 10,
    };
    expect(planRead(layout, 4, 100)).toEqual({
      offset: 4,
      rotated: false,
      pieces: [{ segmentStart: 0, position: 4, length: 6 }],
      nextOffset: 10,
    });
  });

  it("reads nothing at all, and nothing from an empty layout", () => {
    expect(planRead(ROTATED, 20, 0)).toMatchObject({ offset: 20, pieces: [], nextOffset: 20 });
    expect(EMPTY_LAYOUT).toEqual({ segments: [], end: 0 });
    expect(planRead(EMPTY_LAYOUT, 0, 10)).toEqual({ offset: 0, rotated: false, pieces: [], nextOffset: 0 });
  });
});

describe("planAppend", () => {
  it.each([
    {
      what: "the first bytes open segment 0",
      layout: EMPTY,
      chunk: 4,
      pieces: [{ segmentStart: 0, from: 0, length: 4, opens: true }],
      after: { segments: [{ start: 0, length: 4 }], end: 4 },
    },
    {
      what: "fills the last segment, then opens the next",
      layout: { segments: [{ start: 0, length: 7 }], end: 7 },
      chunk: 5,
      pieces: [
        { segmentStart: 0, from: 0, length: 3, opens: false },
        { segmentStart: 10, from: 3, length: 2, opens: true },
      ],
      after: {
        segments: [
          { start: 0, length: 10 },
          { start: 10, length: 2 },
        ],
        end: 12,
      },
    },
    {
      what: "a chunk larger than several segments",
      layout: { segments: [{ start: 0, length: 10 }], end: 10 },
      chunk: 25,
      pieces: [
        { segmentStart: 10, from: 0, length: 10, opens: true },
        { segmentStart: 20, from: 10, length: 10, opens: true },
        { segmentStart: 30, from: 20, length: 5, opens: true },
      ],
      after: {
        segments: [
          { start: 0, length: 10 },
          { start: 10, length: 10 },
          { start: 20, length: 10 },
          { start: 30, length: 5 },
        ],
        end: 35,
      },
    },
    {
      what: "after lost files a new segment starts at the end",
      layout: LOST,
      chunk: 3,
      pieces: [{ segmentStart: 7, from: 0, length: 3, opens: true }],
      after: { segments: [{ start: 7, length: 3 }], end: 10 },
    },
    { what: "nothing to append", layout: EMPTY, chunk: 0, pieces: [], after: EMPTY },
  ])("$what", ({ layout, chunk, pieces, after }) => {
    const planned = planAppend(layout, chunk, 10);
    expect(planned.pieces).toEqual(pieces);
    expect(planned.layout).toEqual(after);
  });
});

describe("planRetention", () => {
  const four: StreamLayout = {
    segments: [
      { start: 0, length: 10 },
      { start: 10, length: 10 },
      { start: 20, length: 10 },
      { start: 30, length: 1 },
    ],
    end: 31,
  };
  it.each([
    { keep: 31, dropped: [], oldest: 0 },
    { keep: 30, dropped: [0], oldest: 10 },
    { keep: 21, dropped: [0], oldest: 10 },
    { keep: 20, dropped: [0, 10], oldest: 20 },
    // The segment being written is never dropped, however small the budget.
    { keep: 0, dropped: [0, 10, 20], oldest: 30 },
  ])("keep $keep bytes → drops $dropped", ({ keep, dropped, oldest }) => {
    const { drop, layout } = planRetention(four, keep);
    expect(drop.map((s) => s.start)).toEqual(dropped);
    expect(oldestOffset(layout)).toBe(oldest);
    expect(layout.end).toBe(31);
  });
});

describe("layoutFromFiles", () => {
  it.each([
    { what: "no files", files: [], knownEnd: 0, layout: EMPTY, stray: [] },
    {
      what: "unsorted contiguous files",
      files: [
        { start: 10, length: 4 },
        { start: 0, length: 10 },
      ],
      knownEnd: 0,
      layout: {
        segments: [
          { start: 0, length: 10 },
          { start: 10, length: 4 },
        ],
        end: 14,
      },
      stray: [],
    },
    {
      what: "files before a gap are stray",
      files: [
        { start: 0, length: 5 },
        { start: 20, length: 10 },
        { start: 30, length: 2 },
      ],
      knownEnd: 0,
      layout: {
        segments: [
          { start: 20, length: 10 },
          { start: 30, length: 2 },
        ],
        end: 32,
      },
      stray: [{ start: 0, length: 5 }],
    },
    {
      what: "the database knows of more bytes than the files hold: none is kept",
      files: [{ start: 0, length: 5 }],
      knownEnd: 9,
      layout: { segments: [], end: 9 },
      stray: [{ start: 0, length: 5 }],
    },
    {
      what: "files further on than the database (written after its last update)",
      files: [{ start: 0, length: 12 }],
      knownEnd: 4,
      layout: { segments: [{ start: 0, length: 12 }], end: 12 },
      stray: [],
    },
    { what: "no files but a known end", files: [], knownEnd: 6, layout: { segments: [], end: 6 }, stray: [] },
    {
      what: "files that end exactly where the database says",
      files: [{ start: 0, length: 7 }],
      knownEnd: 7,
      layout: { segments: [{ start: 0, length: 7 }], end: 7 },
      stray: [],
    },
  ])("$what", ({ files, knownEnd, layout, stray }) => {
    expect(layoutFromFiles(files, knownEnd)).toEqual({ layout, stray });
  });
});

describe("segment file names", () => {
  it.each([
    ["stdout", "stdout.0.log", 0],
    ["stdout", "stdout.8388608.log", 8388608],
    ["stderr", "stdout.0.log", null],
    ["stdout", "stdout.01.log", null],
    ["stdout", "stdout.-1.log", null],
    ["stdout", "stdout.1.log.tmp", null],
    ["stdout", "old.stdout.0.log", null],
    ["stdout", "1stdout.0.log", null],
  ] as const)("%s / %s → %s", (stream, name, expected) => {
    expect(parseSegmentFileName(stream, name)).toBe(expected);
  });

  it("round-trips", () => {
    expect(parseSegmentFileName("stderr", segmentFileName("stderr", 12345))).toBe(12345);
  });
});

describe("the arithmetic together", () => {
  it("keeps exactly the newest bytes and reads them back in order, whatever the chunking", () => {
    const segmentBytes = 7;
    const keepBytes = 20;
    // A model of the files: segment start → its bytes.
    const files = new Map<number, number[]>();
    let layout: StreamLayout = { segments: [], end: 0 };
    const produced: number[] = [];
    let next = 0;
    for (const size of [1, 3, 7, 0, 13, 2, 29, 6, 1, 1, 15]) {
      const chunk = Array.from({ length: size }, () => next++ % 251);
      produced.push(...chunk);
      const planned = planAppend(layout, chunk.length, segmentBytes);
      for (const p of planned.pieces) {
        if (p.opens) files.set(p.segmentStart, []);
        files.get(p.segmentStart)!.push(...chunk.slice(p.from, p.from + p.length));
      }
      const retained = planRetention(planned.layout, keepBytes);
      for (const s of retained.drop) files.delete(s.start);
      layout = retained.layout;

      expect(layout.end).toBe(produced.length);
      expect(layout.end - oldestOffset(layout)).toBeLessThanOrEqual(keepBytes);
      expect(layout.end - oldestOffset(layout)).toBeGreaterThan(
        Math.min(produced.length, keepBytes - segmentBytes) - 1,
      );
      // Reading from 0 in small steps, joined by nextOffset, gives exactly the kept tail.
      const read: number[] = [];
      let offset = 0;
      let first = true;
      for (;;) {
        const plan = planRead(layout, offset, 3);
        if (first) expect(plan.rotated).toBe(oldestOffset(layout) > 0);
        first = false;
        for (const p of plan.pieces) read.push(...files.get(p.segmentStart)!.slice(p.position, p.position + p.length));
        if (plan.nextOffset === offset) break;
        offset = plan.nextOffset;
      }
      expect(read).toEqual(produced.slice(oldestOffset(layout)));
    }
  });
});
