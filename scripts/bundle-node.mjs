#!/usr/bin/env node
// The Node entry as a bundle: src/cli/entry.ts (the same entry the release binary is
// compiled from) bundled by Bun for Node into dist/node/, one chunk per lazily
// imported module, so that `node bin/sbx` resolves and reads a few files instead of
// a module graph (BENCHMARKS.md). better-sqlite3 stays out (a native addon). Names
// are kept (stack traces with --verbose stay readable).
// Without Bun (dev dependencies not installed), bin/sbx runs the modules tsc built.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bun = path.join(root, "node_modules", ".bin", "bun");
const outdir = path.join(root, "dist", "node");
if (!fs.existsSync(bun)) {
  console.error("bundle-node: bun is not installed; bin/sbx will run the modules in dist/ unbundled");
  process.exit(0);
}
fs.rmSync(outdir, { recursive: true, force: true });
const built = spawnSync(
  bun,
  [
    "build",
    "--target",
    "node",
    "--format",
    "esm",
    "--splitting",
    "--minify-syntax",
    "--minify-whitespace",
    "--external",
    "better-sqlite3",
    "--outdir",
    outdir,
    path.join(root, "src", "cli", "entry.ts"),
  ],
  { stdio: ["ignore", "ignore", "inherit"] },
);
process.exit(built.status ?? 1);
