#!/usr/bin/env node
// The release binary: src/cli/entry.ts compiled by Bun into one executable, minified
// and with its bytecode compiled ahead (start-up is most of a short command's time;
// BENCHMARKS.md). Bun's own build API does it (scripts/compile-binary.bun.mjs, run by
// the bun of node_modules): as ES modules split into chunks, so that a command loads
// the code of its own path and no more — the backend, the daemon's HTTP server, the
// sandbox init, `cp`'s tar streams and the prompts are chunks of their own, loaded
// (with the Node builtins they import) when a command first imports them.
// Usage: node scripts/build-binary.mjs [OUTFILE]   (default dist/release/sbx)

import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outfile = path.resolve(process.argv[2] ?? path.join(root, "dist", "release", "sbx"));
const bun = path.join(root, "node_modules", ".bin", "bun");
const built = spawnSync(bun, [path.join(root, "scripts", "compile-binary.bun.mjs"), outfile], { stdio: "inherit" });
process.exit(built.status ?? 1);
