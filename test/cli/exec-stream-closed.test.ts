// `sbx exec --stream … | head -1` (issue 30, item 12): once sbx's stdout has no reader,
// sbx stops following at once, leaves the command running, says how to follow it, and
// exits 141 (as a process killed by SIGPIPE), never 0 and never after the command ended.
// In-process (the reader going away, as the IO sees it), then through a real pipe with
// bin/sbx (EPIPE on a real descriptor is the point there).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCodes } from "../../src/common/exit-codes.js";
import { spawnSbx } from "../support/cli.js";
import { type LocalHome, localHome, startMain } from "../support/in-process.js";
import { until } from "../support/wait.js";

/** Prints a line, then one more every 200 ms, forever: only a cancel ends it. */
const ENDLESS = ["sh", "-c", "echo first; while :; do sleep 0.2; echo more; done"];

let local: LocalHome;

beforeAll(async () => {
  local = await localHome("sbx-stream-closed-");
});
afterAll(() => local.close());

/** The execution named in the "keeps running" line; checks it runs, then cancels it. */
async function expectStillRunning(stderr: string): Promise<void> {
  const eid = /(exe_[0-9a-z]+) keeps running/.exec(stderr)?.[1];
  expect(eid, stderr).toBeDefined();
  const shown = await local.json<{ outcome: string | null; classification: string }>([
    "receipts",
    "show",
    eid!,
    "--json",
  ]);
  expect(shown.doc.classification).toBe("running");
  const cancelled = await local.sbx(["cancel", eid!, "--wait"]);
  expect(cancelled.code, cancelled.stderr).toBe(0);
}

describe("sbx exec --stream whose stdout loses its reader", () => {
  it("stops following at once, leaves the command running, says how to follow it, exits 141", async () => {
    const running = startMain(["exec", "--stream", "--", ...ENDLESS], { home: local.home });
    await until(() => running.io.stdoutText().includes("first\n"), 30_000, "the first line");
    running.io.closeStdout();
    const r = await running.done;
    expect(r.code, r.stderr).toBe(ExitCodes.stdoutClosed);
    expect(r.code).toBe(141);
    expect(r.stderr).toMatch(
      /^sbx: stdout was closed; stopped following\. exe_[0-9a-z]+ keeps running\. Follow it: sbx logs exe_[0-9a-z]+ -f; result: sbx receipts wait rcp_[0-9a-z]+$/m,
    );
    await expectStillRunning(r.stderr);
  });

  it("through a real pipe closed by its reader (as `| head -1`): bin/sbx exits 141", async () => {
    const child = spawnSbx(["exec", "--stream", "--", ...ENDLESS], { home: local.home });
    const stderr: Buffer[] = [];
    child.stderr!.on("data", (b: Buffer) => stderr.push(b));
    let seen = "";
    await new Promise<void>((resolve) => {
      child.stdout!.on("data", (b: Buffer) => {
        seen += b.toString("utf8");
        if (seen.includes("first\n")) {
          // The reader goes away, as head does after its line.
          child.stdout!.destroy();
          resolve();
        }
      });
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    const err = Buffer.concat(stderr).toString("utf8");
    expect(code, err).toBe(141);
    expect(err).toContain("sbx: stdout was closed; stopped following.");
    await expectStillRunning(err);
  });
});
