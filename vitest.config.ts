import os from "node:os";
import { defineConfig } from "vitest/config";
import { loadScale } from "./test/support/load.js";

// A test's timeout only keeps a hung test from stalling the run; it is no claim about speed.
// The suite itself loads a 2-core machine to 2–3 per core, so the guard is twice the minute a
// test needs on a quiet machine, and grows with the load the run starts under (at most 4×;
// CI's own limit bounds the whole run).
const GUARD_MS = Math.round(120_000 * loadScale());

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // dist/ is rebuilt first when src/ is newer: the end-to-end tests spawn bin/sbx, which runs it.
    // Then the run gets its own TMPDIR and cgroup, and fails if anything is left there at its end.
    globalSetup: ["test/support/global-setup.ts"],
    // Before each file: what it made outside its tests is removed when it ends (test/support/temp.ts).
    setupFiles: ["test/support/file-scope.ts"],
    testTimeout: GUARD_MS,
    hookTimeout: GUARD_MS,
    // Child processes, not threads: tests send signals, load a native SQLite module and
    // register process-wide handlers (main() takes SIGINT), which worker threads do not share.
    pool: "forks",
    // One file more than there are cores: about half of a file's time is spent waiting on
    // what it started (daemons, sandboxes, signals, servers), not computing — with one file
    // per core a run took 131–136 s on a quiet 2-core machine for about 140 s of CPU (53 %).
    maxWorkers: os.availableParallelism() + 1,
    // A worker runs its files one after another in one module cache: importing the CLI and
    // the backend once per worker instead of once per file halves the suite's CPU time.
    // Every file cleans up after itself (its homes, backends and servers), so none sees another's.
    isolate: false,
  },
});
