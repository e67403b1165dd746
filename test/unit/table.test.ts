// Tables on a terminal fit its width: the column that may give way is shortened with
// "…" (ids and times never are); a pipe gets every cell whole.

import { describe, expect, it } from "vitest";
import { createBufferIO } from "../../src/cli/io/io.js";
import { printTable } from "../../src/cli/render/table.js";

const HEAD = ["RECEIPT", "CLASSIFICATION", "COMMAND", "CREATED"];
const ID = "rcp_0mx39n9i209kp2abtfims";
const COMMAND = 'sh -c "echo a long command line that goes on"';
const ROWS = [[ID, "succeeded", COMMAND, "5m ago"]];

function table(opts: Parameters<typeof createBufferIO>[0], shrink?: string): string[] {
  const io = createBufferIO(opts);
  printTable(io, HEAD, ROWS, shrink === undefined ? {} : { shrink });
  return io.stdoutText().trimEnd().split("\n");
}

describe("printTable on a terminal", () => {
  it("shortens the named column to fit the terminal, keeping ids and times whole", () => {
    const lines = table({ tty: true, columns: 64 }, "COMMAND");
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(64);
    expect(lines[1]).toContain(ID);
    expect(lines[1]).toMatch(/…\s+5m ago$/);
    expect(lines[1]).toContain('sh -c "echo');
  });

  it("keeps every cell whole where the terminal is wide enough, and without a column to shorten", () => {
    expect(table({ tty: true, columns: 200 }, "COMMAND")[1]).toContain(COMMAND);
    expect(table({ tty: true, columns: 60 })[1]).toContain(COMMAND);
  });

  it("never shortens a column below ten characters (the line may then wrap)", () => {
    const lines = table({ tty: true, columns: 20 }, "COMMAND");
    expect(lines[1]).toContain('sh -c "ec…');
  });

  it("leaves a pipe's cells whole whatever the width", () => {
    expect(table({ tty: false }, "COMMAND")[1]).toBe(`${ID}\tsucceeded\t${COMMAND}\t5m ago`);
  });
});
