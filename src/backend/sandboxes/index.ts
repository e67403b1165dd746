// Sandboxes: the registry and workspace files. What the rest of the backend may use of
// them; everything else in this folder is their own.

export { SandboxRegistry } from "./registry.js";
export { egressReport } from "./egress-report.js";
export { toSandbox } from "./sandbox-view.js";
export { IDLE_SWEEP_MS, IdleStop } from "./idle.js";
export { storedImageOf } from "./image-root.js";
export { noIsolationWarning } from "./settings.js";
export { confineToWorkspace, freeBytes } from "./workspace-dirs.js";
export type { SandboxRow } from "./store.js";
export {
  type FileRoot,
  openForReading,
  placeFile,
  placeTree,
  sandboxPath,
  SHARED_DIR_MODE,
  statInWorkspace,
  uploadTarget,
  WorkspacePathError,
  workspaceRefusal,
  workspaceRoot,
} from "./workspace-files.js";
