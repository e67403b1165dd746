// Sandboxes: rows in backend.db plus a private workspace directory each
// (<dataDir>/sandboxes/<sandbox_id>/workspace, 0700: workspace-dirs.ts). Resolves the `{id}` of a
// path (an id or a name), creates `default` on first use, and gives each new sandbox
// (create.ts) the isolation, network and limits settings.ts and network.ts choose.
// Each sandbox has a host uid of its own (drivers/identity.ts); when the backend is
// root, its workspace belongs to that uid and its bwrap commands run as it.

import fs from "node:fs";
import type { Duplex } from "node:stream";
import {
  ErrorCodes,
  type Sandbox,
  type SandboxCreateRequest,
  type SandboxDetails,
  type SandboxStats,
  type SandboxUpdateRequest,
} from "../../protocol/types.js";
import { isValidSandboxRef } from "../../protocol/validate.js";
import type { BackendStore } from "../store/index.js";
import { type SandboxRow, SandboxStore } from "./store.js";
import { labelsOf } from "./labels.js";
import { type IdleStop, keepLastStop } from "./idle.js";
import { type LabelRequirement, matchesSelector } from "../../protocol/labels.js";
import { workspaceOwner } from "./workspace-files.js";
import { egressOf, networkModeOf, networkStatus, publishedOf } from "./network.js";
import { PublishedPorts } from "./published.js";
import { connectToPort } from "./connect.js";
import { pauseSandbox, requireUnpaused, withPause } from "./pause.js";
import { sandboxStats } from "./stats.js";
import { toSandbox } from "./sandbox-view.js";
import {
  chooseIsolation,
  isolationUnavailable,
  limitsOf,
  noIsolationWarning,
  updateLimits,
  updateSettings,
} from "./settings.js";
import { createSandbox, insertSandbox, type SandboxMaking } from "./create.js";
import { refuseWhileBusy, type SandboxWork } from "./busy.js";
import * as cwds from "./command-cwd.js";
import { VolumeRegistry } from "../volumes/index.js";
import { diskUsage, SandboxDirs, type WorkspacePlace } from "./workspace-dirs.js";
import { envOf, imageRootOf, type StoredImage } from "./image-root.js";
import type { Owner } from "../../files/handles.js";
import { invalidField, Refusal } from "../refusal.js";
import {
  chownTree,
  type DriverSet,
  type EnvironmentStatus,
  type EnvironmentStopped,
  type HostIdentity,
  hostIdentityOf,
  ownedBy,
  pickSandboxUid,
  type SandboxDriver,
  type SandboxPlacement,
} from "../drivers/index.js";

export const DEFAULT_SANDBOX = "default";

export interface ResolveOptions {
  /** Create `default` when it is named and does not exist yet. */
  createDefault: boolean;
  /** Told once, when `default` was just created without isolation. */
  warn?: (message: string) => void;
}

export class SandboxRegistry {
  private readonly store: SandboxStore;
  /** The backend's listeners for the sandboxes' published ports. */
  private readonly published: PublishedPorts;
  /** Where each sandbox lives on the host. */
  private readonly dirs: SandboxDirs;
  /** Idle stop (idle.ts), told of connections and asked for `show`; wired by the backend. */
  private idle: IdleStop | null = null;
  /** The named volumes sandboxes mount (volumes/registry.ts). */
  readonly volumes: VolumeRegistry;
  /** What making a sandbox uses (create.ts). */
  private readonly making: SandboxMaking;

  constructor(
    store: BackendStore,
    dataDir: string,
    private readonly drivers: DriverSet,
    /** The clock a sandbox's created_at is read from. */
    private readonly now: () => number,
    /** Whether the backend runs as root (then each sandbox's commands run as its own uid): the wiring's DriverHost says. */
    private readonly asRoot: boolean,
    log: (line: string) => void = () => {},
  ) {
    this.store = new SandboxStore(store);
    this.dirs = new SandboxDirs(dataDir, drivers.workspaceDisks);
    this.volumes = new VolumeRegistry({
      dataDir,
      asRoot,
      now,
      path: process.env.PATH ?? "",
      disks: drivers.workspaceDisks,
      takenIds: () => this.store.sandboxUids(),
      sandboxes: () =>
        this.store
          .listSandboxes()
          .map((r) => ({ sandboxId: r.sandbox_id, name: r.name, dir: this.sandboxDir(r.sandbox_id) })),
    });
    this.published = new PublishedPorts(
      (sandboxId, port) => this.connectInside(sandboxId, port),
      log,
      (sandboxId) => this.store.getSandboxById(sandboxId)?.name ?? sandboxId,
    );
    this.making = {
      store: this.store,
      drivers,
      dataDir,
      now,
      published: this.published,
      volumes: this.volumes,
      sandboxDir: (sandboxId) => this.sandboxDir(sandboxId),
      workspaceDir: (sandboxId) => this.workspaceDir(sandboxId),
      identity: (row) => this.identity(row),
      ensureWorkspace: (sandboxId, row) => this.ensureWorkspace(sandboxId, row),
    };
  }

  /** At start-up: listens on every sandbox's published ports (one that cannot be had is said, and shown). */
  async openPublishedPorts(): Promise<void> {
    for (const row of this.store.listSandboxes()) {
      const specs = publishedOf(row);
      if (specs.length > 0) await this.published.open(row.sandbox_id, specs, false);
    }
  }

  /** The backend closes: no more listening. */
  closePublishedPorts(): void {
    this.published.closeAll();
  }

  /** A connection to a port on a sandbox's loopback, when its environment runs. */
  private connectInside(sandboxId: string, port: number): Promise<Duplex> {
    const row = this.store.getSandboxById(sandboxId);
    if (row === undefined) return Promise.reject(new Error("the sandbox cannot take connections"));
    return this.connect(row, port);
  }

  /**
   * A connection to `port` on the sandbox's own loopback (a published port, a port
   * forward); never starts its environment. Refused as connect.ts says.
   */
  async connect(row: SandboxRow, port: number): Promise<Duplex> {
    const ref = { sandboxId: row.sandbox_id, name: row.name };
    const conn = await connectToPort(this.driver(row), this.placement(row), ref, port);
    this.idle?.connected(row.sandbox_id, conn);
    return conn;
  }

  /** Its environment as `show` says it ("paused" while frozen, so idle stop leaves it alone); null: none. */
  environment(row: SandboxRow): EnvironmentStatus | null {
    return withPause(
      this.driver(row).environment?.(this.placement(row)) ?? null,
      this.drivers.limits.frozen(row.sandbox_id),
    );
  }

  /** Idle stop: told of each connection, and says each sandbox's idle status. */
  watchIdle(idle: IdleStop): void {
    this.idle = idle;
  }

  /** The sandbox with this id, or undefined. */
  byId(sandboxId: string): SandboxRow | undefined {
    return this.store.getSandboxById(sandboxId);
  }

  /** Every sandbox's row, oldest first. */
  rows(): SandboxRow[] {
    return this.store.listSandboxes();
  }

  /**
   * Who what the backend writes into this workspace belongs to: its owner when the
   * backend runs as root and the workspace is another user's (workspace-files.ts).
   */
  workspaceOwner(workspaceDir: string): Owner | null {
    return workspaceOwner(workspaceDir, this.asRoot);
  }

  /** Where a sandbox's commands run, and as whom. */
  placement(row: SandboxRow): SandboxPlacement {
    return {
      sandboxId: row.sandbox_id,
      workspaceDir: this.workspaceDir(row.sandbox_id),
      network: networkModeOf(row),
      identity: this.identity(row),
      limits: limitsOf(row),
      rootDir: row.image === null ? null : imageRootOf(this.sandboxDir(row.sandbox_id)),
      imageEnv: row.image === null ? {} : envOf((JSON.parse(row.image) as StoredImage).env),
      // Read at each connection through its proxy: a changed policy applies to the next one.
      egressPolicy: () => egressOf(this.store.getSandboxById(row.sandbox_id)),
      volumes: this.volumes.placed(this.sandboxDir(row.sandbox_id)),
    };
  }

  /** The host uid and gid a sandbox's commands run as and its workspace belongs to; null: the backend's. */
  identity(row: SandboxRow): HostIdentity | null {
    return row.isolation === "bwrap" ? hostIdentityOf(row.uid, this.asRoot) : null;
  }

  /**
   * At start-up: sandboxes made before sandboxes had uids get one, and (as root) the
   * workspaces of bwrap sandboxes are given to their uid where they are not yet.
   */
  assignIdentities(): void {
    for (const row of this.store.listSandboxes()) {
      let uid = row.uid;
      if (uid === null) {
        uid = pickSandboxUid(this.store.sandboxUids());
        const chosen = uid;
        this.store.transaction(() => this.store.setSandboxUid(row.sandbox_id, chosen));
      }
      const identity = this.identity({ ...row, uid });
      const dir = this.workspaceDir(row.sandbox_id);
      if (identity !== null && fs.existsSync(dir) && !ownedBy(dir, identity)) chownTree(dir, identity);
    }
  }

  driver(row: SandboxRow): SandboxDriver {
    return this.drivers.driver(row.isolation);
  }

  /**
   * Refuses (isolation_unavailable) when the sandbox's driver cannot run commands on this
   * backend, and (sandbox_paused) while it is paused (pause.ts).
   */
  requireRunnable(row: SandboxRow): void {
    const probe = this.drivers.probe(row.isolation);
    if (!probe.available) throw isolationUnavailable(row.isolation, `sandbox ${row.name}: ${probe.reason}`);
    requireUnpaused(this.drivers.limits, row);
  }

  /** Freezes every process of the sandbox (pause.ts); refused saying why it cannot be. */
  async pause(row: SandboxRow): Promise<void> {
    const target = { name: row.name, sandboxId: row.sandbox_id, isolation: row.isolation };
    await pauseSandbox(this.drivers.limits, { ...target, driver: this.driver(row), placement: this.placement(row) });
  }

  /** Thaws the sandbox's processes (nothing when it is not paused). */
  resume(row: SandboxRow): void {
    this.drivers.limits.thaw(row.sandbox_id);
  }

  /** The sandbox with its driver, host workspace and (when asked) its size on disk. */
  details(row: SandboxRow, usage: boolean): SandboxDetails {
    const placement = this.placement(row);
    const probe = this.drivers.probe(row.isolation);
    const used = usage ? diskUsage(placement.workspaceDir) : null;
    return {
      ...toSandbox(row),
      volumes: this.volumes.mountsOf(this.sandboxDir(row.sandbox_id)),
      host_workspace: placement.workspaceDir,
      workspace_bytes: used?.bytes ?? null,
      workspace_files: used?.files ?? null,
      driver: { ...this.driver(row).describe(placement), available: probe.available, reason: probe.reason },
      limit_status: this.drivers.limits.sandboxStatus(placement.limits, row.isolation),
      network_status: networkStatus(networkModeOf(row), this.drivers.userNetwork),
      published: this.published.list(row.sandbox_id, publishedOf(row)),
      environment: this.environment(row),
      ...(this.idle === null ? {} : { idle: this.idle.status(row) }),
    };
  }

  /** What the sandbox uses now (stats.ts): its cgroup's counters, /tmp, workspace and network. */
  stats(row: SandboxRow): SandboxStats {
    const placement = this.placement(row);
    const env = this.driver(row).environment?.(placement) ?? null;
    return sandboxStats({
      sandboxId: row.sandbox_id,
      name: row.name,
      state: env?.state ?? "none",
      initPid: env?.init_pid ?? null,
      limits: placement.limits,
      network: placement.network,
      workspaceDir: placement.workspaceDir,
      places: this.drivers.limits.measuredPlaces(row.sandbox_id),
      now: new Date(),
    });
  }

  /**
   * Starts the sandbox's live environment when its driver keeps one and it is not
   * running (docs/drivers.md, "One sandbox, one environment"). Refused
   * (sandbox_start_failed, nothing ran) saying why it could not start.
   */
  async startEnvironment(row: SandboxRow): Promise<void> {
    const driver = this.driver(row);
    if (driver.start === undefined) return;
    this.requireRunnable(row);
    try {
      await driver.start(this.placement(row));
    } catch (err) {
      const cause = (err as Error).message;
      throw new Refusal(ErrorCodes.sandboxStartFailed, `the sandbox could not be set up: ${cause}`, { cause });
    }
  }

  /** Ends the connections joined to the sandbox's ports (published, forwarded), saying why. */
  disconnect(row: SandboxRow, why: string): void {
    this.driver(row).disconnect?.(this.placement(row), why);
  }

  /**
   * Ends the sandbox's live environment and what is left in it; says what that was.
   * A stop that ended a running environment is kept on the sandbox (last_stop, with why).
   */
  async stopEnvironment(row: SandboxRow, reason: "idle" | "requested" = "requested"): Promise<EnvironmentStopped> {
    this.resume(row);
    const stopped = (await this.driver(row).stop?.(this.placement(row))) ?? { was_running: false, ended: [] };
    if (stopped.was_running) keepLastStop(this.store, row.sandbox_id, this.now(), reason);
    return stopped;
  }

  sandboxDir(sandboxId: string): string {
    return this.dirs.sandboxDir(sandboxId);
  }

  /** Where uploads to a sandbox are staged until they are whole (workspace-dirs.ts). */
  incomingDir(sandboxId: string): string {
    return this.dirs.incomingDir(sandboxId);
  }

  /** Every sandbox whose labels satisfy the selector (all of it), as the wire shows it. */
  list(selector: readonly LabelRequirement[] = []): Sandbox[] {
    return this.store
      .listSandboxes()
      .filter((row) => matchesSelector(labelsOf(row), selector))
      .map((row) => this.withPorts(row));
  }

  /** The sandbox as listed: with its published ports, as bound and whether listened on now. */
  withPorts(row: SandboxRow): Sandbox {
    return {
      ...toSandbox(row),
      ...(this.drivers.limits.frozen(row.sandbox_id) && { status: "paused" }),
      volumes: this.volumes.mountsOf(this.sandboxDir(row.sandbox_id)),
      published: this.published.list(row.sandbox_id, publishedOf(row)),
    };
  }

  /** At start-up: uploads an earlier run was staging never completed; nothing of them was placed. */
  removeStagedUploads(): void {
    this.dirs.removeStagedUploads(this.store.listSandboxes().map((row) => row.sandbox_id));
  }

  /** The host directory behind /workspace. */
  workspaceDir(sandboxId: string): string {
    return this.dirs.workspaceDir(sandboxId);
  }

  /** Finds a sandbox by id or name; `default` is created when first named. Refuses a bad ref, or one that names nothing. */
  resolve(ref: string, opts: ResolveOptions): SandboxRow {
    if (!isValidSandboxRef(ref)) throw invalidField("sandbox", `invalid sandbox id or name ${JSON.stringify(ref)}`);
    const row = this.store.getSandboxById(ref) ?? this.store.getSandboxByName(ref);
    if (row) return row;
    if (opts.createDefault && ref === DEFAULT_SANDBOX) {
      const created = insertSandbox(this.making, { name: DEFAULT_SANDBOX, ...chooseIsolation(this.drivers, {}) });
      if (created.isolation === "none")
        opts.warn?.(noIsolationWarning(created.name, this.drivers.probe("bwrap").reason));
      return created;
    }
    throw new Refusal(ErrorCodes.sandboxNotFound, `no sandbox ${JSON.stringify(ref)}`, { sandbox: ref });
  }

  /** Creates a sandbox from a validated request (create.ts); refused with nothing made where it cannot be. */
  create(req: SandboxCreateRequest): Promise<SandboxRow> {
    return createSandbox(this.making, req);
  }

  /**
   * Changes a sandbox's labels (a label not named stays, null removes one) and limits (a
   * missing field stays, null lifts it); what runs in it now gets the limits where the
   * mechanism allows (cgroups), the next run gets every one.
   */
  update(row: SandboxRow, req: SandboxUpdateRequest): SandboxRow {
    const updated = updateSettings(this.store, row, req);
    return req.limits === undefined ? updated : updateLimits(this.store, this.drivers, updated, req.limits);
  }

  /**
   * Removes a sandbox, its executions, processes and workspace. Refused (sandbox_busy)
   * while anything runs in it: `work` is what its domains say still runs.
   */
  remove(row: SandboxRow, work: SandboxWork): void {
    refuseWhileBusy(row, work);
    this.store.transaction(() => this.store.deleteSandbox(row.sandbox_id));
    this.published.close(row.sandbox_id);
    this.driver(row).release?.(this.placement(row));
    this.drivers.limits.release(row.sandbox_id);
    this.drivers.workspaceDisks.release(this.workspaceDir(row.sandbox_id));
    fs.rmSync(this.sandboxDir(row.sandbox_id), { recursive: true, force: true });
  }

  /**
   * The host directory behind `workingDir` (a sandbox path under /workspace), with the
   * workspace itself; makes sure the workspace exists.
   */
  workspaceCwd(sandboxId: string, workingDir: string): WorkspacePlace {
    const row = this.store.getSandboxById(sandboxId);
    return this.dirs.workspaceCwd(sandboxId, workingDir, row ? this.identity(row) : null);
  }

  /** Where a request's command starts (command-cwd.ts): `cwd` is the host path; refused when it is not a directory there. */
  requestCwd(sandbox: SandboxRow, requested: string | undefined): { workingDir: string; cwd: string } {
    return cwds.requestCwd(this, sandbox, requested);
  }

  /** Where a supervised process's next run starts, unchecked (it starts there, or says why not). */
  runCwd(sandbox: SandboxRow, workingDir: string): string {
    return cwds.runCwd(this, sandbox, workingDir);
  }

  /**
   * Makes sure the workspace exists (it may have been removed by hand) and belongs to
   * the sandbox's uid, and returns it.
   */
  ensureWorkspace(sandboxId: string, row = this.store.getSandboxById(sandboxId)): string {
    return this.dirs.ensureWorkspace(sandboxId, row ? this.identity(row) : null);
  }
}
