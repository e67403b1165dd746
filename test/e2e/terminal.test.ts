// sbx on a real terminal (a pseudo-terminal from script(1)): what only a terminal
// gets — tables, here — works in the process users run, including the release
// binary, whose bundle must carry every module the terminal path loads.

import { spawn } from "node:child_process";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, makeHome, removeHome, SBX_BIN, sbxEnv, TEST_BINARY } from "../support/cli.js";
import { describeNeeding, SCRIPT } from "../support/requirements.js";

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describeNeeding("script", "on a terminal (through script(1))", () => {
  let home: string;
  beforeAll(() => {
    home = makeHome("sbx-tty-");
    fs.writeFileSync(
      `${home}/config.json`,
      JSON.stringify({ version: 1, profiles: { prod: { api_url: "https://sbx.example.com" } }, settings: {} }),
    );
  });
  afterAll(() => removeHome(home));

  it("a table is drawn: aligned columns, no tabs, exit 0", async () => {
    const sbx = TEST_BINARY === undefined ? `${quote(process.execPath)} -- ${quote(SBX_BIN)}` : quote(TEST_BINARY);
    // script gives the command a terminal of its own and copies what it draws to our pipe.
    const child = spawn(SCRIPT!, ["-qec", `stty cols 80; ${sbx} profile list`, "/dev/null"], {
      cwd: home,
      env: { ...sbxEnv(home), NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdin?.end();
    const r = await collect(child, undefined, "sbx profile list on a terminal");
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).not.toContain("internal error");
    expect(r.stdout).not.toContain("\t");
    expect(r.stdout).toMatch(/PROFILE +API URL +KEY/);
    expect(r.stdout).toMatch(/prod +https:\/\/sbx\.example\.com/);
  });
});
