// Help is complete: every command in the tree has a summary, a description and an
// example; `sbx help exit-codes` names every exit code and classification; a typo
// exits 125 with a suggestion.

import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { examplesOf } from "../../src/cli/command.js";
import { docsProgram } from "../../src/cli/docs/generate.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { CLASSIFICATIONS } from "../../src/receipts/classifications.js";

function walk(cmd: Command, path: string[] = []): Array<{ path: string; cmd: Command }> {
  return cmd.commands.flatMap((c) => {
    const p = [...path, c.name()];
    return [{ path: p.join(" "), cmd: c }, ...walk(c, p)];
  });
}

const program = docsProgram();
const commands = walk(program);

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = createBufferIO();
  const code = await main(argv, io, { SBX_HOME: "/nonexistent/sbx-help-test" });
  return { code, out: io.stdoutText(), err: io.stderrText() };
}

describe("every command documents itself", () => {
  it("walks a tree that includes the commands users expect", () => {
    const paths = commands.map((c) => c.path);
    for (const p of ["exec", "init", "receipts list", "sandbox create", "profile add", "config get", "daemon status"]) {
      expect(paths).toContain(p);
    }
  });

  it("the program itself has a description and examples", () => {
    expect(program.description()).not.toBe("");
    expect(examplesOf(program).length).toBeGreaterThan(0);
  });

  it.each(commands.map((c) => [c.path, c.cmd] as const))(
    "%s has a summary, a description and an example",
    (_p, cmd) => {
      expect(cmd.summary(), "summary").not.toBe("");
      expect(cmd.summary(), "a one-line summary").not.toContain("\n");
      expect(cmd.description(), "description").not.toBe("");
      expect(examplesOf(cmd).length, "examples").toBeGreaterThan(0);
      for (const e of examplesOf(cmd)) {
        // sbx itself, after a pipe or an assignment, or run by another program after its `--`.
        const runsSbx =
          e.command.startsWith("sbx ") ||
          /\|\s*sbx /.test(e.command) ||
          /^\S+=\S* sbx /.test(e.command) ||
          / -- sbx( |$)/.test(e.command);
        expect(runsSbx, e.command).toBe(true);
        expect(e.description).not.toBe("");
      }
    },
  );

  it("--help shows the examples", async () => {
    const { code, out } = await run(["receipts", "list", "--help"]);
    expect(code).toBe(0);
    expect(out).toContain("Examples:");
    expect(out).toContain("$ sbx receipts list");
  });
});

describe("sbx help exit-codes", () => {
  it("lists every exit code and every classification", async () => {
    const { code, out, err } = await run(["help", "exit-codes"]);
    expect(code).toBe(0);
    expect(err).toBe("");
    const codes = new Set(out.split("\n").map((l) => /^ {2}(\S+)\s/.exec(l)?.[1]));
    for (const c of ["0", "75", "124", "125", "130", "255", "128+S"]) expect(codes, c).toContain(c);
    for (const c of CLASSIFICATIONS) expect(out, c).toMatch(new RegExp(`\\b${c}\\b`));
  });

  it("fits 80 columns", async () => {
    const { out } = await run(["help", "exit-codes"]);
    for (const line of out.split("\n")) expect([...line].length, line).toBeLessThanOrEqual(80);
  });

  it("is reachable from `sbx help`", async () => {
    const { code, out } = await run(["help"]);
    expect(code).toBe(0);
    expect(out).toContain("sbx help exit-codes");
  });
});

describe("typos exit 125 with a suggestion", () => {
  it.each([
    [["recipts", "list"], "receipts"],
    [["receipts", "lsit"], "list"],
    [["receipts", "list", "--jsn"], "--json"],
    [["exec", "--sandboxx", "x", "--", "ls"], "--sandbox"],
    [["--profle", "x", "receipts", "list"], "--profile"],
  ])("sbx %j suggests %s", async (argv, suggestion) => {
    const { code, out, err } = await run(argv);
    expect(code).toBe(125);
    expect(out).toBe("");
    expect(err).toMatch(/^sbx: unknown (command|option)/);
    expect(err.toLowerCase()).toContain(`did you mean ${suggestion}?`);
  });
});

describe("help reads as prose at any width", () => {
  /** The description paragraph of a command's --help: the lines between "Usage:" and the first section. */
  function descriptionLines(help: string): string[] {
    const lines = help.split("\n");
    const end = lines.findIndex((l, i) => i > 0 && /^[A-Z][a-z]+( [A-Z][a-z]+)?:$/.test(l));
    return lines.slice(2, end === -1 ? undefined : end - 1);
  }

  it.each(commands.map((c) => [c.path] as const))("%s --help wraps only where an 80-column line is full", async (p) => {
    const r = await run([...p.split(" "), "--help"]);
    expect(r.code).toBe(0);
    const lines = descriptionLines(r.out);
    lines.forEach((line, i) => {
      const next = lines[i + 1];
      // A line followed by more of the same paragraph was cut by the width, not by the source.
      if (next !== undefined && next !== "" && !/^\s/.test(next)) {
        expect(
          `${line}|${next.split(" ")[0]}`.length,
          `${JSON.stringify(line)} then ${JSON.stringify(next)}`,
        ).toBeGreaterThan(80);
      }
    });
  });
});

describe("every --help fits 80 columns", () => {
  it.each(commands.map((c) => [c.path] as const))("%s --help", async (p) => {
    const r = await run([...p.split(" "), "--help"]);
    for (const line of r.out.split("\n")) expect([...line].length, line).toBeLessThanOrEqual(80);
  });
});

describe("examples fit 80 columns", () => {
  it.each(commands.map((c) => [c.path] as const))("%s --help: no example line is wider than its command", async (p) => {
    const r = await run([...p.split(" "), "--help"]);
    const examples = r.out.slice(r.out.indexOf("\nExamples:\n"));
    for (const line of examples.split("\n")) {
      // Only a command longer than the line may make it overflow; its description goes below.
      if (/^ {2}\$ /.test(line) && [...line].length > 80) expect(line, line).not.toMatch(/\S {3}\S/);
      if (/^ {6}\S/.test(line)) expect([...line].length, line).toBeLessThanOrEqual(80);
    }
  });
});

describe("sbx with nothing, sbx version, --quiet", () => {
  it("sbx alone prints its help on stdout and exits 0", async () => {
    const r = await run([]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: sbx \[options\] \[command\]/);
    expect(r.out).toContain("Commands:");
    expect(r.err).toBe("");
  });

  it("sbx version prints what --version prints; --json adds the protocol", async () => {
    const plain = await run(["version"]);
    const flag = await run(["--version"]);
    expect(plain).toMatchObject({ code: 0, err: "" });
    expect(plain.out).toBe(flag.out);
    const json = await run(["version", "--json"]);
    expect(JSON.parse(json.out)).toEqual({ version: plain.out.trim(), protocol: 1 });
  });

  it("--quiet leaves only the rows of a table, no header", async () => {
    const r = await run(["-q", "profile", "list"]);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain("PROFILE");
    expect(r.out).toContain("local");
  });
});
