// Vitest setup file (vitest.config.ts, setupFiles), run before each test file:
// - its top-level afterAll is the file's first, so it runs last: the cleanups of what
//   the file made outside its tests (temp.ts, atEndOfFile);
// - it notes in the run's journal when the file started and ended, so that a process
//   left behind can be traced to the files that ran when it started (run-scope.ts).

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { REPO_ROOT } from "./repo.js";
import { journalFile, RUN_ENV, uptime } from "./run-scope.js";
import { endOfFile } from "./temp.js";

const root = process.env[RUN_ENV];
const note = (what: string) => {
  const file = path.relative(REPO_ROOT, expect.getState().testPath ?? "?");
  if (root !== undefined) fs.appendFileSync(journalFile(root), `${uptime()}\t${what}\t${file}\n`);
};

beforeAll(() => note("start"));
afterAll(async () => {
  await endOfFile();
  note("end");
});
