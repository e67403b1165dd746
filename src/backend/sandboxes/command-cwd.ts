// Where a command starts in a sandbox (docs/images.md): a directory under /workspace
// (its host path in the sandbox's workspace) or, in a sandbox from an image, anywhere
// in the image's root; a request that names none starts at the image's WorkingDir,
// else /workspace.

import path from "node:path";
import { WORKSPACE } from "../../protocol/types.js";
import { resolveWorkingDir } from "../../protocol/validate.js";
import { imageRootOf, imageWorkingDir, rootCwd } from "./image-root.js";
import type { SandboxRow } from "./store.js";
import { existingCwd, type WorkspacePlace } from "./workspace-dirs.js";

/** What finding a command's directory uses of the registry. */
export interface CwdPlaces {
  sandboxDir(sandboxId: string): string;
  /** The host directory behind a path under /workspace; makes sure the workspace exists. */
  workspaceCwd(sandboxId: string, workingDir: string): WorkspacePlace;
}

/** Whether the directory lies in an image sandbox's root rather than its workspace. */
function inImageRoot(sandbox: SandboxRow, workingDir: string): boolean {
  return sandbox.image !== null && workingDir !== WORKSPACE && !workingDir.startsWith(`${WORKSPACE}/`);
}

/**
 * Where a request's command starts: `requested` (under /workspace, a directory that
 * exists and, symlinks followed, lies in the workspace), else the image's WorkingDir,
 * else /workspace. `cwd` is the host path. Refused (invalid_request) otherwise.
 */
export function requestCwd(
  places: CwdPlaces,
  sandbox: SandboxRow,
  requested: string | undefined,
): { workingDir: string; cwd: string } {
  const fromImage = requested === undefined || requested === "" ? imageWorkingDir(sandbox) : null;
  const workingDir = fromImage ?? resolveWorkingDir(requested)!;
  return { workingDir, cwd: commandCwd(places, sandbox, workingDir) };
}

/** commandCwd without the checks, for a supervised process's next run (it starts there, or says why not). */
export function runCwd(places: CwdPlaces, sandbox: SandboxRow, workingDir: string): string {
  if (inImageRoot(sandbox, workingDir)) {
    return path.join(imageRootOf(places.sandboxDir(sandbox.sandbox_id)), workingDir);
  }
  return places.workspaceCwd(sandbox.sandbox_id, workingDir).cwd;
}

/** The host path behind a command's working directory: under /workspace, or in an image sandbox's root. */
function commandCwd(places: CwdPlaces, sandbox: SandboxRow, workingDir: string): string {
  if (inImageRoot(sandbox, workingDir)) {
    return rootCwd(imageRootOf(places.sandboxDir(sandbox.sandbox_id)), workingDir, sandbox.name);
  }
  const place = places.workspaceCwd(sandbox.sandbox_id, workingDir);
  return existingCwd(place, workingDir, sandbox.name).cwd;
}
