// The I/O seam, in-process: tables, colour and relative times only on a terminal;
// --no-color and the `color` setting; --quiet and --verbose; spinners never drawn
// into a pipe or a test buffer.

import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { colorWanted, createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { formatTime } from "../../src/cli/render/table.js";
import { makeHome, removeHome } from "../support/cli.js";

const ANSI = /\x1b\[/;

let home: string;
beforeEach(() => {
  home = makeHome("sbx-output-");
  fs.writeFileSync(
    path.join(home, "config.json"),
    JSON.stringify({ version: 1, profiles: { prod: { api_url: "https://sbx.example.com" } }, settings: {} }),
  );
});
afterEach(() => removeHome(home));

async function sbx(argv: string[], opts: { tty: boolean; color: boolean }) {
  const io = createBufferIO(opts);
  const code = await main(argv, io, { SBX_HOME: home });
  return { code, out: io.stdoutText(), err: io.stderrText() };
}

describe("tables and colour on a terminal, tab-separated rows elsewhere", () => {
  it("a terminal gets aligned columns with colour, no tabs and no box", async () => {
    const r = await sbx(["profile", "list"], { tty: true, color: true });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(ANSI);
    expect(r.out).not.toContain("\t");
    expect(r.out).not.toMatch(/[┌│└─]/);
    const [header, ...rows] = r.out
      .replace(/\x1b\[[0-9;]*m/g, "")
      .trimEnd()
      .split("\n");
    expect(header).toMatch(/^ +PROFILE +API URL +KEY$/);
    const prod = rows.find((l) => l.includes("prod"))!;
    expect(prod.indexOf("https://")).toBe(header!.indexOf("API URL"));
  });

  it("a pipe gets a header and tab-separated rows, no ANSI", async () => {
    const r = await sbx(["profile", "list"], { tty: false, color: false });
    expect(r.out).not.toMatch(ANSI);
    expect(r.out.split("\n")[0]).toBe("\tPROFILE\tAPI URL\tKEY");
    expect(r.out).toContain("\tprod\thttps://sbx.example.com\t-\n");
  });

  it("--no-color on a terminal: still a table, no ANSI", async () => {
    for (const argv of [
      ["--no-color", "profile", "list"],
      ["profile", "list", "--no-color"],
    ]) {
      const r = await sbx(argv, { tty: true, color: true });
      expect(r.out).toContain("PROFILE");
      expect(r.out).not.toContain("\t");
      expect(r.out).not.toMatch(ANSI);
    }
  });

  it("the `color` setting `never` turns colour off on a terminal", async () => {
    expect((await sbx(["config", "set", "color", "never"], { tty: false, color: false })).code).toBe(0);
    const r = await sbx(["profile", "list"], { tty: true, color: true });
    expect(r.out).toContain("PROFILE");
    expect(r.out).not.toContain("\t");
    expect(r.out).not.toMatch(ANSI);
  });

  it("help and the exit-code topic carry no ANSI, even on a colour terminal", async () => {
    for (const argv of [["help"], ["help", "exit-codes"], ["exec", "--help"]]) {
      const r = await sbx(argv, { tty: true, color: true });
      expect(r.code).toBe(0);
      expect(r.out).not.toMatch(ANSI);
    }
  });
});

describe("colour is decided by the terminal and the environment", () => {
  it.each([
    [true, {}, true],
    [false, {}, false],
    [true, { NO_COLOR: "1" }, false],
    [true, { NO_COLOR: "" }, true],
    [false, { FORCE_COLOR: "1" }, true],
    [false, { FORCE_COLOR: "0" }, false],
    [true, { NO_COLOR: "1", FORCE_COLOR: "1" }, false],
    [true, { TERM: "dumb" }, false],
  ])("tty=%s env=%j: colour %s", (tty, env, want) => {
    expect(colorWanted(tty, env)).toBe(want);
  });
});

describe("times", () => {
  const at = "2025-01-01T00:00:00.000Z";
  const now = Date.parse(at);
  it("relative on a terminal, ISO-8601 in a pipe", () => {
    const tty = createBufferIO({ tty: true });
    const pipe = createBufferIO();
    expect(formatTime(tty, at, now + 5_000)).toBe("5s ago");
    expect(formatTime(tty, at, now + 3 * 60_000)).toBe("3m ago");
    expect(formatTime(tty, at, now + 2 * 3_600_000)).toBe("2h ago");
    expect(formatTime(tty, at, now + 3 * 86_400_000)).toBe("3d ago");
    expect(formatTime(pipe, at, now + 5_000)).toBe(at);
    expect(formatTime(pipe, null)).toBe("-");
  });
});

describe("--quiet, --verbose and progress", () => {
  it("--quiet silences progress and hints, not data", async () => {
    const use = await sbx(["--quiet", "profile", "use", "prod"], { tty: false, color: false });
    expect(use).toEqual({ code: 0, out: "", err: "" });
    const loud = await sbx(["profile", "use", "prod"], { tty: false, color: false });
    expect(loud.err).toBe("sbx: now using profile prod\n");
    const show = await sbx(["-q", "profile", "show"], { tty: false, color: false });
    expect(show.out).toContain("profile\tprod (current)");
    expect(show.err).toBe("");
  });

  it("--quiet never silences an error", async () => {
    const r = await sbx(["--quiet", "profile", "use", "nope"], { tty: false, color: false });
    expect(r.code).toBe(125);
    expect(r.err).toContain("no profile named");
  });

  it("verbose lines only with --verbose", () => {
    const io = createBufferIO();
    io.verbose("sbx: hidden");
    const verbose = io.configure({ verbose: true });
    verbose.verbose("sbx: shown");
    expect(io.stderrText()).toBe("sbx: shown\n");
  });

  it("progress is a no-op where spinners cannot be drawn", () => {
    for (const io of [createBufferIO(), createBufferIO({ tty: true, color: true })]) {
      expect(io.animated).toBe(false);
      const p = io.progress("working…", { elapsed: true });
      p.update("still working…");
      p.stop();
      p.stop();
      expect(io.stderrText()).toBe("");
    }
  });

  it("quiet turns spinners off, as does --no-color", () => {
    const io = createBufferIO({ tty: true, color: true });
    expect(io.configure({ quiet: true }).animated).toBe(false);
    expect(io.configure({ color: "never" }).chalk.level).toBe(0);
    expect(io.configure({ color: "never" }).errChalk.level).toBe(0);
  });
});
