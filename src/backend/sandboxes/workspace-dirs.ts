// Where a sandbox lives on the host: <dataDir>/sandboxes/<sandbox_id>/ holds its
// workspace (the host directory behind /workspace, 0700, its own file system when it
// has a size), uploads being staged (incoming/), and what its runs keep (executions/,
// processes/). Makes these directories, gives the workspace to the sandbox's uid, and
// maps a sandbox path under /workspace to the host path behind it.

import fs from "node:fs";
import path from "node:path";
import { WORKSPACE } from "../../protocol/types.js";
import { invalidField } from "../refusal.js";
import type { DriverSet, HostIdentity } from "../drivers/index.js";
import { ownedBy } from "../drivers/index.js";

export class SandboxDirs {
  constructor(
    private readonly dataDir: string,
    /** The workspaces of their own size (drivers/limits/workspace-disk.ts). */
    private readonly workspaceDisks: DriverSet["workspaceDisks"],
  ) {}

  sandboxDir(sandboxId: string): string {
    return path.join(this.dataDir, "sandboxes", sandboxId);
  }

  /** The host directory behind /workspace. */
  workspaceDir(sandboxId: string): string {
    return path.join(this.sandboxDir(sandboxId), "workspace");
  }

  /**
   * Where uploads to a sandbox are staged until they are whole (beside the workspace,
   * on the same file system, out of its commands' sight). Created private.
   */
  incomingDir(sandboxId: string): string {
    const dir = path.join(this.sandboxDir(sandboxId), "incoming");
    makePrivateDir(dir);
    return dir;
  }

  /** At start-up: uploads an earlier run was staging never completed; nothing of them was placed. */
  removeStagedUploads(sandboxIds: string[]): void {
    for (const sandboxId of sandboxIds) {
      fs.rmSync(path.join(this.sandboxDir(sandboxId), "incoming"), { recursive: true, force: true });
    }
  }

  /**
   * Makes sure the workspace exists (it may have been removed by hand) and belongs to
   * `identity` (null: the backend's), and returns it.
   */
  ensureWorkspace(sandboxId: string, identity: HostIdentity | null): string {
    const dir = this.workspaceDir(sandboxId);
    makePrivateDir(path.join(this.dataDir, "sandboxes"));
    makePrivateDir(this.sandboxDir(sandboxId));
    makePrivateDir(dir);
    // A workspace of its own size is mounted again after the daemon stopped (workspace-disk.ts).
    if (this.workspaceDisks.has(this.sandboxDir(sandboxId))) {
      this.workspaceDisks.ensure(this.sandboxDir(sandboxId), dir);
      makePrivateDir(dir);
    }
    if (identity !== null && !ownedBy(dir, identity)) fs.chownSync(dir, identity.uid, identity.gid);
    return dir;
  }

  /**
   * The host directory behind `workingDir` (a sandbox path under /workspace), with the
   * workspace itself; makes sure the workspace exists.
   */
  workspaceCwd(sandboxId: string, workingDir: string, identity: HostIdentity | null): WorkspacePlace {
    const workspaceDir = this.ensureWorkspace(sandboxId, identity);
    return { workspaceDir, cwd: path.join(workspaceDir, path.posix.relative(WORKSPACE, workingDir)) };
  }
}

export interface WorkspacePlace {
  workspaceDir: string;
  cwd: string;
}

/**
 * A place's `cwd` made its real path, when it is a directory that exists and, symlinks
 * followed, lies in the workspace. Refuses it (invalid_request) otherwise, naming
 * `workingDir` and the sandbox.
 */
export function existingCwd(place: WorkspacePlace, workingDir: string, sandboxName: string): WorkspacePlace {
  const confined = confineToWorkspace(place.workspaceDir, place.cwd);
  if (confined.problem === "outside") {
    throw invalidField("working_dir", `${workingDir} leads outside ${WORKSPACE} (through a symlink)`);
  }
  if (confined.problem !== null || !isDirectory(confined.cwd)) {
    throw invalidField("working_dir", `${workingDir} does not exist in sandbox ${sandboxName}`);
  }
  return { workspaceDir: place.workspaceDir, cwd: confined.cwd };
}

/**
 * The real path of `cwd` (symlinks followed) when it is the workspace's real path or
 * lies under it; `outside` when it leads elsewhere, `missing` when it cannot be resolved.
 */
export function confineToWorkspace(
  workspaceDir: string,
  cwd: string,
): { cwd: string; problem: null } | { cwd: null; problem: "missing" | "outside" } {
  let realWorkspace: string;
  let realCwd: string;
  try {
    realWorkspace = fs.realpathSync(workspaceDir);
    realCwd = fs.realpathSync(cwd);
  } catch {
    return { cwd: null, problem: "missing" };
  }
  const inside = realCwd === realWorkspace || realCwd.startsWith(`${realWorkspace}${path.sep}`);
  return inside ? { cwd: realCwd, problem: null } : { cwd: null, problem: "outside" };
}

/** Bytes a directory tree takes on disk (allocated blocks) and the entries in it that are not directories, not following symlinks. */
export function diskUsage(dir: string): { bytes: number; files: number } {
  let total = 0;
  let files = 0;
  const walk = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      try {
        total += fs.lstatSync(p).blocks * 512;
      } catch {
        continue;
      }
      if (e.isDirectory()) walk(p);
      else files += 1;
    }
  };
  walk(dir);
  return { bytes: total, files };
}

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function makePrivateDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.chmodSync(dir, 0o700);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}

/**
 * Bytes that can still be written under `dir` (a sandbox's workspace): what its disk has
 * left for unprivileged writers (a workspace limit would bound it too; none is enforced
 * here: drivers/limits/limiter.ts). Null when the disk cannot be asked.
 */
export function freeBytes(dir: string): number | null {
  try {
    const st = fs.statfsSync(dir);
    return st.bavail * st.bsize;
  } catch {
    return null;
  }
}
