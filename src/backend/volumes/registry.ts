// Named volumes (docs/operations.md, "Named volumes"): a directory the backend owns,
// <data dir>/volumes/<name>/data, that sandboxes mount at a path of their choosing
// (bwrap binds it; read-only where asked). Its record is a small JSON file beside the
// directory (volume.json, written whole and renamed into place); which sandboxes mount
// what is each sandbox's own volumes.json, written once when it is created. Files, not
// backend.db tables: a volume is a directory first, and its record goes with it.
//
// Ownership, when the backend is root and every sandbox runs as a host uid of its own
// (drivers/identity.ts): a volume gets a group of its own (a gid from the same reserved
// range, never a sandbox's uid); its directory is root:<gid>, mode 2770 (setgid: what is
// made in it belongs to that group), with a default ACL that gives the group rwx on
// everything made below it whatever the creator's umask. Each sandbox that mounts it
// runs with that gid as a supplementary group (setpriv, through the gate): two sandboxes
// with different uids both read and write what the other made, and nothing else of
// either. When the backend is not root, every sandbox runs as the backend's user, who
// owns the directory (0700): nothing to share.
//
// A volume with a size (--size) is a file system of its own, as a workspace with a disk
// limit is (drivers/limits/workspace-disk.ts): an ext4 image, <name>/workspace.img,
// loop-mounted at <name>/disk, its files in disk/data and uploads staged in disk/incoming
// (one file system: an upload is renamed into place). A write past it fails with ENOSPC
// in every sandbox that mounts it. Where that cannot be had (not root, no loop devices,
// no mkfs.ext4), a size is refused with the reason and nothing is created.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ErrorCodes, type Volume, type VolumeMount } from "../../protocol/types.js";
import { volumeNameProblem } from "../../protocol/volumes.js";
import type { Owner } from "../../files/handles.js";
import { type DriverSet, pickSandboxUid } from "../drivers/index.js";
import { invalidField, Refusal } from "../refusal.js";

interface VolumeRecord {
  name: string;
  created_at: string;
  gid: number | null;
  /** Its size: a file system of its own (absent or null: none, the disk it lives on). */
  size_bytes?: number | null;
}

/** The smallest size a volume may have (as a workspace's: ext4 takes its own blocks of it). */
export const VOLUME_MIN_BYTES = 16 * 1024 * 1024;

/** A volume as a sandbox's run needs it: where it is on the host, where inside, and the group that reaches it. */
export interface PlacedVolume {
  hostDir: string;
  path: string;
  readOnly: boolean;
  gid: number | null;
}

const RECORD = "volume.json";
const SANDBOX_MOUNTS = "volumes.json";

export interface VolumeRegistryOptions {
  dataDir: string;
  asRoot: boolean;
  now: () => number;
  /** The uids and gids taken already (the sandboxes'): a volume's gid is none of them. */
  takenIds: () => Set<number>;
  /** Each sandbox: its id, name and directory (to read what it mounts). */
  sandboxes: () => Array<{ sandboxId: string; name: string; dir: string }>;
  /** PATH to find setfacl on. */
  path: string;
  /** Loop-mounted file systems of a fixed size (a volume's --size). */
  disks: DriverSet["workspaceDisks"];
}

export class VolumeRegistry {
  private readonly root: string;

  constructor(private readonly opts: VolumeRegistryOptions) {
    this.root = path.join(opts.dataDir, "volumes");
  }

  /** Why volumes cannot be shared between sandboxes' uids here, or null. */
  problem(): string | null {
    if (!this.opts.asRoot) return null;
    return this.setfacl() === null
      ? "sharing a volume between sandboxes' own uids needs setfacl (Debian package acl) for its default ACL"
      : null;
  }

  /** How the sandboxes' uids share a volume here, in a few words. */
  ownership(gid: number | null): string {
    return gid === null
      ? "the daemon's user (every sandbox runs as it)"
      : `group ${gid} of its own, setgid, default ACL group rwx; every sandbox that mounts it has that group`;
  }

  create(name: string, sizeBytes: number | null = null): VolumeRecord {
    const bad = volumeNameProblem(name);
    if (bad !== null) throw invalidField("name", bad);
    if (sizeBytes !== null && !(Number.isSafeInteger(sizeBytes) && sizeBytes >= VOLUME_MIN_BYTES)) {
      throw invalidField(
        "size_bytes",
        `a volume's size is a whole number of bytes, at least ${VOLUME_MIN_BYTES} (16 MiB)`,
      );
    }
    const dir = path.join(this.root, name);
    if (fs.existsSync(path.join(dir, RECORD))) {
      throw new Refusal(ErrorCodes.volumeExists, `a volume named ${JSON.stringify(name)} exists`, { volume: name });
    }
    const problem = this.problem();
    if (problem !== null) throw new Refusal(ErrorCodes.limitUnavailable, problem, { limit: "volume", reason: problem });
    const sizeProblem = sizeBytes === null ? null : this.opts.disks.problem;
    if (sizeProblem !== null) {
      const reason = `a volume's size is a file system of its own: ${sizeProblem.replace(/^a workspace limit (is|needs)/, "it needs")}`;
      throw new Refusal(ErrorCodes.limitUnavailable, `no volume was created: ${reason}`, {
        field: "size_bytes",
        limit: "volume_size",
        reason,
      });
    }
    fs.mkdirSync(this.root, { recursive: true, mode: 0o700 });
    this.release(name);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { mode: 0o700 });
    const taken = new Set([...this.opts.takenIds(), ...this.records().map((r) => r.gid ?? -1)]);
    const record: VolumeRecord = {
      name,
      created_at: new Date(this.opts.now()).toISOString(),
      gid: this.opts.asRoot ? pickSandboxUid(taken) : null,
      size_bytes: sizeBytes,
    };
    const { data, mount } = this.layout(record);
    try {
      if (mount !== null) {
        try {
          this.opts.disks.create(dir, mount, sizeBytes!, null);
        } catch (err) {
          const reason = `its file system could not be made: ${(err as Error).message}`;
          throw new Refusal(ErrorCodes.limitUnavailable, `no volume was created: ${reason}`, {
            field: "size_bytes",
            limit: "volume_size",
            reason,
          });
        }
      }
      fs.mkdirSync(data, { mode: 0o700 });
      if (record.gid !== null) this.share(data, record.gid);
      const tmp = path.join(dir, `${RECORD}.tmp`);
      fs.writeFileSync(tmp, JSON.stringify(record), { mode: 0o600 });
      fs.renameSync(tmp, path.join(dir, RECORD));
    } catch (err) {
      this.release(name);
      fs.rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    return record;
  }

  /** The volume by name; refused (volume_not_found) when there is none. */
  get(name: string): VolumeRecord {
    const record = volumeNameProblem(name) === null ? this.read(name) : null;
    if (record === null) {
      throw new Refusal(ErrorCodes.volumeNotFound, `no volume ${JSON.stringify(name)}`, { volume: name });
    }
    return record;
  }

  /** Every volume, by name. */
  records(): VolumeRecord[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.root).sort();
    } catch {
      return [];
    }
    return names.map((n) => this.read(n)).filter((r): r is VolumeRecord => r !== null);
  }

  /** The volume as the wire shows it. */
  toVolume(record: VolumeRecord, showPath: boolean): Volume {
    return {
      name: record.name,
      created_at: record.created_at,
      used_by: this.usedBy(record.name),
      ownership: this.ownership(record.gid),
      gid: record.gid,
      host_path: showPath ? this.layout(record).data : null,
      size_bytes: record.size_bytes ?? null,
      free_bytes: this.freeBytes(record),
    };
  }

  /** Removes a volume and its files; refused (volume_in_use) while a sandbox mounts it, naming them. */
  remove(name: string): VolumeRecord {
    const record = this.get(name);
    const users = this.usedBy(name);
    if (users.length > 0) {
      throw new Refusal(
        ErrorCodes.volumeInUse,
        `volume ${name} is mounted by sandbox(es) ${users.join(", ")}; remove them first (sbx sandbox rm ${users[0]})`,
        { volume: name, sandboxes: users },
      );
    }
    this.release(name);
    fs.rmSync(path.join(this.root, name), { recursive: true, force: true });
    return record;
  }

  /** Checks that every mount names a volume (refused, volume_not_found, otherwise). */
  check(mounts: readonly VolumeMount[]): void {
    for (const m of mounts) this.get(m.name);
  }

  /** Records what a new sandbox mounts (in its directory). */
  attach(sandboxDir: string, mounts: readonly VolumeMount[]): void {
    if (mounts.length === 0) return;
    const tmp = path.join(sandboxDir, `${SANDBOX_MOUNTS}.tmp`);
    fs.writeFileSync(tmp, JSON.stringify(mounts), { mode: 0o600 });
    fs.renameSync(tmp, path.join(sandboxDir, SANDBOX_MOUNTS));
  }

  /** What a sandbox mounts, as recorded at its create ([] for none). */
  mountsOf(sandboxDir: string): VolumeMount[] {
    try {
      return JSON.parse(fs.readFileSync(path.join(sandboxDir, SANDBOX_MOUNTS), "utf8")) as VolumeMount[];
    } catch {
      return [];
    }
  }

  /** A sandbox's mounts with their host directories and groups (a volume removed by hand is left out). */
  placed(sandboxDir: string): PlacedVolume[] {
    return this.mountsOf(sandboxDir).flatMap((m) => {
      const record = this.read(m.name);
      if (record === null) return [];
      return [{ hostDir: this.ready(record).data, path: m.path, readOnly: m.read_only === true, gid: record.gid }];
    });
  }

  /** Names of the sandboxes that mount a volume. */
  usedBy(name: string): string[] {
    return this.opts
      .sandboxes()
      .filter((s) => this.mountsOf(s.dir).some((m) => m.name === name))
      .map((s) => s.name);
  }

  /**
   * Where `sbx cp` reads and writes a volume: its directory, a staging directory beside
   * it (the same file system, so an upload is renamed into place whole; with the same
   * group and default ACL, so what is staged is already the group's), and who what is
   * written belongs to (root and the volume's group; null: the backend's user).
   */
  files(name: string): { dir: string; incoming: string; owner: Owner | null } {
    const record = this.get(name);
    const { data, incoming } = this.ready(record);
    fs.mkdirSync(incoming, { recursive: true, mode: 0o700 });
    if (record.gid !== null) this.share(incoming, record.gid);
    return { dir: data, incoming, owner: record.gid === null ? null : { uid: 0, gid: record.gid } };
  }

  /** Where a volume's files are, where uploads are staged, and (with a size) where its file system is mounted. */
  private layout(record: VolumeRecord): { data: string; incoming: string; mount: string | null } {
    const dir = path.join(this.root, record.name);
    if (record.size_bytes == null)
      return { data: path.join(dir, "data"), incoming: path.join(dir, "incoming"), mount: null };
    const mount = path.join(dir, "disk");
    return { data: path.join(mount, "data"), incoming: path.join(mount, "incoming"), mount };
  }

  /** The layout, its file system mounted first where it has one (after a restart of the host or the daemon). */
  private ready(record: VolumeRecord): { data: string; incoming: string } {
    const at = this.layout(record);
    if (at.mount !== null) this.opts.disks.ensure(path.join(this.root, record.name), at.mount);
    return at;
  }

  /** Bytes left on a sized volume's own file system (as df says); null without a size or when it is not mounted. */
  private freeBytes(record: VolumeRecord): number | null {
    const { mount } = this.layout(record);
    if (mount === null) return null;
    try {
      this.ready(record);
      const st = fs.statfsSync(mount);
      return st.bavail * st.bsize;
    } catch {
      return null;
    }
  }

  /** Unmounts a volume's file system, if it has one mounted. */
  private release(name: string): void {
    this.opts.disks.release(path.join(this.root, name, "disk"));
  }

  private read(name: string): VolumeRecord | null {
    try {
      const record = JSON.parse(fs.readFileSync(path.join(this.root, name, RECORD), "utf8")) as VolumeRecord;
      return record.name === name ? record : null;
    } catch {
      return null;
    }
  }

  /** root:gid, 2770, and a default ACL giving the group rwx on all that is made below. */
  private share(dir: string, gid: number): void {
    fs.chownSync(dir, 0, gid);
    fs.chmodSync(dir, 0o2770);
    const setfacl = this.setfacl();
    if (setfacl === null) throw new Error("setfacl is not installed (Debian package acl)");
    const acl = `g:${gid}:rwx,m::rwx,d:u::rwx,d:g::rwx,d:g:${gid}:rwx,d:m::rwx,d:o::---`;
    const done = spawnSync(setfacl, ["-m", acl, dir], { encoding: "utf8", env: {} });
    if (done.status !== 0) {
      throw new Error(`cannot give the volume's group its default ACL: ${(done.stderr || String(done.error)).trim()}`);
    }
  }

  private setfacl(): string | null {
    for (const dir of `${this.opts.path}:/usr/bin:/bin:/usr/sbin:/sbin`.split(":")) {
      if (dir !== "" && fs.existsSync(path.join(dir, "setfacl"))) return path.join(dir, "setfacl");
    }
    return null;
  }
}
