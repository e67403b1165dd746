// Vitest global setup. First, the end-to-end tests spawn bin/sbx, which runs dist/. A
// build older than its sources would test code that no longer exists, so dist/ is
// rebuilt (tsc -p tsconfig.build.json, then the Node bundle, as npm run build does)
// whenever a source file is newer than what it compiles to. Then the run gets its own
// temporary directory and cgroup (run-scope.ts); at the end, the run fails if anything
// of it is left there (docs/testing.md, "Nothing left behind").

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./repo.js";
import { beginRun, endRun, leftoverReport } from "./run-scope.js";

const SRC = path.join(REPO_ROOT, "src");
const DIST = path.join(REPO_ROOT, "dist");
const TSC = path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
/** A build started by another run in this checkout is waited for, not repeated. */
const LOCK = path.join(REPO_ROOT, "node_modules", ".sbx-build.lock");
const LOCK_STALE_MS = 120_000;

function sourcesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sourcesUnder(p));
    else if (entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) found.push(p);
  }
  return found;
}

function mtimeOf(file: string): number | null {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/** What makes dist/ stale, or null when every source compiles to a newer file. */
export function staleReason(): string | null {
  const configs = ["tsconfig.json", "tsconfig.build.json"].map((f) => path.join(REPO_ROOT, f));
  const entry = mtimeOf(path.join(DIST, "cli", "entry.js"));
  for (const config of configs) {
    const changed = mtimeOf(config);
    if (entry === null || (changed !== null && changed > entry)) return `${path.basename(config)} changed`;
  }
  for (const source of sourcesUnder(SRC)) {
    const built = path.join(DIST, path.relative(SRC, source)).replace(/\.ts$/, ".js");
    const builtAt = mtimeOf(built);
    if (builtAt === null) return `${path.relative(REPO_ROOT, built)} is missing`;
    if (mtimeOf(source)! > builtAt) return `${path.relative(REPO_ROOT, source)} is newer than its build`;
  }
  return null;
}

function takeLock(): boolean {
  try {
    fs.closeSync(fs.openSync(LOCK, "wx"));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    const at = mtimeOf(LOCK);
    if (at !== null && Date.now() - at > LOCK_STALE_MS) fs.rmSync(LOCK, { force: true });
    return false;
  }
}

/** SBX_TEST_LEFTOVERS=FILE: the report is also written there (.ci/run reads it for its summary). */
const LEFTOVERS_FILE = process.env.SBX_TEST_LEFTOVERS || undefined;

export default async function setup(): Promise<() => Promise<void>> {
  await rebuildStaleDist();
  const run = beginRun();
  return async () => {
    const report = leftoverReport(run, await endRun(run));
    if (LEFTOVERS_FILE !== undefined) fs.writeFileSync(LEFTOVERS_FILE, report ?? "");
    if (report === null) return;
    process.stderr.write(`\n${report}\n`);
    // A throw here is only logged by vitest: the exit code says it.
    process.exitCode = 1;
  };
}

async function rebuildStaleDist(): Promise<void> {
  for (;;) {
    const reason = staleReason();
    if (reason === null) return;
    if (!takeLock()) {
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    try {
      // Checked again under the lock: another run may have just built it.
      if (staleReason() === null) return;
      process.stderr.write(`sbx tests: rebuilding dist/ (${reason})\n`);
      const built = spawnSync(process.execPath, [TSC, "-p", "tsconfig.build.json"], {
        cwd: REPO_ROOT,
        encoding: "utf8",
      });
      if (built.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed:\n${built.stdout}${built.stderr}`);
      // The bundle bin/sbx runs (as npm run build makes it), so the tests run what users run.
      const bundled = spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts", "bundle-node.mjs")], {
        cwd: REPO_ROOT,
        encoding: "utf8",
      });
      if (bundled.status !== 0) throw new Error(`scripts/bundle-node.mjs failed:\n${bundled.stdout}${bundled.stderr}`);
      const still = staleReason();
      if (still !== null) throw new Error(`dist/ is still stale after tsc -p tsconfig.build.json: ${still}`);
      return;
    } finally {
      fs.rmSync(LOCK, { force: true });
    }
  }
}
