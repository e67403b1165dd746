// The release artifact, built for a test: a single binary compiled with Bun from the
// same sources, by the same script as `npm run build:binary`. When SBX_TEST_BINARY
// names one already built (CI runs the end-to-end suite against it), that one is used.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT, TEST_BINARY } from "./cli.js";

export const BUN = path.join(REPO_ROOT, "node_modules", ".bin", "bun");
export const canBuildBinary = fs.existsSync(BUN) || TEST_BINARY !== undefined;

/** Puts the release binary at `outfile`; throws with Bun's output when it fails. */
export function buildReleaseBinary(outfile: string): void {
  if (TEST_BINARY !== undefined) {
    fs.copyFileSync(TEST_BINARY, outfile);
    fs.chmodSync(outfile, 0o755);
    return;
  }
  const built = spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts", "build-binary.mjs"), outfile], {
    encoding: "utf8",
    timeout: 120_000,
  });
  if (built.status !== 0) throw new Error(`bun build failed (${built.status}): ${built.stderr}`);
}
