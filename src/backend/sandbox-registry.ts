// Sandboxes: rows in backend.db plus a private workspace directory each
// (<dataDir>/sandboxes/<sandbox_id>/workspace, 0700). Resolves the `{id}` of a
// path (an id or a name) and creates `default` on first use.

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ErrorCodes, type Sandbox, type SandboxCreateRequest, WORKSPACE } from "../protocol/types.js";
import { isValidSandboxRef } from "../protocol/validate.js";
import type { BackendStore, SandboxRow } from "./db.js";
import { ApiError, invalidRequest } from "./http.js";

export const DEFAULT_SANDBOX = "default";
/** Names that would read as a route segment. */
const RESERVED_NAMES = ["create"];

export function toSandbox(row: SandboxRow): Sandbox {
  return {
    sandbox_id: row.sandbox_id,
    name: row.name,
    status: row.status,
    isolation: row.isolation,
    network: row.network === 1,
    workspace: WORKSPACE,
    created_at: row.created_at,
  };
}

export class SandboxRegistry {
  constructor(
    private readonly store: BackendStore,
    private readonly dataDir: string,
  ) {}

  sandboxDir(sandboxId: string): string {
    return path.join(this.dataDir, "sandboxes", sandboxId);
  }

  /** The host directory behind /workspace. */
  workspaceDir(sandboxId: string): string {
    return path.join(this.sandboxDir(sandboxId), "workspace");
  }

  /** Finds a sandbox by id or name; `default` is created when first named. Throws 400/404. */
  resolve(ref: string, opts: { createDefault: boolean }): SandboxRow {
    if (!isValidSandboxRef(ref)) throw invalidRequest("sandbox", `invalid sandbox id or name ${JSON.stringify(ref)}`);
    const row = this.store.getSandboxById(ref) ?? this.store.getSandboxByName(ref);
    if (row) return row;
    if (opts.createDefault && ref === DEFAULT_SANDBOX) {
      return this.insert({ name: DEFAULT_SANDBOX, isolation: "none", network: true });
    }
    throw new ApiError(404, ErrorCodes.sandboxNotFound, `no sandbox ${JSON.stringify(ref)}`, { sandbox: ref });
  }

  /** Creates a sandbox from a validated request. Throws 400 (unsupported) and 409 (name taken). */
  create(req: SandboxCreateRequest): SandboxRow {
    const isolation = req.isolation ?? "none";
    const network = req.network ?? true;
    if (isolation === "bwrap") {
      throw invalidRequest("isolation", 'isolation "bwrap" is not available in this backend yet; use "none"');
    }
    if (!network) {
      // Without isolation the network cannot be withheld; refuse rather than pretend.
      throw invalidRequest("network", 'network: false needs isolation "bwrap", which is not available yet');
    }
    if (req.name !== undefined) {
      if (RESERVED_NAMES.includes(req.name) || req.name.startsWith("sbx_")) {
        throw invalidRequest("name", `the name ${JSON.stringify(req.name)} is reserved`);
      }
      if (this.store.getSandboxByName(req.name) || this.store.getSandboxById(req.name)) {
        throw new ApiError(409, ErrorCodes.sandboxExists, `a sandbox named ${JSON.stringify(req.name)} exists`, {
          name: req.name,
        });
      }
    }
    return this.insert({ name: req.name, isolation, network });
  }

  /** Removes a sandbox, its executions, processes and workspace. Throws 409 while anything runs in it. */
  remove(row: SandboxRow): void {
    const running = this.store.countPending(row.sandbox_id);
    if (running > 0) {
      throw new ApiError(
        409,
        ErrorCodes.sandboxBusy,
        `sandbox ${row.name} has ${running} running execution(s); wait for them or cancel them first`,
        { sandbox_id: row.sandbox_id, running },
      );
    }
    const processes = this.store.countUnendedProcesses(row.sandbox_id);
    if (processes > 0) {
      throw new ApiError(
        409,
        ErrorCodes.sandboxBusy,
        `sandbox ${row.name} has ${processes} supervised process(es) not ended; stop them first`,
        { sandbox_id: row.sandbox_id, processes },
      );
    }
    this.store.transaction(() => this.store.deleteSandbox(row.sandbox_id));
    fs.rmSync(this.sandboxDir(row.sandbox_id), { recursive: true, force: true });
  }

  /**
   * The host directory behind `workingDir` (a sandbox path under /workspace), with the
   * workspace itself; makes sure the workspace exists.
   */
  workspaceCwd(sandboxId: string, workingDir: string): { workspaceDir: string; cwd: string } {
    const workspaceDir = this.ensureWorkspace(sandboxId);
    return { workspaceDir, cwd: path.join(workspaceDir, path.posix.relative(WORKSPACE, workingDir)) };
  }

  /**
   * workspaceCwd for a request's `working_dir`, which must be a directory that exists and,
   * symlinks followed, lies in the workspace. `cwd` is its real path. Throws 400.
   */
  existingWorkspaceCwd(sandbox: SandboxRow, workingDir: string): { workspaceDir: string; cwd: string } {
    const place = this.workspaceCwd(sandbox.sandbox_id, workingDir);
    const confined = confineToWorkspace(place.workspaceDir, place.cwd);
    if (confined.problem === "outside") {
      throw invalidRequest("working_dir", `${workingDir} leads outside ${WORKSPACE} (through a symlink)`);
    }
    if (confined.problem !== null || !isDirectory(confined.cwd)) {
      throw invalidRequest("working_dir", `${workingDir} does not exist in sandbox ${sandbox.name}`);
    }
    return { workspaceDir: place.workspaceDir, cwd: confined.cwd };
  }

  /** Makes sure the workspace exists (it may have been removed by hand) and returns it. */
  ensureWorkspace(sandboxId: string): string {
    const dir = this.workspaceDir(sandboxId);
    makePrivateDir(path.join(this.dataDir, "sandboxes"));
    makePrivateDir(this.sandboxDir(sandboxId));
    makePrivateDir(dir);
    return dir;
  }

  private insert(spec: { name: string | undefined; isolation: "none"; network: boolean }): SandboxRow {
    const sandboxId = `sbx_${randomBytes(10).toString("hex")}`;
    const row: SandboxRow = {
      sandbox_id: sandboxId,
      name: spec.name ?? sandboxId,
      status: "ready",
      isolation: spec.isolation,
      network: spec.network ? 1 : 0,
      created_at: new Date().toISOString(),
    };
    this.ensureWorkspace(sandboxId);
    try {
      this.store.transaction(() => this.store.insertSandbox(row));
    } catch (err) {
      fs.rmSync(this.sandboxDir(sandboxId), { recursive: true, force: true });
      throw err;
    }
    return row;
  }
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
