// Temporary directories and other things a test file makes, each ended when the file
// ends at the latest (test/support/file-scope.ts runs the cleanups after the file's
// own afterAll hooks). os.tmpdir() is the run's own directory (run-scope.ts), which
// must be empty when the run ends. Per file, not per test: tests of a file may run
// concurrently (describe.concurrent), and vitest's onTestFinished outside a test
// context cannot tell which test is running.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

type Cleanup = () => void | Promise<void>;
const cleanups: Cleanup[] = [];

/** Runs `cleanup` when the current test file ends (the last registered first). */
export function atEndOfFile(cleanup: Cleanup): void {
  cleanups.push(cleanup);
}

/** Runs the file's cleanups, the last registered first (file-scope.ts, after every other afterAll). */
export async function endOfFile(): Promise<void> {
  const errors: unknown[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw new AggregateError(errors, "a cleanup failed at the end of the file");
}

/** Removes a directory and everything under it (already gone is fine). */
export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** A fresh private directory in the run's temporary directory, removed when the file ends (or sooner, by removeDir). */
export function tempDir(prefix = "sbx-test-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  atEndOfFile(() => removeDir(dir));
  return dir;
}
