// How to run this same sbx again (to start the daemon in the background). On Node
// that is `node bin/sbx`; a Bun-compiled single binary is just its own executable.
// And how a sandbox's init is started (sandboxInitProgram).

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isCompiledBinary } from "./runtime.js";

export function selfInvocation(): { command: string; args: string[] } {
  const script = process.argv[1];
  if (isCompiledBinary() || script === undefined) return { command: process.execPath, args: [] };
  // `--`: node must not read sbx flags such as --env-file as its own.
  return { command: process.execPath, args: ["--", script] };
}

/**
 * The program a sandbox's init is (docs/drivers.md, "Entering"): the release binary
 * itself (its hidden init verb), or on Node the node executable with the init's own
 * file (`dist/sandbox-init/init.js`, which imports nothing but Node's modules). The
 * backend opens both and bwrap starts them from their descriptors, so neither path
 * needs to exist inside the sandbox. Null `script`: the executable alone is the init.
 */
export function sandboxInitProgram(): { executable: string; script: string | null } {
  if (isCompiledBinary()) return { executable: process.execPath, script: null };
  return { executable: process.execPath, script: initScript() };
}

let foundInitScript: string | undefined;

/** dist/sandbox-init/init.js of this installation: beside this module's build, or the package's dist/. */
function initScript(): string {
  if (foundInitScript !== undefined) return foundInitScript;
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.join(here, "..", "sandbox-init", "init.js")];
  for (let dir = here; ; dir = path.dirname(dir)) {
    candidates.push(path.join(dir, "dist", "sandbox-init", "init.js"));
    if (path.dirname(dir) === dir) break;
  }
  const found = candidates.find((file) => fs.existsSync(file));
  if (found === undefined) {
    throw new Error("the sandbox init (dist/sandbox-init/init.js) is not built: run npm run build");
  }
  foundInitScript = found;
  return found;
}
