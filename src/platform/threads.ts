// The runtime seam for threads: where a script of sbx's own that runs on a worker thread
// is, in the layout this code runs from. The thread API is node:worker_threads under
// both runtimes; what differs is the file. The Node bundle (scripts/bundle-node.mjs)
// has each such script as an entry of its own beside its chunks; tsc's output has it
// under dist/receipts; the Bun-compiled binary has it as a second entry point
// (scripts/build-binary.mjs), addressed from the root of src/. Under vitest this module
// is the TypeScript source, and the thread runs the built script in dist/ (the test
// setup builds it). Where none is found, the caller does the work on its own thread.

import fs from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { isBunRuntime, isCompiledBinary } from "./runtime.js";

/** The scripts that run on threads of their own (each a file under src/receipts/). */
export type ThreadScript = "verify-worker";

/** How many threads can run at once here (the CPUs this process may use). */
export function availableThreads(): number {
  return typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length;
}

function scriptLocation(script: ThreadScript): string | URL | null {
  // Compiled: entry points are addressed from the root of their common folder, src/.
  if (isCompiledBinary()) return `./receipts/${script}.ts`;
  const here = import.meta.url;
  if (isBunRuntime()) {
    return new URL(`../receipts/${script}${here.endsWith(".ts") ? ".ts" : ".js"}`, here);
  }
  const candidates = here.endsWith(".cjs")
    ? [new URL(`./${script}.cjs`, here)]
    : here.endsWith(".ts")
      ? [new URL(`../../dist/receipts/${script}.js`, here)]
      : [new URL(`../receipts/${script}.js`, here)];
  for (const url of candidates) if (fs.existsSync(fileURLToPath(url))) return url;
  return null;
}

/**
 * Starts one of sbx's thread scripts with `data` (its workerData); null where this
 * layout has no such script. The caller owns the Worker (messages, errors, its end).
 */
export function startThread(script: ThreadScript, data: unknown): Worker | null {
  const location = scriptLocation(script);
  if (location === null) return null;
  return new Worker(location, { workerData: data });
}
