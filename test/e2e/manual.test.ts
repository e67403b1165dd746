// sbx help --man on a real terminal (the release binary too, with SBX_TEST_BINARY): the
// page this sbx carries, formatted and paged through man -l - (its $MANPAGER), or groff
// into $PAGER where man is not installed. Each pager here writes what it was given to a
// file, which the test reads once sbx has exited.

import fs from "node:fs";
import path from "node:path";
import { expect, type TestContext } from "vitest";
import { makeHome, removeHome, sbxEnv } from "../support/cli.js";
import { sbxSession, shellQuote } from "../support/outer-terminal.js";
import { describeNeeding, itNeeding } from "../support/requirements.js";
import { tempDir } from "../support/temp.js";

/** What a terminal shows of man's output: overstrike (bold, underline) taken away. */
const plain = (text: string) => text.replace(/.\u0008/g, "");

function dirs(t: TestContext) {
  const home = makeHome("sbx-manual-");
  const dir = tempDir("sbx-manual-run-");
  t.onTestFinished(() => removeHome(home));
  return { home, dir };
}

function expectFormatted(page: string): void {
  const text = plain(page);
  expect(text).toMatch(/^SBX\(1\)\s+User Commands\s+SBX\(1\)/m);
  for (const section of ["NAME", "SYNOPSIS", "EXIT STATUS", "SEE ALSO"])
    expect(text).toMatch(new RegExp(`^${section}$`, "m"));
  // Formatted, not the source.
  expect(text).not.toMatch(/^\.TH /m);
}

describeNeeding("pty", "sbx help --man on a terminal", () => {
  itNeeding("man", "is formatted by man -l - and handed to $MANPAGER; exit 0", async (t) => {
    const { home, dir } = dirs(t);
    const out = path.join(dir, "paged");
    const env = sbxEnv(home, { MANPAGER: `sh -c ${shellQuote(`cat > ${shellQuote(out)}`)}` });
    const s = sbxSession(path.join(dir, "session"), "help --man", { cwd: dir, env });
    t.onTestFinished(() => s.t.kill());
    const { code } = await s.over();
    expect(code).toBe(0);
    expectFormatted(fs.readFileSync(out, "utf8"));
  });

  itNeeding("groff", "without man: formatted by groff and handed to $PAGER; exit 0", async (t) => {
    const { home, dir } = dirs(t);
    // A PATH with groff and what it runs, and no man.
    const bin = path.join(dir, "bin");
    fs.mkdirSync(bin);
    for (const tool of ["sh", "cat", "groff", "troff", "grotty"]) {
      const found = ["/usr/bin", "/bin"].map((d) => path.join(d, tool)).find((f) => fs.existsSync(f));
      if (found !== undefined) fs.symlinkSync(found, path.join(bin, tool));
    }
    const out = path.join(dir, "paged");
    const env = { ...sbxEnv(home), PATH: bin, PAGER: `cat > ${shellQuote(out)}` };
    const s = sbxSession(path.join(dir, "session"), "help --man", { cwd: dir, env });
    t.onTestFinished(() => s.t.kill());
    const { code } = await s.over();
    expect(code).toBe(0);
    expectFormatted(fs.readFileSync(out, "utf8"));
  });
});
