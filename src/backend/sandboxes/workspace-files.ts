// Files in and out of a sandbox's workspace (docs/protocol.md, "Files"), confined to
// /workspace. The backend may run as root while a sandbox's commands change the
// workspace under it, so every path is resolved once (symlinks that stay inside the
// workspace are followed, those that lead out refused) and then walked one
// directory at a time through open handles that refuse symlinks (O_NOFOLLOW): a
// directory swapped for a symlink meanwhile makes the copy fail, never escape.
// Uploads land in a private staging area first and are moved into place whole.

import fs from "node:fs";
import path from "node:path";
import { WORKSPACE } from "../../protocol/types.js";
import { atDir } from "../../files/tar.js";
import { Refusal } from "../refusal.js";

/** A files path refused: outside /workspace, nothing there, or the other kind in the way (`details.field`: path). */
export class WorkspacePathError extends Refusal {
  constructor(code: "invalid_path" | "file_not_found" | "path_conflict", message: string) {
    super(code, message, { field: "path" });
    this.name = "WorkspacePathError";
  }
}

/** Symlinks followed while resolving one path, at most (as the kernel's ELOOP). */
const MAX_SYMLINKS = 40;
const O_DIR = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;

/**
 * The segments of a path inside the workspace: "/workspace/a/b", or "a/b" relative to
 * it. `..` segments, NUL bytes and absolute paths elsewhere are refused.
 */
export function workspaceSegments(requested: string): string[] {
  if (requested === "" || requested.includes("\0")) throw invalidPath(requested, "is empty or contains a NUL byte");
  let rest = requested;
  if (requested.startsWith("/")) {
    if (requested !== WORKSPACE && !requested.startsWith(`${WORKSPACE}/`)) {
      throw invalidPath(requested, `is outside ${WORKSPACE}`);
    }
    rest = requested.slice(WORKSPACE.length);
  }
  const segments = rest.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.includes("..")) throw invalidPath(requested, "contains ..");
  return segments;
}

export function sandboxPath(segments: string[]): string {
  return segments.length === 0 ? WORKSPACE : `${WORKSPACE}/${segments.join("/")}`;
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
  workspaceDir: string,
  segments: string[],
  opts: { followLast: boolean },
): { segments: string[]; exists: boolean } {
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
        throw new WorkspacePathError("path_conflict", `${sandboxPath([...done, s])} is not a directory`);
      }
      done.push(s);
      continue;
    }
    if (++hops > MAX_SYMLINKS) throw invalidPath(sandboxPath(segments), "has too many levels of symlinks");
    const target = fs.readlinkSync(host);
    const from = sandboxPath([...done, s]);
    let base: string[];
    let rel: string[];
    if (target.startsWith("/")) {
      if (target !== WORKSPACE && !target.startsWith(`${WORKSPACE}/`)) {
        throw invalidPath(sandboxPath(segments), `leads outside ${WORKSPACE} (${from} -> ${target})`);
      }
      base = [];
      rel = target.slice(WORKSPACE.length).split("/");
    } else {
      base = [...done];
      rel = target.split("/");
    }
    for (const part of rel) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        if (base.length === 0) {
          throw invalidPath(sandboxPath(segments), `leads outside ${WORKSPACE} (${from} -> ${target})`);
        }
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
 * symlinks; creates missing directories (0755) when `create`. The caller closes it.
 */
export function openWorkspaceDir(workspaceDir: string, segments: string[], opts: { create: boolean }): number {
  let fd = fs.openSync(workspaceDir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    for (const [i, s] of segments.entries()) {
      let next: number;
      try {
        next = fs.openSync(atDir(fd, s), O_DIR);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const here = sandboxPath(segments.slice(0, i + 1));
        if (code === "ENOENT" && opts.create) {
          fs.mkdirSync(atDir(fd, s), { mode: 0o755 });
          next = fs.openSync(atDir(fd, s), O_DIR);
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
  | { kind: "directory"; path: string; fd: number; mode: number };

/** Opens what a path names for reading (a file or a directory). The caller closes the fd. */
export function openForReading(workspaceDir: string, requested: string): WorkspaceEntry {
  const resolved = resolveInWorkspace(workspaceDir, workspaceSegments(requested), { followLast: true });
  if (!resolved.exists)
    throw new WorkspacePathError("file_not_found", `${sandboxPath(resolved.segments)} does not exist`);
  const segments = resolved.segments;
  const where = sandboxPath(segments);
  if (segments.length === 0) {
    const fd = openWorkspaceDir(workspaceDir, [], { create: false });
    return { kind: "directory", path: where, fd, mode: fs.fstatSync(fd).mode & 0o7777 };
  }
  const parent = openWorkspaceDir(workspaceDir, segments.slice(0, -1), { create: false });
  try {
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
      throw err;
    }
    const st = fs.fstatSync(fd);
    if (st.isDirectory()) return { kind: "directory", path: where, fd, mode: st.mode & 0o7777 };
    if (st.isFile()) return { kind: "file", path: where, fd, size: st.size, mode: st.mode & 0o7777 };
    fs.closeSync(fd);
    throw new WorkspacePathError("path_conflict", `${where} is neither a file nor a directory`);
  } finally {
    fs.closeSync(parent);
  }
}

/** What a path names, without opening it for reading. */
export function statInWorkspace(
  workspaceDir: string,
  requested: string,
): { path: string; type: "file" | "directory"; size: number; mode: number } {
  const entry = openForReading(workspaceDir, requested);
  try {
    return {
      path: entry.path,
      type: entry.kind,
      size: entry.kind === "file" ? entry.size : 0,
      mode: entry.mode,
    };
  } finally {
    fs.closeSync(entry.fd);
  }
}

/** Where an upload to `requested` goes: its canonical segments (the last one named). Throws for the workspace itself as a file. */
export function uploadTarget(workspaceDir: string, requested: string): string[] {
  return resolveInWorkspace(workspaceDir, workspaceSegments(requested), { followLast: true }).segments;
}

/**
 * Moves a staged file into place at canonical `segments` (missing parents created),
 * replacing a file or symlink there; refuses a directory in the way.
 */
export function placeFile(workspaceDir: string, segments: string[], staged: string): void {
  if (segments.length === 0) throw new WorkspacePathError("path_conflict", `${WORKSPACE} is a directory`);
  const parent = openWorkspaceDir(workspaceDir, segments.slice(0, -1), { create: true });
  try {
    const leaf = atDir(parent, segments.at(-1)!);
    if (lstatOrNull(leaf)?.isDirectory()) {
      throw new WorkspacePathError("path_conflict", `${sandboxPath(segments)} is a directory; nothing written`);
    }
    fs.renameSync(staged, leaf);
  } finally {
    fs.closeSync(parent);
  }
}

/**
 * Moves a staged directory tree into place at canonical `segments`: it becomes the
 * directory when nothing is there, is merged into a directory that is there (files
 * and symlinks replaced), and replaces a file or symlink.
 */
export function placeTree(workspaceDir: string, segments: string[], stagedDir: string): void {
  if (segments.length === 0) {
    const root = openWorkspaceDir(workspaceDir, [], { create: false });
    try {
      mergeInto(stagedDir, root);
    } finally {
      fs.closeSync(root);
    }
    return;
  }
  const parent = openWorkspaceDir(workspaceDir, segments.slice(0, -1), { create: true });
  try {
    const name = segments.at(-1)!;
    const existing = lstatOrNull(atDir(parent, name));
    if (existing?.isDirectory()) {
      const dest = fs.openSync(atDir(parent, name), O_DIR);
      try {
        mergeInto(stagedDir, dest);
        const st = fs.statSync(stagedDir);
        fs.fchmodSync(dest, st.mode & 0o7777);
      } finally {
        fs.closeSync(dest);
      }
      return;
    }
    if (existing) fs.rmSync(atDir(parent, name), { force: true });
    fs.renameSync(stagedDir, atDir(parent, name));
  } finally {
    fs.closeSync(parent);
  }
}

function mergeInto(stagedDir: string, destFd: number): void {
  for (const name of fs.readdirSync(stagedDir)) {
    const from = path.join(stagedDir, name);
    const staged = fs.lstatSync(from);
    const existing = lstatOrNull(atDir(destFd, name));
    if (staged.isDirectory() && existing?.isDirectory()) {
      const sub = fs.openSync(atDir(destFd, name), O_DIR);
      try {
        mergeInto(from, sub);
        fs.fchmodSync(sub, staged.mode & 0o7777);
      } finally {
        fs.closeSync(sub);
      }
      continue;
    }
    if (existing) fs.rmSync(atDir(destFd, name), { recursive: existing.isDirectory(), force: true });
    fs.renameSync(from, atDir(destFd, name));
  }
}

function lstatOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}
