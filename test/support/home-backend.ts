// The embedded backend in this process, where `sbx` run in-process (main()) with
// SBX_HOME=home finds it: on the home's socket, with the home's data directory.
// The CLI then never spawns a daemon. SBX_WIRE_RECORD=DIR records its exchanges there
// (the validating run, test/contract/).

import { type BackendHandle, type BackendOptions, startBackend } from "../../src/backend/backend.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { resolvePaths } from "../../src/config/paths.js";
import { makeHome, removeHome } from "./cli.js";

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

/** An in-process `sbx` run's exit code and what it wrote. */
export interface HomeSbxResult {
  code: number;
  out: string;
  err: string;
}

/**
 * A fresh home with its embedded backend, and `sbx` run in-process (main()) against it:
 * both gone when the test ends (`onTestFinished`: the backend closed, then the home removed).
 */
export async function homeSbx(
  onTestFinished: (fn: () => Promise<void> | void) => void,
  prefix: string,
  opts: Partial<BackendOptions> = {},
): Promise<{ home: string; backend: BackendHandle; sbx: (argv: string[]) => Promise<HomeSbxResult> }> {
  const home = makeHome(prefix);
  let backend: BackendHandle;
  try {
    backend = await startHomeBackend(home, opts);
  } catch (err) {
    removeHome(home);
    throw err;
  }
  onTestFinished(async () => {
    await backend.close();
    removeHome(home);
  });
  const sbx = async (argv: string[]): Promise<HomeSbxResult> => {
    const io = createBufferIO();
    const code = await main(argv, io, { SBX_HOME: home });
    return { code, out: io.stdoutText(), err: io.stderrText() };
  };
  return { home, backend, sbx };
}
