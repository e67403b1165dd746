// Files in and out of a sandbox's workspace (docs/protocol.md, "Files"), confined to
// /workspace. The backend may run as root while a sandbox's commands change the
// workspace under it, so every path is resolved once (symlinks that stay inside the
// workspace are followed, those that lead out refused) and then walked one
// directory at a time through open handles that refuse symlinks (O_NOFOLLOW): a
// directory swapped for a symlink meanwhile makes the copy fail, never escape.
// Uploads land in a private staging area first and are moved into place whole.
// A named volume's directory is read and written the same way (FileRoot: paths from
// its own "/", and no absolute symlink followed: each sandbox mounts it elsewhere).

import fs from "node:fs";
import path from "node:path";
import { WORKSPACE } from "../../protocol/types.js";
import { atDir, isErrno, lstatAt, makeDirAt, openDirAt, type Owner } from "../../files/handles.js";
import { allocated, allocatedUnder } from "../../files/usage.js";
import { mergeTree, PlaceConflict, placeTree as placeStagedTree } from "../../files/place.js";
import { Refusal } from "../refusal.js";

/** A files path refused: outside /workspace, nothing there, or the other kind in the way (`details.field`: path). */
export class WorkspacePathError extends Refusal {
  constructor(code: "invalid_path" | "file_not_found" | "path_conflict", message: string) {
    super(code, message, { field: "path" });
    this.name = "WorkspacePathError";
  }
}

/**
 * A directory files are copied in and out of: a sandbox's workspace (`/workspace`
 * inside), or a named volume (prefix "": paths from the volume's own root, "/").
 */
export interface FileRoot {
  /** Its directory on the host. */
  dir: string;
  /** What its root is called in paths: "/workspace", or "" for a volume. */
  prefix: string;
  /** A shared volume: directories made in it are 2775, so its group keeps writing (docs/operations.md). */
  shared?: boolean;
}

/** The workspace at `dir` as a FileRoot. */
export function workspaceRoot(dir: string): FileRoot {
  return { dir, prefix: WORKSPACE };
}

/** What a root is called in messages. */
function rootName(prefix: string): string {
  return prefix === "" ? "the volume" : prefix;
}

/** A directory made in a shared volume: its group writes too, and what is made in it is the group's (setgid). */
export const SHARED_DIR_MODE = 0o2775;

/** Symlinks followed while resolving one path, at most (as the kernel's ELOOP). */
const MAX_SYMLINKS = 40;

/**
 * The segments of a path inside the workspace: "/workspace/a/b", or "a/b" relative to
 * it. `..` segments, NUL bytes and absolute paths elsewhere are refused.
 */
export function workspaceSegments(requested: string, prefix = WORKSPACE): string[] {
  if (requested === "" || requested.includes("\0")) throw invalidPath(requested, "is empty or contains a NUL byte");
  let rest = requested;
  if (requested.startsWith("/")) {
    if (requested !== prefix && !requested.startsWith(`${prefix}/`)) {
      throw invalidPath(requested, `is outside ${prefix}`);
    }
    rest = requested.slice(prefix.length);
  }
  const segments = rest.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.includes("..")) throw invalidPath(requested, "contains ..");
  return segments;
}

export function sandboxPath(segments: string[], prefix = WORKSPACE): string {
  return segments.length === 0 ? prefix || "/" : `${prefix}/${segments.join("/")}`;
}

function invalidPath(requested: string, why: string): WorkspacePathError {
  return new WorkspacePathError("invalid_path", `${JSON.stringify(requested)} ${why}`);
}

/**
 * Follows the symlinks of a path that stay inside the workspace (the last one too
 * when `followLast`); refuses one that leads out. Returns the canonical segments and
 * whether the path exists.
 */
export function resolveInWorkspace(
  root: FileRoot,
  segments: string[],
  opts: { followLast: boolean },
): { segments: string[]; exists: boolean } {
  const { dir: workspaceDir, prefix } = root;
  const shown = (s: string[]) => sandboxPath(s, prefix);
  let done: string[] = [];
  let todo = [...segments];
  let hops = 0;
  while (todo.length > 0) {
    const s = todo.shift()!;
    const host = path.join(workspaceDir, ...done, s);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(host);
    } catch {
      return { segments: [...done, s, ...todo], exists: false };
    }
    if (!st.isSymbolicLink() || (todo.length === 0 && !opts.followLast)) {
      if (todo.length > 0 && !st.isDirectory()) {
        throw new WorkspacePathError("path_conflict", `${shown([...done, s])} is not a directory`);
      }
      done.push(s);
      continue;
    }
    if (++hops > MAX_SYMLINKS) throw invalidPath(shown(segments), "has too many levels of symlinks");
    let target: string;
    try {
      target = fs.readlinkSync(host);
    } catch (err) {
      // No longer a symlink (a command changed it since): look at it again.
      if (isErrno(err, "EINVAL", "ENOENT")) {
        todo.unshift(s);
        continue;
      }
      throw err;
    }
    const from = shown([...done, s]);
    const out = () => invalidPath(shown(segments), `leads outside ${rootName(prefix)} (${from} -> ${target})`);
    let base: string[];
    let rel: string[];
    if (target.startsWith("/")) {
      // A volume is mounted elsewhere in each sandbox: an absolute target has no one meaning there.
      if (prefix === "" || (target !== prefix && !target.startsWith(`${prefix}/`))) throw out();
      base = [];
      rel = target.slice(prefix.length).split("/");
    } else {
      base = [...done];
      rel = target.split("/");
    }
    for (const part of rel) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        if (base.length === 0) throw out();
        base.pop();
      } else base.push(part);
    }
    done = [];
    todo = [...base, ...todo];
  }
  return { segments: done, exists: true };
}

/**
 * Opens the directory at canonical `segments` one level at a time, refusing
 * symlinks; creates missing directories (0755, given to `owner`) when `create`. The
 * caller closes it.
 */
export function openWorkspaceDir(
  root: FileRoot,
  segments: string[],
  opts: { create: boolean; owner?: Owner | null },
): number {
  let fd = fs.openSync(root.dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    for (const [i, s] of segments.entries()) {
      let next: number;
      try {
        next = openDirAt(fd, s);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const here = sandboxPath(segments.slice(0, i + 1), root.prefix);
        if (code === "ENOENT" && opts.create) {
          next = makeDirAt(fd, s, root.shared ? SHARED_DIR_MODE : 0o755, opts.owner ?? null);
          if (root.shared) fs.fchmodSync(next, SHARED_DIR_MODE);
        } else if (code === "ENOENT") {
          throw new WorkspacePathError("file_not_found", `${here} does not exist`);
        } else if (code === "ELOOP") {
          throw new WorkspacePathError("path_conflict", `${here} became a symlink while it was used; nothing written`);
        } else if (code === "ENOTDIR") {
          throw new WorkspacePathError("path_conflict", `${here} is not a directory`);
        } else throw err;
      }
      fs.closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

export type WorkspaceEntry =
  | { kind: "file"; path: string; fd: number; size: number; mode: number }
  | { kind: "directory"; path: string; fd: number; mode: number }
  | { kind: "symlink"; path: string; target: string; mtime: Date };

/**
 * Opens what a path names for reading (a file or a directory; the caller closes the
 * fd). With `nofollow`, a symlink at the path is itself what is read (its target, as
 * it is, never followed nor looked at); symlinks before it are followed as ever.
 */
export function openForReading(root: FileRoot, requested: string, opts: { nofollow?: boolean } = {}): WorkspaceEntry {
  const followLast = opts.nofollow !== true;
  const resolved = resolveInWorkspace(root, workspaceSegments(requested, root.prefix), { followLast });
  if (!resolved.exists)
    throw new WorkspacePathError("file_not_found", `${sandboxPath(resolved.segments, root.prefix)} does not exist`);
  const segments = resolved.segments;
  const where = sandboxPath(segments, root.prefix);
  if (segments.length === 0) {
    const fd = openWorkspaceDir(root, [], { create: false });
    return { kind: "directory", path: where, fd, mode: fs.fstatSync(fd).mode & 0o7777 };
  }
  const parent = openWorkspaceDir(root, segments.slice(0, -1), { create: false });
  try {
    const link = followLast ? null : lstatAt(parent, segments.at(-1)!);
    if (link?.isSymbolicLink()) {
      try {
        const target = fs.readlinkSync(atDir(parent, segments.at(-1)!));
        return { kind: "symlink", path: where, target, mtime: link.mtime };
      } catch (err) {
        // No longer a symlink (EINVAL), or gone: changed while it was read.
        if (isErrno(err, "EINVAL", "ENOENT")) {
          throw new WorkspacePathError("path_conflict", `${where} changed while it was read; copy it again`);
        }
        throw err;
      }
    }
    let fd: number;
    try {
      // O_NONBLOCK: opening a fifo a command left there must not block the backend.
      const flags = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;
      fd = fs.openSync(atDir(parent, segments.at(-1)!), flags);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") throw new WorkspacePathError("file_not_found", `${where} does not exist`);
      if (code === "ELOOP")
        throw new WorkspacePathError("path_conflict", `${where} became a symlink while it was read`);
      // A socket cannot be opened (ENXIO); a device may not be (ENODEV, EOPNOTSUPP).
      if (code === "ENXIO" || code === "ENODEV" || code === "EOPNOTSUPP") throw notFileOrDirectory(where);
      throw err;
    }
    const st = fs.fstatSync(fd);
    if (st.isDirectory()) return { kind: "directory", path: where, fd, mode: st.mode & 0o7777 };
    if (st.isFile()) return { kind: "file", path: where, fd, size: st.size, mode: st.mode & 0o7777 };
    fs.closeSync(fd);
    throw notFileOrDirectory(where);
  } finally {
    fs.closeSync(parent);
  }
}

function notFileOrDirectory(where: string): WorkspacePathError {
  return new WorkspacePathError(
    "path_conflict",
    `${where} is neither a file nor a directory (a socket, fifo or device); only files and directories are copied`,
  );
}

/**
 * What a path names, without opening it for reading (with `nofollow`, a symlink there
 * as itself). `allocated`: the bytes a file occupies on disk (holes not counted), and
 * with `usage` those of a directory's files, walked without following symlinks.
 */
export function statInWorkspace(
  root: FileRoot,
  requested: string,
  opts: { nofollow?: boolean; usage?: boolean } = {},
): {
  path: string;
  type: "file" | "directory" | "symlink";
  size: number;
  mode: number;
  target?: string;
  allocated?: number;
} {
  const entry = openForReading(root, requested, opts);
  if (entry.kind === "symlink") {
    return { path: entry.path, type: "symlink", size: 0, mode: 0o777, target: entry.target };
  }
  try {
    const used =
      entry.kind === "file"
        ? { allocated: allocated(fs.fstatSync(entry.fd)) }
        : opts.usage
          ? { allocated: allocatedUnder(entry.fd) }
          : {};
    return {
      path: entry.path,
      type: entry.kind,
      size: entry.kind === "file" ? entry.size : 0,
      mode: entry.mode,
      ...used,
    };
  } finally {
    fs.closeSync(entry.fd);
  }
}

/** Where an upload to `requested` goes: its canonical segments (the last one named). Throws for the workspace itself as a file. */
export function uploadTarget(root: FileRoot, requested: string): string[] {
  return resolveInWorkspace(root, workspaceSegments(requested, root.prefix), { followLast: true }).segments;
}

/**
 * Who what the backend writes into a workspace belongs to: when the backend runs as
 * root (`asRoot`: its DriverHost says, SandboxRegistry.workspaceOwner) and the
 * workspace is another user's (the uid its sandboxed commands run as), that user, so
 * that its commands can change what was copied in; otherwise null (whoever the
 * backend runs as, who owns the workspace).
 */
export function workspaceOwner(workspaceDir: string, asRoot: boolean): Owner | null {
  if (!asRoot) return null;
  const st = fs.statSync(workspaceDir);
  return st.uid === 0 && st.gid === 0 ? null : { uid: st.uid, gid: st.gid };
}

/** Where an upload staged as `stagedName` in `staging` goes, and who the parents it creates belong to (workspaceOwner). */
export interface StagedUpload {
  root: FileRoot;
  /** Its canonical path in the workspace. */
  segments: string[];
  staging: number;
  stagedName: string;
  owner: Owner | null;
}

/**
 * Moves a staged file into place at its canonical path (missing parents created),
 * replacing a file or symlink there; refuses a directory in the way.
 */
export function placeFile({ root, segments, staging, stagedName, owner }: StagedUpload): void {
  const where = sandboxPath(segments, root.prefix);
  if (segments.length === 0) throw new WorkspacePathError("path_conflict", `${where} is a directory`);
  const parent = openWorkspaceDir(root, segments.slice(0, -1), { create: true, owner });
  try {
    const leaf = segments.at(-1)!;
    const isDirectory = () => new WorkspacePathError("path_conflict", `${where} is a directory; nothing written`);
    if (lstatAt(parent, leaf)?.isDirectory()) throw isDirectory();
    try {
      // Replaces a file or symlink there as one step; never follows one.
      fs.renameSync(atDir(staging, stagedName), atDir(parent, leaf));
    } catch (err) {
      if (isErrno(err, "EISDIR", "ENOTEMPTY", "EEXIST")) throw isDirectory();
      throw err;
    }
  } finally {
    fs.closeSync(parent);
  }
}

/**
 * Moves a staged directory tree into place at its canonical path: it becomes the
 * directory when nothing is there, is merged into a directory that is there (files
 * and symlinks replaced), and replaces a file or symlink.
 */
export function placeTree({ root, segments, staging, stagedName, owner }: StagedUpload): void {
  if (segments.length === 0) {
    const top = openWorkspaceDir(root, [], { create: false });
    const staged = openDirAt(staging, stagedName);
    try {
      mergeTree(staged, top);
    } finally {
      fs.closeSync(staged);
      fs.closeSync(top);
    }
    return;
  }
  const parent = openWorkspaceDir(root, segments.slice(0, -1), { create: true, owner });
  try {
    placeStagedTree(staging, stagedName, parent, segments.at(-1)!);
  } finally {
    fs.closeSync(parent);
  }
}

/**
 * What a file system error met while copying in or out of a workspace means to the
 * caller, said without host paths: a name too long, or an entry that changed kind
 * (a sandboxed command swapping a directory for a symlink meanwhile). Null: not one
 * of those (a fault of the backend itself).
 */
export function workspaceRefusal(err: unknown, where: string): WorkspacePathError | null {
  if (err instanceof PlaceConflict) {
    return new WorkspacePathError(
      "path_conflict",
      `${where}: ${err.entry} changed while it was written (a command in the sandbox?); copy it again`,
    );
  }
  if (isErrno(err, "ENAMETOOLONG")) {
    return new WorkspacePathError("invalid_path", `${where}: a name in it is longer than the file system takes`);
  }
  if (isErrno(err, "ELOOP", "ENOTDIR", "EISDIR", "ENOTEMPTY", "EEXIST", "ENOENT")) {
    return new WorkspacePathError(
      "path_conflict",
      `${where} changed while it was copied (a command in the sandbox?); nothing more was done`,
    );
  }
  return null;
}
