// Tables on a terminal fit its width: the column that may give way is shortened with
// "…" (ids and times never are); a pipe gets every cell whole.

import { describe, expect, it } from "vitest";
import { createBufferIO, terminalColumns } from "../../src/cli/io/io.js";
import { printTable } from "../../src/cli/render/table.js";

const HEAD = ["RECEIPT", "CLASSIFICATION", "COMMAND", "CREATED"];
const ID = "rcp_0mx39n9i209kp2abtfims";
const COMMAND = 'sh -c "echo a long command line that goes on"';
const ROWS = [[ID, "succeeded", COMMAND, "5m ago"]];

async function table(
  opts: Parameters<typeof createBufferIO>[0],
  shrink?: string,
  rows: string[][] = ROWS,
): Promise<string[]> {
  const io = createBufferIO(opts);
  await printTable(io, HEAD, rows, shrink === undefined ? {} : { shrink });
  return io.stdoutText().trimEnd().split("\n");
}

describe("printTable on a terminal", () => {
  it("shortens the named column to fit the terminal, keeping ids and times whole", async () => {
    const lines = await table({ tty: true, columns: 64 }, "COMMAND");
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(64);
    expect(lines[1]).toContain(ID);
    expect(lines[1]).toMatch(/…\s+5m ago$/);
    expect(lines[1]).toContain('sh -c "echo');
  });

  it("keeps every cell whole where the terminal is wide enough, and without a column to shorten", async () => {
    expect((await table({ tty: true, columns: 200 }, "COMMAND"))[1]).toContain(COMMAND);
    expect((await table({ tty: true, columns: 60 }))[1]).toContain(COMMAND);
  });

  it("never shortens a column below ten characters (the line may then wrap)", async () => {
    const lines = await table({ tty: true, columns: 20 }, "COMMAND");
    expect(lines[1]).toContain('sh -c "ec…');
  });

  it("leaves a pipe's cells whole whatever the width", async () => {
    expect((await table({ tty: false }, "COMMAND"))[1]).toBe(`${ID}\tsucceeded\t${COMMAND}\t5m ago`);
  });

  it("measures what a terminal draws: wide characters take two columns", async () => {
    const wide = [[ID, "succeeded", `echo ${"名前".repeat(20)}`, "5m ago"]];
    const lines = await table({ tty: true, columns: 64 }, "COMMAND", wide);
    const columns = (line: string) => [...line].reduce((n, ch) => n + (/[\u3000-\u9fff]/.test(ch) ? 2 : 1), 0);
    for (const line of lines) expect(columns(line)).toBeLessThanOrEqual(64);
  });

  it("keeps each row on one line: a newline in a cell becomes a space", async () => {
    const lines = await table({ tty: true, columns: 200 }, "COMMAND", [
      [ID, "failed", "sh -c 'echo a\necho b'", "1s ago"],
    ]);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain("sh -c 'echo a echo b'");
  });

  it("shortens ids to their short form before cutting the column that may give way", async () => {
    const id = "rcp_7k2m9qfdq7m3x9ta";
    const rows = [[id, "succeeded", "make test", "5m ago"]];
    const whole = await table({ tty: true, columns: 80 }, "COMMAND", rows);
    expect(whole[1]).toContain(id);
    // 12 columns narrower than it needs: the id's short form (8 fewer) and then 4 of COMMAND.
    const needs = whole[1]!.length;
    const narrow = await table({ tty: true, columns: needs - 8 }, "COMMAND", rows);
    expect(narrow[1]).toContain("rcp_7k2m9qfd ");
    expect(narrow[1]).not.toContain(id);
    expect(narrow[1]).toContain("make test");
    const narrower = await table({ tty: true, columns: needs - 12 }, "COMMAND", [
      [id, "succeeded", "make test all", "5m ago"],
    ]);
    expect(narrower[1]).toContain("rcp_7k2m9qfd ");
    expect(narrower[1]).toContain("…");
    // A pipe gets ids whole.
    expect((await table({ tty: false }, "COMMAND", rows))[1]).toContain(id);
  });
});

describe("the terminal's width", () => {
  it("is COLUMNS when it is set to a width, as most CLIs read it, else the terminal's", () => {
    expect(terminalColumns({ COLUMNS: "80" }, 200)).toBe(80);
    expect(terminalColumns({ COLUMNS: " 100 " }, 200)).toBe(100);
    for (const bad of ["", "0", "-5", "wide", "80x"]) expect(terminalColumns({ COLUMNS: bad }, 200)).toBe(200);
    expect(terminalColumns({}, 120)).toBe(120);
    expect(terminalColumns({}, undefined)).toBeNull();
    expect(terminalColumns({}, 0)).toBeNull();
  });
});
