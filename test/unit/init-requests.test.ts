// The sandbox init's requests as it checks them (src/sandbox-init/init.ts; docs/drivers.md,
// "Entering"): a command on a terminal carries its size and one connection (its stdout
// token, both ways); a resize names a command and a size; a command asked for held is
// started by a proceed of its id and let go by a discard; anything else is dropped.

import { describe, expect, it } from "vitest";
import { parseInitRequest } from "../../src/sandbox-init/init.js";

const T1 = "0123456789abcdef0123456789abcdef";
const T2 = "fedcba9876543210fedcba9876543210";
const base = { op: "spawn", id: "r1", argv: ["sh"], env: { PATH: "/usr/bin" }, cwd: "/workspace" };

describe("the init's requests", () => {
  it("takes a spawn on a terminal: its size, the stdout token, stdin and stderr null", () => {
    const line = JSON.stringify({ ...base, stdin: null, stdout: T1, stderr: null, tty: { cols: 120, rows: 40 } });
    expect(parseInitRequest(line)).toEqual({
      ...base,
      stdin: null,
      stdout: T1,
      stderr: null,
      tty: { cols: 120, rows: 40 },
    });
  });

  it("refuses a terminal with a stdin or stderr token of its own, or a size out of range", () => {
    for (const doc of [
      { ...base, stdin: T2, stdout: T1, stderr: null, tty: { cols: 80, rows: 24 } },
      { ...base, stdin: null, stdout: T1, stderr: T2, tty: { cols: 80, rows: 24 } },
      { ...base, stdin: null, stdout: T1, stderr: null, tty: { cols: 0, rows: 24 } },
      { ...base, stdin: null, stdout: T1, stderr: null, tty: { cols: 80, rows: 70000 } },
      { ...base, stdin: null, stdout: T1, stderr: null, tty: { cols: 80 } },
      { ...base, stdin: null, stdout: T1, stderr: null, tty: "80x24" },
    ]) {
      expect(parseInitRequest(JSON.stringify(doc)), JSON.stringify(doc)).toBeNull();
    }
  });

  it("keeps a spawn without a terminal as it was: three streams, stderr a token", () => {
    const line = JSON.stringify({ ...base, stdin: null, stdout: T1, stderr: T2 });
    expect(parseInitRequest(line)).toEqual({ ...base, stdin: null, stdout: T1, stderr: T2 });
    expect(parseInitRequest(JSON.stringify({ ...base, stdin: null, stdout: T1, stderr: null }))).toBeNull();
  });

  it("takes a spawn held (not on a terminal), and its proceed and discard by id", () => {
    const line = JSON.stringify({ ...base, stdin: null, stdout: T1, stderr: T2, held: true });
    expect(parseInitRequest(line)).toEqual({ ...base, stdin: null, stdout: T1, stderr: T2, held: true });
    expect(parseInitRequest(JSON.stringify({ op: "proceed", id: "r1" }))).toEqual({ op: "proceed", id: "r1" });
    expect(parseInitRequest(JSON.stringify({ op: "discard", id: "r1" }))).toEqual({ op: "discard", id: "r1" });
    for (const doc of [
      { ...base, stdin: null, stdout: T1, stderr: T2, held: false },
      { ...base, stdin: null, stdout: T1, stderr: T2, held: "yes" },
      { ...base, stdin: null, stdout: T1, stderr: null, tty: { cols: 80, rows: 24 }, held: true },
      { op: "proceed" },
      { op: "discard", id: "bad id!" },
    ]) {
      expect(parseInitRequest(JSON.stringify(doc)), JSON.stringify(doc)).toBeNull();
    }
  });

  it("takes a resize of a command by id, and nothing malformed", () => {
    expect(parseInitRequest(JSON.stringify({ op: "resize", id: "r1", cols: 100, rows: 30 }))).toEqual({
      op: "resize",
      id: "r1",
      cols: 100,
      rows: 30,
    });
    for (const doc of [
      { op: "resize", id: "r1", cols: 100 },
      { op: "resize", id: "r1", cols: 1.5, rows: 30 },
      { op: "resize", id: "bad id!", cols: 100, rows: 30 },
      { op: "resize", cols: 100, rows: 30 },
    ]) {
      expect(parseInitRequest(JSON.stringify(doc)), JSON.stringify(doc)).toBeNull();
    }
  });
});
