// Moving an unpacked tree from its staging directory into place, whole: renamed when
// nothing is there, merged into a directory that is (files and symlinks replaced,
// directories merged). Used by the backend (an upload into a workspace, where a
// sandboxed command may change things meanwhile) and by `sbx cp` (a copy out onto the
// user's disk). Every step names one entry inside an open directory (./handles.ts):
// a symlink swapped in is replaced or refused, never followed.

import fs from "node:fs";
import { atDir, isErrno, lstatAt, openDirAt, removeAt } from "./handles.js";

/** An entry at the destination kept changing kind while it was replaced; nothing more was moved. */
export class PlaceConflict extends Error {
  constructor(readonly entry: string) {
    super(`${entry} changed while it was being replaced`);
    this.name = "PlaceConflict";
  }
}

/**
 * Puts the tree staged as `stagedName` in `stagedParent` at `name` in `destParent`:
 * renamed there when nothing (or no directory) is there, merged into a directory that is.
 */
export function placeTree(stagedParent: number, stagedName: string, destParent: number, name: string): void {
  const staged = openDirAt(stagedParent, stagedName);
  try {
    placeEntry(stagedParent, stagedName, staged, destParent, name, name);
  } finally {
    fs.closeSync(staged);
  }
}

/** Merges everything in the open directory `from` into the open directory `into`. */
export function mergeTree(from: number, into: number, where = ""): void {
  for (const name of fs.readdirSync(atDir(from))) {
    const st = lstatAt(from, name);
    if (st === null) continue;
    const entry = where === "" ? name : `${where}/${name}`;
    if (!st.isDirectory()) {
      renameReplacing(from, name, into, name, entry);
      continue;
    }
    const sub = openDirAt(from, name);
    try {
      placeEntry(from, name, sub, into, name, entry);
    } finally {
      fs.closeSync(sub);
    }
  }
}

/** A staged directory (open as `staged`) into `name` of `into`: merged with a directory there, else moved. */
function placeEntry(
  stagedParent: number,
  stagedName: string,
  staged: number,
  into: number,
  name: string,
  entry: string,
): void {
  for (let attempt = 0; attempt < 4; attempt++) {
    if (lstatAt(into, name)?.isDirectory()) {
      let existing: number;
      try {
        existing = openDirAt(into, name);
      } catch (err) {
        // Swapped for something else since: look again.
        if (isErrno(err, "ELOOP", "ENOTDIR", "ENOENT")) continue;
        throw err;
      }
      try {
        mergeTree(staged, existing, entry);
        fs.fchmodSync(existing, fs.fstatSync(staged).mode & 0o7777);
      } finally {
        fs.closeSync(existing);
      }
      return;
    }
    try {
      renameReplacing(stagedParent, stagedName, into, name, entry);
      return;
    } catch (err) {
      // A directory appeared there meanwhile: merge into it instead.
      if (!(err instanceof PlaceConflict)) throw err;
    }
  }
  throw new PlaceConflict(entry);
}

/** Renames `fromName` over `name`, removing whatever is there first (never followed). */
function renameReplacing(from: number, fromName: string, into: number, name: string, entry: string): void {
  for (let attempt = 0; attempt < 4; attempt++) {
    const there = lstatAt(into, name);
    if (there?.isDirectory() || (there && lstatAt(from, fromName)?.isDirectory())) removeAt(into, name);
    try {
      fs.renameSync(atDir(from, fromName), atDir(into, name));
      return;
    } catch (err) {
      // Something of the other kind was put there meanwhile: remove it and try again.
      if (!isErrno(err, "EISDIR", "ENOTDIR", "ENOTEMPTY", "EEXIST")) throw err;
    }
  }
  throw new PlaceConflict(entry);
}
