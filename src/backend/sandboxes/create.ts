// Making a sandbox: from a validated create request (or `default` on first use) to a
// stored row with its workspace, published ports, volumes, image root and workspace
// disk. Refused before anything exists where it can be; a step that fails after the row
// was made undoes the sandbox, so nothing of it stays.

import fs from "node:fs";
import type { SandboxCreateRequest } from "../../protocol/types.js";
import { type DriverSet, type HostIdentity, pickSandboxUid, withDefaults } from "../drivers/index.js";
import { invalidField } from "../refusal.js";
import type { VolumeRegistry } from "../volumes/index.js";
import { imageInfo, makeImageRoot, resolveImage } from "./image-root.js";
import { storedLabels } from "./labels.js";
import { chooseEgress, choosePublished } from "./network.js";
import { type NewSandbox, newSandboxRow } from "./new-row.js";
import type { PublishedPorts, PublishSpec } from "./published.js";
import { checkedLimits, checkNewName, chooseIsolation } from "./settings.js";
import type { SandboxRow, SandboxStore } from "./store.js";
import { createWorkspaceDisk } from "./workspace-disk-create.js";

/** What making a sandbox uses of the registry. */
export interface SandboxMaking {
  store: SandboxStore;
  drivers: DriverSet;
  dataDir: string;
  /** The clock a sandbox's created_at is read from. */
  now: () => number;
  published: PublishedPorts;
  volumes: VolumeRegistry;
  sandboxDir(sandboxId: string): string;
  workspaceDir(sandboxId: string): string;
  identity(row: SandboxRow): HostIdentity | null;
  /** Makes the workspace (owned by the sandbox's uid) and returns it. */
  ensureWorkspace(sandboxId: string, row: SandboxRow): string;
}

/**
 * Creates a sandbox from a validated request. Refuses an isolation or network that
 * cannot be had here, a name that is taken or reserved, and a published port the
 * backend cannot listen on (nothing is created then).
 */
export async function createSandbox(m: SandboxMaking, req: SandboxCreateRequest): Promise<SandboxRow> {
  const { isolation, network, networkMode } = chooseIsolation(m.drivers, req);
  const asked = choosePublished(req, isolation);
  const egress = chooseEgress(req.egress, networkMode);
  if (req.name !== undefined) checkNewName(m.store, req.name);
  const limits = checkedLimits(m.drivers, withDefaults(req.limits), isolation);
  const mounts = req.volumes ?? [];
  if (mounts.length > 0 && isolation !== "bwrap") {
    throw invalidField("volumes", "a sandbox with volumes needs bwrap isolation (bwrap mounts them)");
  }
  m.volumes.check(mounts);
  if (req.image !== undefined && isolation !== "bwrap") {
    throw invalidField("image", "a sandbox from an image needs bwrap isolation (its root is mounted by bwrap)");
  }
  // Pulled (or found) before anything of the sandbox exists: a failed pull leaves nothing.
  const image = req.image === undefined ? null : await resolveImage(m.dataDir, req.image);
  const sandboxId = m.store.db.newId("sandboxes");
  let publish: PublishSpec[] = [];
  try {
    publish = await m.published.open(sandboxId, asked, true);
  } catch (err) {
    throw invalidField("publish", (err as Error).message);
  }
  let row: SandboxRow;
  try {
    row = insertSandbox(m, {
      sandboxId,
      name: req.name,
      isolation,
      network,
      networkMode,
      egress,
      publish,
      limits: req.limits ?? null,
      labels: storedLabels(req.labels),
      idleTimeoutMs: req.idle_timeout_ms ?? null,
      image:
        image === null
          ? null
          : JSON.stringify({
              ...imageInfo(image, req.image!),
              env: image.env,
              workingDir: image.workingDir,
              user: image.user,
            }),
    });
  } catch (err) {
    m.published.close(sandboxId);
    throw err;
  }
  m.volumes.attach(m.sandboxDir(row.sandbox_id), mounts);
  if (image !== null) {
    try {
      await makeImageRoot(m.dataDir, m.sandboxDir(row.sandbox_id), image, m.identity(row), req.image!);
    } catch (err) {
      undoCreate(m, row.sandbox_id);
      throw err;
    }
  }
  if (limits.workspace_bytes !== null) {
    // A workspace of its own size: made now (its size is fixed), or no sandbox at all.
    createWorkspaceDisk(m.drivers.workspaceDisks, {
      sandboxDir: m.sandboxDir(row.sandbox_id),
      workspaceDir: m.workspaceDir(row.sandbox_id),
      bytes: limits.workspace_bytes,
      identity: m.identity(row),
      undo: () => undoCreate(m, row.sandbox_id),
    });
  }
  return row;
}

/** A create that failed after its row was made: nothing of the sandbox stays. */
function undoCreate(m: SandboxMaking, sandboxId: string): void {
  m.published.close(sandboxId);
  m.store.transaction(() => m.store.deleteSandbox(sandboxId));
  fs.rmSync(m.sandboxDir(sandboxId), { recursive: true, force: true });
}

/** Stores a new sandbox's row with a uid of its own, after making its workspace (removed again if the row is not stored). */
export function insertSandbox(
  m: SandboxMaking,
  spec: Omit<NewSandbox, "sandboxId"> & { sandboxId?: string },
): SandboxRow {
  const sandboxId = spec.sandboxId ?? m.store.db.newId("sandboxes");
  const row = newSandboxRow({ ...spec, sandboxId }, m.now(), pickSandboxUid(m.store.sandboxUids()));
  m.ensureWorkspace(sandboxId, row);
  try {
    m.store.transaction(() => m.store.insertSandbox(row));
  } catch (err) {
    fs.rmSync(m.sandboxDir(sandboxId), { recursive: true, force: true });
    throw err;
  }
  return row;
}
