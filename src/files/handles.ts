// Directory handles: every file operation of `sbx cp` and the files routes names its
// target as one name inside a directory that is already open, never by a path walked
// again later. Node has no openat(2); `/proc/self/fd/N/NAME` gives the same meaning:
// the kernel resolves `/proc/self/fd/N` to the open directory itself (wherever it is
// now), and only NAME is looked up in it. Opening a directory with O_NOFOLLOW |
// O_DIRECTORY refuses a symlink in its place; creating with O_CREAT | O_EXCL, and
// unlink, rmdir, rename, symlink, link and lchown never follow the last name. So an
// entry swapped for a symlink (by a later archive entry, or by a sandboxed command
// racing the backend) can never redirect a write, a chmod or a removal elsewhere.

import fs from "node:fs";

/** A path that names `name` inside the directory open as `dirFd`, whatever its path has become since. */
export function atDir(dirFd: number, name = ""): string {
  return name === "" ? `/proc/self/fd/${dirFd}` : `/proc/self/fd/${dirFd}/${name}`;
}

/** Opening a directory that must not be a symlink. */
export const O_DIR = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;

/** Creating a new file, never through a symlink at its name. */
export const O_NEW_FILE = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;

/** The directory `name` inside `dirFd`; throws ELOOP for a symlink, ENOTDIR for anything else. */
export function openDirAt(dirFd: number, name: string): number {
  return fs.openSync(atDir(dirFd, name), O_DIR);
}

/** What `name` inside `dirFd` is (a symlink itself, not its target), or null when nothing is there. */
export function lstatAt(dirFd: number, name: string): fs.Stats | null {
  try {
    return fs.lstatSync(atDir(dirFd, name));
  } catch (err) {
    if (isErrno(err, "ENOENT")) return null;
    throw err;
  }
}

/** Who the files sbx writes for someone else belong to (the backend writing a sandbox's workspace). */
export interface Owner {
  uid: number;
  gid: number;
}

/** Gives an open file or directory to `owner` (before its mode is set: a chown clears setuid bits). */
export function chownFd(fd: number, owner: Owner | null): void {
  if (owner !== null) fs.fchownSync(fd, owner.uid, owner.gid);
}

/** Creates the directory `name` in `dirFd` (mode before the umask) and opens it. */
export function makeDirAt(dirFd: number, name: string, mode: number, owner: Owner | null): number {
  fs.mkdirSync(atDir(dirFd, name), { mode });
  const fd = openDirAt(dirFd, name);
  try {
    chownFd(fd, owner);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  return fd;
}

/**
 * Removes `name` from `dirFd`, a directory with everything in it: each level is opened
 * with O_NOFOLLOW and emptied through its handle, so a symlink met (or swapped in)
 * anywhere is removed itself, never followed. Nothing there is not an error.
 */
export function removeAt(dirFd: number, name: string): void {
  // A name that changes kind between looking and removing is looked at again.
  for (let attempt = 0; attempt < 8; attempt++) {
    const st = lstatAt(dirFd, name);
    if (st === null) return;
    try {
      if (st.isDirectory()) {
        const fd = openDirAt(dirFd, name);
        try {
          for (const child of fs.readdirSync(atDir(fd))) removeAt(fd, child);
        } finally {
          fs.closeSync(fd);
        }
        fs.rmdirSync(atDir(dirFd, name));
      } else {
        fs.unlinkSync(atDir(dirFd, name));
      }
      return;
    } catch (err) {
      if (isErrno(err, "ENOENT")) return;
      // Swapped meanwhile: a symlink or file where a directory was, or the other way round.
      if (!isErrno(err, "ELOOP", "ENOTDIR", "EISDIR", "ENOTEMPTY", "EEXIST")) throw err;
      if (attempt === 7) throw err;
    }
  }
}

export function isErrno(err: unknown, ...codes: string[]): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return typeof code === "string" && (codes.length === 0 || codes.includes(code));
}
