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

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ErrorCodes, type Volume, type VolumeMount } from "../../protocol/types.js";
import { volumeNameProblem } from "../../protocol/volumes.js";
import type { Owner } from "../../files/handles.js";
import { pickSandboxUid } from "../drivers/index.js";
import { invalidField, Refusal } from "../refusal.js";

interface VolumeRecord {
  name: string;
  created_at: string;
  gid: number | null;
}

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

  create(name: string): VolumeRecord {
    const bad = volumeNameProblem(name);
    if (bad !== null) throw invalidField("name", bad);
    const dir = path.join(this.root, name);
    if (fs.existsSync(path.join(dir, RECORD))) {
      throw new Refusal(ErrorCodes.volumeExists, `a volume named ${JSON.stringify(name)} exists`, { volume: name });
    }
    const problem = this.problem();
    if (problem !== null) throw new Refusal(ErrorCodes.limitUnavailable, problem, { limit: "volume", reason: problem });
    fs.mkdirSync(this.root, { recursive: true, mode: 0o700 });
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(path.join(dir, "data"), { recursive: true, mode: 0o700 });
    const taken = new Set([...this.opts.takenIds(), ...this.records().map((r) => r.gid ?? -1)]);
    const record: VolumeRecord = {
      name,
      created_at: new Date(this.opts.now()).toISOString(),
      gid: this.opts.asRoot ? pickSandboxUid(taken) : null,
    };
    try {
      if (record.gid !== null) this.share(path.join(dir, "data"), record.gid);
      const tmp = path.join(dir, `${RECORD}.tmp`);
      fs.writeFileSync(tmp, JSON.stringify(record), { mode: 0o600 });
      fs.renameSync(tmp, path.join(dir, RECORD));
    } catch (err) {
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
      host_path: showPath ? this.dataDir(record.name) : null,
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
      return [{ hostDir: this.dataDir(m.name), path: m.path, readOnly: m.read_only === true, gid: record.gid }];
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
    const incoming = path.join(this.root, name, "incoming");
    fs.mkdirSync(incoming, { recursive: true, mode: 0o700 });
    if (record.gid !== null) this.share(incoming, record.gid);
    return { dir: this.dataDir(name), incoming, owner: record.gid === null ? null : { uid: 0, gid: record.gid } };
  }

  dataDir(name: string): string {
    return path.join(this.root, name, "data");
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
