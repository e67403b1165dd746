#!/usr/bin/env node
// The release binary: src/cli/entry.ts compiled by Bun into one executable, minified
// and with its bytecode compiled ahead (start-up is most of a short command's time;
// BENCHMARKS.md), as CommonJS (`--format cjs`): an ES module bundle links every Node
// builtin that any of its modules imports (node:http, node:tty, node:util, streams…)
// before the first line runs, even those only the daemon or one command uses; as
// CommonJS each is required where its module is first used (--version 0.30x -> 0.19x
// of node -e 0; BENCHMARKS.md). The binary uses
// bun:sqlite (src/platform/sqlite.ts); better-sqlite3's JavaScript is compiled in
// (src/platform/better-sqlite3.ts imports it, for the Node bundle) but never loaded:
// marked external, its import would be resolved when the binary starts, and fail.
// Usage: node scripts/build-binary.mjs [OUTFILE]   (default dist/release/sbx)

import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outfile = path.resolve(process.argv[2] ?? path.join(root, "dist", "release", "sbx"));
const bun = path.join(root, "node_modules", ".bin", "bun");
const built = spawnSync(
  bun,
  [
    "build",
    "--compile",
    "--minify",
    "--bytecode",
    "--format",
    "cjs",
    "--outfile",
    outfile,
    path.join(root, "src", "cli", "entry.ts"),
    // A thread's script is a second entry point: src/platform/threads.ts addresses it from src/.
    path.join(root, "src", "receipts", "verify-worker.ts"),
  ],
  { stdio: "inherit" },
);
process.exit(built.status ?? 1);
