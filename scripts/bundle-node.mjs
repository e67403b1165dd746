#!/usr/bin/env node
// The Node entry as a bundle: src/cli/entry.ts (the same entry the release binary is
// compiled from) bundled by rolldown for Node into dist/node/ as CommonJS (Node 20
// starts a CommonJS program without its ESM loader: ~8 ms of every command), split at
// every lazy import, so that `node bin/sbx` resolves and reads a few files instead of
// a module graph (BENCHMARKS.md). Code that three or more chunks share goes into one common
// chunk: Node 20's ESM loader costs about 0.4 ms per file, and split by the exact set
// of commands that use each module (what Bun's bundler does), a warm exec read 44
// files; now 13. The backend stays a chunk of its own. better-sqlite3's JavaScript is
// in the bundle (src/platform/better-sqlite3.ts; its addon is loaded by path). Names
// are kept (stack traces with --verbose stay readable).
// Without rolldown (dev dependencies not installed), bin/sbx runs the modules tsc built.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdir = path.join(root, "dist", "node");
const rolldownEntry = path.join(root, "node_modules", "rolldown", "dist", "index.mjs");
if (!fs.existsSync(rolldownEntry)) {
  console.error("bundle-node: rolldown is not installed; bin/sbx will run the modules in dist/ unbundled");
  process.exit(0);
}
const { build } = await import(pathToFileURL(rolldownEntry).href);
fs.rmSync(outdir, { recursive: true, force: true });
await build({
  // A script that runs on a thread of its own is an entry too (src/platform/threads.ts finds it beside the chunks).
  input: {
    entry: path.join(root, "src", "cli", "entry.ts"),
    "verify-worker": path.join(root, "src", "receipts", "verify-worker.ts"),
  },
  platform: "node",
  external: [/^node:/, /^bun:/],
  logLevel: "warn",
  onLog(level, log, handler) {
    // A module both imported lazily and statically stays where the static import puts it: expected here.
    if (log.code === "INEFFECTIVE_DYNAMIC_IMPORT") return;
    handler(level, log);
  },
  output: {
    dir: outdir,
    format: "cjs",
    entryFileNames: "[name].cjs",
    chunkFileNames: "[name]-[hash].cjs",
    minify: { compress: false, mangle: false, codegen: { removeWhitespace: true } },
    codeSplitting: {
      groups: [{ name: "common", test: /[\\/]src[\\/](?!backend[\\/])/, minShareCount: 3 }],
    },
  },
});

// The sandbox's init runs inside each sandbox from a descriptor, where no other file of
// sbx is (docs/drivers.md, "Entering"): one file, the terminal seam it imports when a
// terminal is asked for inlined, written over tsc's dist/sandbox-init/init.js. It may
// import nothing but Node's built-ins (checked here: anything else would fail inside).
const initOut = path.join(root, "dist", "sandbox-init", "init.js");
await build({
  input: path.join(root, "src", "sandbox-init", "init.ts"),
  platform: "node",
  external: [/^node:/],
  logLevel: "warn",
  output: { file: initOut, format: "esm", codeSplitting: false, minify: false },
});
const initText = fs.readFileSync(initOut, "utf8");
const foreign = [...initText.matchAll(/\bfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)]
  .map((m) => m[1] ?? m[2])
  .filter((spec) => !spec.startsWith("node:"));
if (foreign.length > 0) {
  console.error(`bundle-node: the sandbox init imports more than Node's built-ins: ${foreign.join(", ")}`);
  process.exit(1);
}
