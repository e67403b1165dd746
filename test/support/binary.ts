// The release artifact, built for a test: a single binary compiled with Bun from the
// same sources, by the same script as `npm run build:binary`. When SBX_TEST_BINARY
// names one already built (CI runs the end-to-end suite against it), that one is used.
// In a run of the suite (test/support/run-scope.ts) it is compiled once, by the first
// file that asks, into the run's directory; the other files, in any worker, get a link
// to that one (the sources do not change during a run; a compile is a few seconds of
// CPU and writing ~120 MB, three times over before).

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT, TEST_BINARY } from "./cli.js";
import { RUN_ENV } from "./run-scope.js";
import { loadScale } from "./load.js";

export const BUN = path.join(REPO_ROOT, "node_modules", ".bin", "bun");
export const canBuildBinary = fs.existsSync(BUN) || TEST_BINARY !== undefined;

/** A compile that never ends fails the file; on a machine loaded past its cores it may take minutes (wait.ts). */
const BUILD_TIMEOUT_MS = Math.round(120_000 * loadScale());
/** For the beforeAll that builds it: one file may wait for another's compile, then link or copy it. */
export const BUILD_HOOK_TIMEOUT_MS = 2 * BUILD_TIMEOUT_MS + 60_000;

function compile(outfile: string): void {
  const built = spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts", "build-binary.mjs"), outfile], {
    encoding: "utf8",
    timeout: BUILD_TIMEOUT_MS,
  });
  if (built.status !== 0) throw new Error(`bun build failed (${built.status}): ${built.stderr}`);
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * The run's one compiled binary: the first caller (mkdir of the lock directory is the
 * race's referee) compiles it and renames it into place, or writes why it failed; every
 * other caller waits for one of the two. A compile that never ends is bounded by its own
 * timeout, so the wait is too (twice it: the compile may have started late).
 */
function runBinary(root: string): string {
  const dir = path.join(root, "release-binary");
  const binary = path.join(dir, "sbx");
  const failed = path.join(dir, "failed");
  let mine = false;
  try {
    fs.mkdirSync(dir);
    mine = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  if (mine) {
    try {
      compile(`${binary}.part`);
      fs.renameSync(`${binary}.part`, binary);
    } catch (err) {
      fs.writeFileSync(failed, String((err as Error).message));
      throw err;
    }
    return binary;
  }
  const waitMs = 2 * BUILD_TIMEOUT_MS;
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (fs.existsSync(binary)) return binary;
    if (fs.existsSync(failed))
      throw new Error(`the run's release binary failed to build: ${fs.readFileSync(failed, "utf8")}`);
    if (Date.now() > deadline) throw new Error(`the run's release binary was not built after ${waitMs} ms`);
    sleepSync(100);
  }
}

/** Puts the release binary at `outfile`; throws with Bun's output when it fails. */
export function buildReleaseBinary(outfile: string): void {
  if (TEST_BINARY !== undefined) {
    fs.copyFileSync(TEST_BINARY, outfile);
    fs.chmodSync(outfile, 0o755);
    return;
  }
  const root = process.env[RUN_ENV];
  if (root === undefined) {
    compile(outfile);
    return;
  }
  const binary = runBinary(root);
  try {
    fs.linkSync(binary, outfile);
  } catch {
    fs.copyFileSync(binary, outfile);
    fs.chmodSync(outfile, 0o755);
  }
}
