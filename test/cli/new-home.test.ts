// A mistyped SBX_HOME (or a first run) makes a new home: sbx says so once, on stderr,
// with where, and never in what a script reads on stdout. sbx in-process through main().

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runMain } from "../support/in-process.js";
import { tempDir } from "../support/temp.js";

describe("a home sbx creates", () => {
  it("is said once, on stderr, with where (SBX_HOME), and --json stdout stays a document", async () => {
    const home = path.join(tempDir("sbx-newhome-"), "nonexistent", "deep", "x");
    const first = await runMain(["receipts", "list", "--json"], { home });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual([]);
    expect(first.stderr).toBe(
      `sbx: created a new sbx home at ${home} (SBX_HOME): it has no receipts, sandboxes or daemon of another home\n`,
    );
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
    // Once: the home is there now.
    const again = await runMain(["receipts", "list", "--json"], { home });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe("");
  });

  it("an existing (empty) SBX_HOME is used without a word", async () => {
    const home = tempDir("sbx-newhome-");
    const r = await runMain(["receipts", "list", "--json"], { home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
  });

  it("without SBX_HOME, the state and the config directories are each said where they were made", async () => {
    const base = tempDir("sbx-newhome-");
    const state = path.join(base, "state");
    const config = path.join(base, "config");
    const env = { SBX_HOME: undefined, XDG_STATE_HOME: state, XDG_CONFIG_HOME: config };
    const listed = await runMain(["receipts", "list"], { home: base, env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toBe(
      `sbx: created a new sbx state directory at ${path.join(state, "sbx")} (receipts, sandboxes, the local daemon)\n`,
    );
    const set = await runMain(["config", "set", "sandbox", "other"], { home: base, env });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toBe(`sbx: created a new sbx config directory at ${path.join(config, "sbx")}\n`);
    const setAgain = await runMain(["config", "set", "sandbox", "default"], { home: base, env });
    expect(setAgain.stderr).toBe("");
  });

  it("--quiet keeps it quiet", async () => {
    const home = path.join(tempDir("sbx-newhome-"), "x");
    const r = await runMain(["receipts", "list", "--json", "--quiet"], { home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    expect(fs.existsSync(home)).toBe(true);
  });
});
