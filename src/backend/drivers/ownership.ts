// Giving files to a sandbox's own uid (identity.ts) when the backend, as root, makes
// them for it: the workspace itself, what an upload places there, and — once — the
// workspaces of sandboxes made before sandboxes had uids of their own. Walks through
// directory handles that refuse symlinks, so that a command swapping a directory for
// a symlink meanwhile can never have a file outside the tree change owner.

import fs from "node:fs";
import { atDir } from "../../files/handles.js";
import type { HostIdentity } from "./identity.js";

const O_DIR = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;

/** Gives `dir` and everything under it to `owner` (symlinks themselves, never what they point to). */
export function chownTree(dir: string, owner: HostIdentity): void {
  const root = fs.openSync(dir, O_DIR);
  try {
    walk(root, owner);
  } finally {
    fs.closeSync(root);
  }
}

function walk(fd: number, owner: HostIdentity): void {
  fs.fchownSync(fd, owner.uid, owner.gid);
  for (const name of fs.readdirSync(atDir(fd))) {
    const entry = atDir(fd, name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(entry);
    } catch {
      continue; // gone meanwhile
    }
    if (!st.isDirectory()) {
      if (st.uid !== owner.uid || st.gid !== owner.gid) fs.lchownSync(entry, owner.uid, owner.gid);
      continue;
    }
    let sub: number;
    try {
      sub = fs.openSync(entry, O_DIR);
    } catch {
      continue; // swapped for something else meanwhile: not ours to follow
    }
    try {
      walk(sub, owner);
    } finally {
      fs.closeSync(sub);
    }
  }
}

/** Whether `dir` (not followed) belongs to `owner`. */
export function ownedBy(dir: string, owner: HostIdentity): boolean {
  try {
    const st = fs.lstatSync(dir);
    return st.uid === owner.uid && st.gid === owner.gid;
  } catch {
    return false;
  }
}
