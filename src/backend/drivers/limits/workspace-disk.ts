// The workspace limit where the file system allows it (docs/drivers.md, "Limits"): a
// workspace with a disk limit is a file system of its own — an ext4 image whose usable space is that size
// beside it (`workspace.img` in the sandbox's directory), loop-mounted at the workspace
// by a root daemon — so that a write past the limit fails with ENOSPC inside, and the
// host's disk keeps the rest. Made at create (the size is fixed then), mounted again
// when the workspace is next used after the daemon stopped (each daemon unmounts what
// it mounted when it stops; one killed leaves its mounts, found mounted next time), and
// unmounted before the sandbox is removed.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { HostIdentity } from "../identity.js";

const IMAGE = "workspace.img";
const HELPER_TIMEOUT_MS = 60_000;
/** At most this many file systems are made to find the image size whose usable space is what was asked. */
const SIZING_PASSES = 6;

export interface WorkspaceDiskOptions {
  /** Whether the daemon runs as root (mounting needs it). */
  asRoot: boolean;
  /** Where the helpers are looked for. */
  find: (program: string) => string | null;
}

export class WorkspaceDisks {
  /** Why a workspace limit cannot be enforced here, or null when it can. */
  readonly problem: string | null;
  private readonly programs: { mkfs: string; mount: string; umount: string } | null;
  /** Workspaces this daemon mounted (unmounted when it stops). */
  private readonly mounted = new Set<string>();

  constructor(opts: WorkspaceDiskOptions) {
    const mkfs = opts.find("mkfs.ext4");
    const mount = opts.find("mount");
    const umount = opts.find("umount");
    if (!opts.asRoot) {
      this.problem = "a workspace limit is a loop-mounted file system of its own, which needs a daemon running as root";
    } else if (mkfs === null || mount === null || umount === null) {
      this.problem = "a workspace limit needs mkfs.ext4 (e2fsprogs), mount and umount (util-linux)";
    } else if (!fs.existsSync("/dev/loop-control")) {
      this.problem = "a workspace limit needs loop devices (/dev/loop-control is missing)";
    } else {
      this.problem = null;
    }
    this.programs = this.problem === null ? { mkfs: mkfs!, mount: mount!, umount: umount! } : null;
  }

  /**
   * Makes the workspace a file system whose usable space is `bytes` (at least, and within
   * about 3%), owned by `owner` (null: root), and mounts it. Throws saying why not.
   */
  create(sandboxDir: string, workspaceDir: string, bytes: number, owner: HostIdentity | null): void {
    const programs = this.require();
    const image = path.join(sandboxDir, IMAGE);
    const rootOwner = owner === null ? "0:0" : `${owner.uid}:${owner.gid}`;
    // The file system's own blocks (its journal, inode tables, ext4's reserved pool: about
    // 8 of 50 MiB) come on top of what was asked: the image grows by what is missing
    // until the usable space is what was asked, measured as df does (statfs, f_bavail).
    let size = bytes;
    for (let pass = 1; ; pass++) {
      fs.rmSync(image, { force: true });
      const fd = fs.openSync(image, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
      try {
        fs.ftruncateSync(fd, size);
      } finally {
        fs.closeSync(fd);
      }
      // No blocks reserved for root: the limit is all the workspace's.
      run(programs.mkfs, ["-q", "-F", "-m", "0", "-E", `root_owner=${rootOwner}`, image], "mkfs.ext4");
      this.ensure(sandboxDir, workspaceDir);
      const st = fs.statfsSync(workspaceDir);
      const short = bytes - st.bavail * st.bsize;
      if (short <= 0) break;
      this.release(workspaceDir);
      // A new block group adds its own tables: past a few passes, grow by more than what is missing.
      if (pass >= SIZING_PASSES) throw new Error(`the workspace's file system could not be sized to ${bytes} bytes`);
      size += roundUp(pass < 3 ? short : short + Math.ceil(size / 100), 4096);
    }
    // What mkfs puts there is no file of the sandbox's.
    fs.rmSync(path.join(workspaceDir, "lost+found"), { recursive: true, force: true });
  }

  /** Whether the sandbox has a workspace of its own (its image exists). */
  has(sandboxDir: string): boolean {
    return fs.existsSync(path.join(sandboxDir, IMAGE));
  }

  /** Mounts the sandbox's workspace file system when it is not mounted. Throws saying why it cannot. */
  ensure(sandboxDir: string, workspaceDir: string): void {
    const image = path.join(sandboxDir, IMAGE);
    if (!fs.existsSync(image) || isMountPoint(workspaceDir)) return;
    const programs = this.require();
    fs.mkdirSync(workspaceDir, { recursive: true, mode: 0o700 });
    run(programs.mount, ["-o", "loop,nosuid,nodev", image, workspaceDir], "mount");
    this.mounted.add(workspaceDir);
  }

  /** Unmounts the sandbox's workspace (before it is removed, or as the daemon stops). */
  release(workspaceDir: string): void {
    this.mounted.delete(workspaceDir);
    if (this.programs === null || !isMountPoint(workspaceDir)) return;
    const done = spawnSync(this.programs.umount, [workspaceDir], { env: {}, timeout: HELPER_TIMEOUT_MS });
    // Busy (a file still open): detached now, freed when the last user lets go.
    if (done.status !== 0)
      spawnSync(this.programs.umount, ["-l", workspaceDir], { env: {}, timeout: HELPER_TIMEOUT_MS });
  }

  /** The daemon stops: what it mounted is unmounted. */
  close(): void {
    for (const dir of [...this.mounted]) this.release(dir);
  }

  private require(): { mkfs: string; mount: string; umount: string } {
    if (this.programs === null) throw new Error(this.problem ?? "a workspace limit cannot be enforced here");
    return this.programs;
  }
}

function run(program: string, args: string[], what: string): void {
  const done = spawnSync(program, args, {
    encoding: "utf8",
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
    timeout: HELPER_TIMEOUT_MS,
  });
  if (done.status !== 0) {
    const why = (done.stderr || String(done.error ?? `exit ${done.status}`)).trim().split("\n").join("; ");
    throw new Error(`${what} failed: ${why}`);
  }
}

/** Whether `dir` is a mount point in this process's mount namespace. */
export function isMountPoint(dir: string): boolean {
  let real: string;
  try {
    real = fs.realpathSync(dir);
  } catch {
    return false;
  }
  const mountinfo = fs.readFileSync("/proc/self/mountinfo", "utf8");
  for (const line of mountinfo.split("\n")) {
    const mountPoint = line.split(" ")[4]?.replace(/\\040/g, " ");
    if (mountPoint === real) return true;
  }
  return false;
}

function roundUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}
