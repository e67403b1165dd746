// How much room a tree takes on its disk: what `sbx cp` compares with the free space
// where a copy out lands, before writing any of it. Walked through open directory
// handles (./handles.ts): a symlink is never followed, so no count reaches outside.

import fs from "node:fs";
import { atDir, isErrno, openDirAt } from "./handles.js";

/** Bytes the regular files under the open directory `dirFd` occupy on disk (st_blocks), holes not counted. */
export function allocatedUnder(dirFd: number): number {
  let total = 0;
  for (const name of fs.readdirSync(atDir(dirFd))) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(atDir(dirFd, name));
    } catch (err) {
      if (isErrno(err, "ENOENT")) continue; // removed meanwhile
      throw err;
    }
    if (st.isFile()) total += allocated(st);
    else if (st.isDirectory()) {
      let fd: number;
      try {
        fd = openDirAt(dirFd, name);
      } catch (err) {
        if (isErrno(err, "ENOENT", "ELOOP", "ENOTDIR")) continue; // changed meanwhile
        throw err;
      }
      try {
        total += allocatedUnder(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
  }
  return total;
}

/** Bytes a file occupies on disk: its 512-byte blocks (less than its size where it has holes). */
export function allocated(st: fs.Stats): number {
  return st.blocks * 512;
}
