// A workspace of its own size (limits.workspace_bytes), made when its sandbox is created:
// its size is fixed then, so a workspace that cannot be made means no sandbox at all.

import { ErrorCodes } from "../../protocol/types.js";
import type { DriverSet, HostIdentity } from "../drivers/index.js";
import { Refusal } from "../refusal.js";

/** Makes the workspace's file system; on failure releases it, calls `undo` (the sandbox goes) and refuses with the reason. */
export function createWorkspaceDisk(
  disks: DriverSet["workspaceDisks"],
  at: { sandboxDir: string; workspaceDir: string; bytes: number; identity: HostIdentity | null; undo: () => void },
): void {
  try {
    disks.create(at.sandboxDir, at.workspaceDir, at.bytes, at.identity);
  } catch (err) {
    disks.release(at.workspaceDir);
    at.undo();
    const reason = (err as Error).message;
    throw new Refusal(ErrorCodes.limitUnavailable, `the workspace limit cannot be set up: ${reason}`, {
      field: "limits.workspace_bytes",
      limit: "workspace",
      reason,
    });
  }
}
