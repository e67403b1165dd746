// sbx help --man: the manual this sbx carries (generated from its command tree: the very
// text of man/sbx.1), in-process. In a pipe the roff source; on a terminal without man or
// groff the source too, said on stderr. Paging through man or groff on a real terminal:
// test/e2e/manual.test.ts.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { manualViewer } from "../../src/cli/commands/manual.js";
import { ExitCodes } from "../../src/common/exit-codes.js";
import { makeHome, REPO_ROOT, removeHome } from "../support/cli.js";
import { runMain } from "../support/in-process.js";
import { tempDir } from "../support/temp.js";

const SHIPPED = fs.readFileSync(path.join(REPO_ROOT, "man", "sbx.1"), "utf8");

function home(t: TestContext): string {
  const dir = makeHome("sbx-man-");
  t.onTestFinished(() => removeHome(dir));
  return dir;
}

/** A directory on PATH holding only these programs (links to the real ones, or scripts). */
function pathWith(programs: Record<string, string>): string {
  const dir = tempDir("sbx-man-path-");
  for (const [name, script] of Object.entries(programs)) {
    fs.writeFileSync(path.join(dir, name), script, { mode: 0o755 });
  }
  return dir;
}

describe.concurrent("sbx help --man", () => {
  it("in a pipe: prints the page man/sbx.1 holds, exit 0", async (t) => {
    const r = await runMain(["help", "--man"], { home: home(t) });
    expect(r.code).toBe(ExitCodes.ok);
    expect(r.stdout).toBe(SHIPPED);
    expect(r.stderr).toBe("");
  });

  it("on a terminal where neither man nor groff is installed: the source, and says so", async (t) => {
    const empty = pathWith({});
    const r = await runMain(["help", "--man"], { home: home(t), tty: true, env: { PATH: empty } });
    expect(r.code).toBe(ExitCodes.ok);
    expect(r.stdout).toBe(SHIPPED);
    expect(r.stderr).toMatch(/neither man nor groff is installed to format the manual; its source \(roff\) follows/);
  });

  it("refuses a command or topic named with it (125), saying how to ask", async (t) => {
    const r = await runMain(["help", "--man", "exit-codes"], { home: home(t) });
    expect(r.code).toBe(ExitCodes.usage);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/--man shows the whole manual/);
  });

  it("is offered by help itself", async (t) => {
    const r = await runMain(["help", "help"], { home: home(t) });
    expect(r.stdout).toMatch(/--man\s+the whole manual, sbx\(1\), through your pager/);
  });

  it("pages through man where it is on PATH, else groff into $PAGER, else nothing formats it", () => {
    const both = pathWith({ man: "#!/bin/sh\n", groff: "#!/bin/sh\n", sh: "#!/bin/sh\n" });
    expect(manualViewer({ PATH: both })).toEqual({ file: path.join(both, "man"), args: ["-l", "-"], name: "man -l -" });
    const groff = pathWith({ groff: "#!/bin/sh\n", sh: "#!/bin/sh\n" });
    expect(manualViewer({ PATH: `/nonexistent:${groff}` })).toMatchObject({
      file: path.join(groff, "sh"),
      args: ["-c", expect.stringContaining("-man -Tutf8"), path.join(groff, "groff")],
    });
    // A file that is not executable is not a program.
    const notExecutable = pathWith({});
    fs.writeFileSync(path.join(notExecutable, "man"), "", { mode: 0o644 });
    expect(manualViewer({ PATH: notExecutable })).toBeNull();
    expect(manualViewer({})).toBeNull();
  });
});
