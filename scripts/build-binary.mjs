#!/usr/bin/env node
// The release binary: src/cli/entry.ts compiled by Bun into one executable, minified
// and with its bytecode compiled ahead (start-up is most of a short command's time;
// BENCHMARKS.md). `--format esm`: the entry awaits at top level. better-sqlite3 stays
// out (the binary uses bun:sqlite, src/platform/sqlite.ts).
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
    "esm",
    "--external",
    "better-sqlite3",
    "--outfile",
    outfile,
    path.join(root, "src", "cli", "entry.ts"),
  ],
  { stdio: "inherit" },
);
process.exit(built.status ?? 1);
