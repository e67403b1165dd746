// Input back-pressure of the terminal seam on both runtimes (test/support/pty-input-scenario.ts):
// typed bytes a program does not read yet are said pending, so that the daemon (none) or
// the sandbox's init (bwrap) stops reading its client instead of holding them in memory.
// On Bun the terminal keeps them itself and says only by its drain callback when they went.

import { spawnSync } from "node:child_process";
import path from "node:path";
import { expect } from "vitest";
import { BUN } from "../support/binary.js";
import { REPO_ROOT } from "../support/cli.js";
import { inputPressure, TYPED } from "../support/pty-input-scenario.js";
import { itNeeding } from "../support/requirements.js";
import { tempDir } from "../support/temp.js";

/** The terminal itself takes a few KiB before it stops taking more (the line discipline's buffer). */
const TERMINAL_TAKES_AT_MOST = 64 * 1024;

itNeeding("pty", "Node: 1 MiB typed at a program that reads nothing is pending, then arrives whole", async () => {
  const r = await inputPressure(tempDir("sbx-pty-input-"));
  expect(r.pendingAfterWrite).toBeGreaterThan(TYPED - TERMINAL_TAKES_AT_MOST);
  expect(r).toMatchObject({ counted: String(TYPED), pendingAtEnd: 0 });
});

itNeeding("binary", "Bun: 1 MiB typed at a program that reads nothing is pending, then arrives whole", () => {
  const dir = tempDir("sbx-pty-input-");
  const run = spawnSync(BUN, [path.join(REPO_ROOT, "test", "support", "pty-input-scenario.ts"), dir], {
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(0);
  const r = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as Awaited<ReturnType<typeof inputPressure>>;
  expect(r.pendingAfterWrite).toBeGreaterThan(TYPED - TERMINAL_TAKES_AT_MOST);
  expect(r).toMatchObject({ counted: String(TYPED), pendingAtEnd: 0 });
});
