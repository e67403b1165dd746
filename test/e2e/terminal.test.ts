// sbx on a real terminal (a pseudo-terminal from script(1)): what only a terminal
// gets — tables and spinners, here — works in the process users run, including the
// release binary, whose bundle must carry every module the terminal path loads.

import { spawn } from "node:child_process";
import fs from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { collect, makeHome, removeHome, SBX_BIN, sbxEnv, TEST_BINARY } from "../support/cli.js";
import { stopDaemon } from "../support/daemon.js";
import { runMainJson } from "../support/in-process.js";
import { until } from "../support/wait.js";
import { shellQuote as quote } from "../support/outer-terminal.js";
import { describeNeeding, SCRIPT } from "../support/requirements.js";

describeNeeding("script", "on a terminal (through script(1))", () => {
  let home: string;
  beforeAll(() => {
    home = makeHome("sbx-tty-");
    fs.writeFileSync(
      `${home}/config.json`,
      JSON.stringify({ version: 1, profiles: { prod: { api_url: "https://sbx.example.com" } }, settings: {} }),
    );
  });
  afterAll(async () => {
    await stopDaemon(home);
    removeHome(home);
  });

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

  it("a spinner animates on stderr while exec waits, with the seconds waited, and is gone when it ends", async () => {
    const sbx = TEST_BINARY === undefined ? `${quote(process.execPath)} -- ${quote(SBX_BIN)}` : quote(TEST_BINARY);
    // The command waits in its workspace until the test lets it go.
    const wait = "until [ -e go ]; do sleep 0.05; done; echo went";
    const child = spawn(SCRIPT!, ["-qfec", `stty cols 80; ${sbx} exec -- sh -c ${quote(wait)}`, "/dev/null"], {
      cwd: home,
      // Colour on (no NO_COLOR), a terminal that draws: what an interactive user has.
      env: { ...sbxEnv(home, { NO_COLOR: undefined }), TERM: "xterm-256color" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdin?.end();
    let drawn = "";
    child.stdout?.on("data", (c: Buffer) => {
      drawn += c.toString();
    });
    const done = collect(child, undefined, "sbx exec on a terminal");
    const FRAMES = /[\u280b\u2819\u2839\u2838\u283c\u2834\u2826\u2827\u2807\u280f]/gu;
    // Animating: several frames of the spinner drawn over one another, then the seconds counted.
    const frames = await until(
      () => {
        const seen = new Set(drawn.match(FRAMES) ?? []);
        return seen.size >= 4 && /running sh -c .* in default…/.test(drawn) && / 1s/.test(drawn) ? seen : undefined;
      },
      30_000,
      "the spinner to animate",
    );
    expect(frames.size).toBeGreaterThanOrEqual(4);

    const { doc } = await runMainJson<{ host_workspace: string }>(["sandbox", "show", "default", "--json"], { home });
    fs.writeFileSync(`${doc.host_workspace}/go`, "");
    const r = await done;
    expect(r.code, r.stdout).toBe(0);
    // The spinner's line was erased, and the cursor shown again, before the command's output.
    const last = r.stdout.slice(r.stdout.lastIndexOf("in default…"));
    expect(last).toMatch(/^in default…[^\n]*\x1b\[[02]?K[^\n]*\x1b\[\?25hwent\r?\n$/);
  });
});
