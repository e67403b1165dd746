// The detach sequence of a terminal session (src/common/detach-keys.ts): parsed as
// docker writes it, and found in what is typed without holding back or reordering
// anything else.

import { describe, expect, it } from "vitest";
import { DetachScanner, describeDetachKeys, parseDetachKeys } from "../../src/common/detach-keys.js";

const bytes = (spec: string) => {
  const parsed = parseDetachKeys(spec);
  if ("problem" in parsed) throw new Error(parsed.problem);
  return parsed.bytes;
};

describe("parseDetachKeys", () => {
  it.each([
    ["ctrl-p,ctrl-q", [0x10, 0x11]],
    ["ctrl-x,x", [0x18, 0x78]],
    ["CTRL-A", [0x01]],
    ["ctrl-@,ctrl-[,ctrl-\\,ctrl-],ctrl-^,ctrl-_", [0x00, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f]],
    ["a,b", [0x61, 0x62]],
  ])("%s", (spec, want) => {
    expect([...bytes(spec)]).toEqual(want);
  });

  it.each(["", "ctrl-", "ctrl-1", "ctrl-pp", "ab", "é", "ctrl-p,,ctrl-q"])("refuses %j", (spec) => {
    expect(parseDetachKeys(spec)).toHaveProperty("problem");
  });

  it("says a sequence as it is typed", () => {
    expect(describeDetachKeys(bytes("ctrl-p,ctrl-q"))).toBe("Ctrl-P Ctrl-Q");
    expect(describeDetachKeys(bytes("ctrl-x,x"))).toBe("Ctrl-X x");
  });
});

describe("DetachScanner", () => {
  const seq = bytes("ctrl-p,ctrl-q");
  const scan = (...chunks: string[]) => {
    const s = new DetachScanner(seq);
    return chunks.map((c) => {
      const r = s.scan(Buffer.from(c, "latin1"));
      return [r.forward.toString("latin1"), r.detach] as const;
    });
  };

  it("passes everything else through unchanged", () => {
    expect(scan("ls -l\r", "\x03")).toEqual([
      ["ls -l\r", false],
      ["\x03", false],
    ]);
  });

  it("detaches on the sequence, forwarding what came before it", () => {
    expect(scan("abc\x10\x11rest")).toEqual([["abc", true]]);
  });

  it("finds the sequence split across chunks, holding the first key until the next tells", () => {
    expect(scan("a\x10", "\x11")).toEqual([
      ["a", false],
      ["", true],
    ]);
  });

  it("gives back a held key that did not begin the sequence, in order", () => {
    expect(scan("\x10", "x")).toEqual([
      ["", false],
      ["\x10x", false],
    ]);
    expect(scan("\x10\x10\x11")).toEqual([["\x10", true]]);
  });
});
