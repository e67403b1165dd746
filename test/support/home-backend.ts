// The embedded backend in this process, where `sbx` run in-process (main()) with
// SBX_HOME=home finds it: on the home's socket, with the home's data directory.
// The CLI then never spawns a daemon. SBX_WIRE_RECORD=DIR records its exchanges there
// (the validating run, test/contract/).

import { type BackendHandle, type BackendOptions, startBackend } from "../../src/backend/backend.js";
import { resolvePaths } from "../../src/config/paths.js";

export async function startHomeBackend(home: string, opts: Partial<BackendOptions> = {}): Promise<BackendHandle> {
  const paths = resolvePaths({ SBX_HOME: home });
  const dir = process.env.SBX_WIRE_RECORD;
  return startBackend({
    dataDir: paths.daemonDir,
    socketPath: paths.socketPath,
    killGraceMs: 1000,
    ...(dir && { wireRecord: dir }),
    ...opts,
  });
}
