// The release artifact, built for a test: a single binary compiled with Bun from the
// same sources (as `npm run build:binary` does).

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./cli.js";

export const BUN = path.join(REPO_ROOT, "node_modules", ".bin", "bun");
export const canBuildBinary = fs.existsSync(BUN);

/** Compiles src/cli/entry.ts into `outfile`; throws with Bun's output when it fails. */
export function buildReleaseBinary(outfile: string): void {
  const built = spawnSync(
    BUN,
    [
      "build",
      "--compile",
      "--external",
      "better-sqlite3",
      "--outfile",
      outfile,
      path.join(REPO_ROOT, "src/cli/entry.ts"),
    ],
    { encoding: "utf8", timeout: 120_000 },
  );
  if (built.status !== 0) throw new Error(`bun build failed (${built.status}): ${built.stderr}`);
}
