// Unpacking a tar stream into a directory that is open (the backend's staging area
// for an upload, or `sbx cp`'s beside the user's destination); see docs/protocol.md,
// "Files". Every entry is created inside an open directory handle (./handles.ts): a
// parent is opened one level at a time with O_NOFOLLOW, a file is created with
// O_EXCL and its owner, mode and mtime are set on its open descriptor. Directory modes
// and mtimes wait until the end (a read-only directory must not stop its children
// being written) and are then applied through a handle opened again with O_NOFOLLOW,
// only if it is still the very directory the entry made (same inode): an archive that
// replaces its own directory `x/` (mode 4777) with a symlink `x -> /some/host/file`
// changes nothing outside the destination.
//
// Refused, before anything of the entry is written: absolute names, `..`, a parent
// that is a symlink, a hard link to anything but a file of the same archive still in
// place, device and fifo entries, a name too long for the file system.

import fs from "node:fs";
import * as tarStream from "tar-stream";
import { atDir, chownFd, isErrno, lstatAt, makeDirAt, O_NEW_FILE, openDirAt, type Owner, removeAt } from "./handles.js";
import { SparseWriter } from "./sparse.js";
import { ArchiveError, entryNameProblem, feed, segmentsOf } from "./tar.js";

export interface UnpackSummary {
  entries: number;
  /** Bytes of file content written. */
  bytes: number;
  /** Entries left out (an image layer's device nodes, fifos), by name: at most the first 20. */
  skipped: string[];
  skippedCount: number;
}

export interface UnpackOptions {
  /**
   * Drop setuid, setgid and sticky bits, as tar does for an ordinary user: what lands
   * on the user's disk (`sbx cp SANDBOX:PATH LOCAL`). Otherwise modes are kept exactly.
   */
  dropSpecialBits?: boolean;
  /**
   * A volume shared by a group (docs/operations.md, "Named volumes"): every entry's group
   * gets what its owner has, directories are setgid (2xxx: what is made in them stays
   * the group's), and files lose setuid and setgid.
   */
  sharedGroup?: boolean;
  /** Every entry made belongs to this owner (the backend writing a sandbox's workspace); default: the caller. */
  owner?: Owner | null;
  /**
   * An image layer (docs/images.md, "Layers"): `.wh.NAME` removes NAME of the layers
   * below, `.wh..wh..opq` empties its directory of what the layers below put there;
   * device, fifo and socket entries are skipped (and counted) instead of refused; a
   * hard link may name a file of a layer below, still in place (`layerFiles`, shared by
   * the image's layers in order).
   */
  layer?: { files: Map<string, { dev: number; ino: number }> } | null;
}

/** An image layer's whiteout prefix and opaque-directory marker (OCI image spec, "Whiteouts"). */
const WHITEOUT = ".wh.";
const OPAQUE = ".wh..wh..opq";

/** Longest name of one directory entry (NAME_MAX). */
const NAME_MAX = 255;

/**
 * Unpacks a tar stream into the directory open as `destFd` (not closed here). The first
 * refused entry stops it with an ArchiveError. Existing files and symlinks are replaced,
 * existing directories merged. Mtimes are kept.
 */
export async function unpackTree(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  destFd: number,
  opts: UnpackOptions = {},
): Promise<UnpackSummary> {
  const extract = tarStream.extract();
  const stop = new AbortController();
  let sourceFailed = false;
  const feeding = feed(source, extract, stop.signal).catch((err) => {
    sourceFailed = true;
    throw err;
  });
  const unpacker = new Unpacker(destFd, opts);
  try {
    for await (const entry of extract) {
      await unpacker.entry(entry.header, entry);
    }
    await feeding;
    unpacker.fixUpDirectories();
    return unpacker.summary;
  } catch (err) {
    stop.abort();
    extract.destroy();
    const fromSource = await feeding.then(
      () => null,
      (e: unknown) => e,
    );
    // The bytes stopped coming (a broken connection): that is the error, as it was raised.
    if (sourceFailed) throw fromSource;
    if (err instanceof ArchiveError) throw err;
    if (isErrno(err)) throw unpackFailure(err as NodeJS.ErrnoException, unpacker.current);
    throw new ArchiveError("bad_archive", `not a valid tar stream: ${(err as Error).message}`);
  } finally {
    unpacker.close();
  }
}

interface Identity {
  dev: number;
  ino: number;
}

interface DirectoryFixup extends Identity {
  mode: number;
  mtime: Date | undefined;
}

class Unpacker {
  readonly summary: UnpackSummary = { entries: 0, bytes: 0, skipped: [], skippedCount: 0 };
  /** The entry being unpacked (for messages). */
  current = "";
  /** Directories open from the destination down to the last entry's parent. */
  private chain: Array<{ name: string; fd: number }> = [];
  /** Directory entries by their name ("" for the root): the mode and mtime to give them at the end. */
  private readonly fixups = new Map<string, DirectoryFixup>();
  /** File entries still in place by their name: what a hard link may name. */
  private readonly files: Map<string, Identity>;
  private readonly owner: Owner | null;
  private readonly modeMask: number;
  private readonly sharedGroup: boolean;
  private readonly layer: boolean;
  /** An image layer's own entries (an opaque directory keeps them). */
  private readonly written = new Set<string>();

  constructor(
    private readonly destFd: number,
    opts: UnpackOptions,
  ) {
    this.owner = opts.owner ?? null;
    this.modeMask = opts.dropSpecialBits ? 0o777 : opts.sharedGroup ? 0o1777 : 0o7777;
    this.sharedGroup = opts.sharedGroup === true;
    this.layer = opts.layer != null;
    this.files = opts.layer?.files ?? new Map();
  }

  async entry(h: tarStream.Headers, data: AsyncIterable<Uint8Array>): Promise<void> {
    this.current = h.name;
    const problem = entryNameProblem(h.name);
    if (problem) throw new ArchiveError("invalid_entry", `archive entry ${quoted(h.name)} ${problem}`);
    const segments = segmentsOf(h.name);
    if (segments.some((s) => Buffer.byteLength(s) > NAME_MAX)) {
      throw new ArchiveError(
        "name_too_long",
        `archive entry ${quoted(h.name)} has a name longer than ${NAME_MAX} bytes, which no file system here takes`,
      );
    }
    if (segments.length === 0) {
      // The archive's root: the destination itself.
      if (h.type === "directory" && h.mode !== undefined) {
        this.fixups.set("", { ...identity(this.destFd), mode: h.mode, mtime: h.mtime });
      }
      await drain(data);
      return;
    }
    const key = segments.join("/");
    const leaf = segments.at(-1)!;
    const parent = this.dirAt(segments.slice(0, -1), true)!;
    if (this.layer && leaf.startsWith(WHITEOUT)) {
      this.whiteout(parent, segments, leaf);
      await drain(data);
      return;
    }
    if (this.layer) this.written.add(key);
    switch (h.type) {
      case "directory": {
        const st = lstatAt(parent, leaf);
        let fd: number;
        if (st?.isDirectory()) fd = openDirAt(parent, leaf);
        else {
          if (st) this.remove(parent, leaf, key);
          fd = makeDirAt(parent, leaf, 0o700, this.owner);
        }
        this.fixups.set(key, { ...identity(fd), mode: h.mode ?? 0o755, mtime: h.mtime });
        // Its entries usually follow: keep it open as the next parent.
        this.chain.push({ name: leaf, fd });
        await drain(data);
        break;
      }
      case "file":
      case "contiguous-file":
        this.remove(parent, leaf, key);
        this.summary.bytes += await this.writeFile(parent, leaf, key, data, h.mode ?? 0o644, h.mtime);
        break;
      case "symlink":
        if (!h.linkname) throw new ArchiveError("invalid_entry", `archive symlink ${quoted(h.name)} has no target`);
        this.remove(parent, leaf, key);
        fs.symlinkSync(h.linkname, atDir(parent, leaf));
        if (this.owner) fs.lchownSync(atDir(parent, leaf), this.owner.uid, this.owner.gid);
        await drain(data);
        break;
      case "link":
        this.hardLink(h, parent, leaf, key);
        await drain(data);
        break;
      case "character-device":
      case "block-device":
      case "fifo":
        if (!this.layer) {
          throw new ArchiveError(
            "unsupported_entry",
            `archive entry ${quoted(h.name)} is a ${h.type}; only files, directories and links are copied`,
          );
        }
        if (this.summary.skipped.length < 20) this.summary.skipped.push(key);
        this.summary.skippedCount++;
        await drain(data);
        return;
      default:
        throw new ArchiveError(
          "unsupported_entry",
          `archive entry ${quoted(h.name)} is a ${h.type ?? "?"}; only files, directories and links are copied`,
        );
    }
    this.summary.entries++;
  }

  /**
   * The directory at `segments` below the destination, opened one level at a time
   * with O_NOFOLLOW and kept open for the next entries. Missing ones are created when
   * `create` (a file in the way replaced); without it, null when one is not a directory.
   */
  private dirAt(segments: string[], create: boolean): number | null {
    let common = 0;
    while (common < this.chain.length && common < segments.length && this.chain[common]!.name === segments[common]) {
      common++;
    }
    this.truncate(common);
    for (let i = common; i < segments.length; i++) {
      const parent = i === 0 ? this.destFd : this.chain[i - 1]!.fd;
      const name = segments[i]!;
      let fd: number;
      try {
        fd = openDirAt(parent, name);
      } catch (err) {
        // ENOTDIR is also what a symlink gives here (O_NOFOLLOW | O_DIRECTORY).
        if (!isErrno(err, "ENOENT", "ELOOP", "ENOTDIR")) throw err;
        if (!create) return null;
        const st = lstatAt(parent, name);
        if (st?.isSymbolicLink()) {
          throw new ArchiveError(
            "through_symlink",
            `archive entry ${quoted(this.current)} would be written through the symlink ${segments.slice(0, i + 1).join("/")}`,
          );
        }
        if (st) this.remove(parent, name, segments.slice(0, i + 1).join("/"));
        fd = makeDirAt(parent, name, 0o755, this.owner);
        if (this.sharedGroup) fs.fchmodSync(fd, this.modeOf(0o755, true));
      }
      this.chain.push({ name, fd });
    }
    return segments.length === 0 ? this.destFd : this.chain[segments.length - 1]!.fd;
  }

  /** An image layer's whiteout: `.wh.NAME` removes NAME; `.wh..wh..opq` what layers below put in its directory. */
  private whiteout(parent: number, segments: string[], leaf: string): void {
    const dirKey = segments.slice(0, -1).join("/");
    if (leaf === OPAQUE) {
      for (const name of fs.readdirSync(atDir(parent))) {
        const key = dirKey === "" ? name : `${dirKey}/${name}`;
        if (!this.written.has(key)) this.remove(parent, name, key);
      }
      return;
    }
    const name = leaf.slice(WHITEOUT.length);
    if (name === "" || name === "." || name === "..") {
      throw new ArchiveError("invalid_entry", `archive entry ${quoted(this.current)} is a whiteout of no name`);
    }
    this.remove(parent, name, dirKey === "" ? name : `${dirKey}/${name}`);
  }

  /** Closes the open directories below the first `keep`. */
  private truncate(keep: number): void {
    while (this.chain.length > keep) fs.closeSync(this.chain.pop()!.fd);
  }

  /** Removes what is at `name` (whatever it is) and forgets what the archive made there. */
  private remove(parent: number, name: string, key: string): void {
    if (lstatAt(parent, name) === null) return;
    const under = `${key}/`;
    for (const k of [...this.fixups.keys()]) if (k === key || k.startsWith(under)) this.fixups.delete(k);
    for (const k of [...this.files.keys()]) if (k === key || k.startsWith(under)) this.files.delete(k);
    // An open directory at or below it is gone: never write into it again.
    const depth = key.split("/").length;
    if (
      this.chain.length >= depth &&
      this.chain
        .slice(0, depth)
        .map((c) => c.name)
        .join("/") === key
    ) {
      this.truncate(depth - 1);
    }
    removeAt(parent, name);
  }

  private async writeFile(
    parent: number,
    leaf: string,
    key: string,
    data: AsyncIterable<Uint8Array>,
    mode: number,
    mtime: Date | undefined,
  ): Promise<number> {
    const fd = fs.openSync(atDir(parent, leaf), O_NEW_FILE, 0o600);
    // Zeros stay holes: a sparse file takes no more room here than where it came from.
    const out = new SparseWriter(fd);
    try {
      for await (const chunk of data) out.write(chunk);
      out.finish();
      chownFd(fd, this.owner);
      fs.fchmodSync(fd, this.modeOf(mode, false));
      if (mtime) fs.futimesSync(fd, mtime, mtime);
      this.files.set(key, identity(fd));
    } finally {
      fs.closeSync(fd);
    }
    return out.length;
  }

  /** A hard link to a file made earlier by this archive and still in place, reached through handles. */
  private hardLink(h: tarStream.Headers, parent: number, leaf: string, key: string): void {
    const refuse = () =>
      new ArchiveError(
        "invalid_entry",
        `archive hard link ${quoted(h.name)} must name a file earlier in the same archive (${quoted(h.linkname ?? "none")})`,
      );
    if (!h.linkname || entryNameProblem(h.linkname)) throw refuse();
    const target = segmentsOf(h.linkname);
    const targetKey = target.join("/");
    if (targetKey === key && this.files.has(key)) return; // a link to itself: already there
    this.remove(parent, leaf, key);
    const known = this.files.get(targetKey);
    if (target.length === 0 || known === undefined) throw refuse();
    const targetParent = this.openFresh(target.slice(0, -1));
    if (targetParent === null) throw refuse();
    try {
      const st = lstatAt(targetParent, target.at(-1)!);
      if (!st?.isFile() || st.ino !== known.ino || st.dev !== known.dev) throw refuse();
      // The destination's parent may be closed by remove() above: open it again.
      fs.linkSync(atDir(targetParent, target.at(-1)!), atDir(parent, leaf));
      this.files.set(key, known);
    } finally {
      if (targetParent !== this.destFd) fs.closeSync(targetParent);
    }
  }

  /** The directory at `segments`, opened on its own (the caller closes it unless it is the root); null if gone. */
  private openFresh(segments: string[]): number | null {
    let fd = this.destFd;
    for (const s of segments) {
      let next: number;
      try {
        next = openDirAt(fd, s);
      } catch (err) {
        if (fd !== this.destFd) fs.closeSync(fd);
        if (isErrno(err, "ENOENT", "ELOOP", "ENOTDIR")) return null;
        throw err;
      }
      if (fd !== this.destFd) fs.closeSync(fd);
      fd = next;
    }
    return fd;
  }

  /** The mode an entry gets: as archived, within the mask; in a shared volume, its group's bits as its owner's. */
  private modeOf(mode: number, directory: boolean): number {
    const kept = mode & this.modeMask;
    if (!this.sharedGroup) return kept;
    return kept | ((kept & 0o700) >> 3) | (directory ? 0o2000 : 0);
  }

  /**
   * Gives every directory the archive made its mode and mtime, deepest first (a
   * directory after everything below it), through a handle opened with O_NOFOLLOW and
   * only while it is still the directory the entry made.
   */
  fixUpDirectories(): void {
    this.current = "";
    const keys = [...this.fixups.keys()].sort().reverse();
    for (const key of keys) {
      const fix = this.fixups.get(key)!;
      const fd = this.dirAt(key === "" ? [] : key.split("/"), false);
      if (fd === null) continue;
      const now = identity(fd);
      if (now.ino !== fix.ino || now.dev !== fix.dev) continue;
      fs.fchmodSync(fd, this.modeOf(fix.mode, true));
      if (fix.mtime) fs.futimesSync(fd, fix.mtime, fix.mtime);
    }
  }

  close(): void {
    this.truncate(0);
  }
}

function identity(fd: number): Identity {
  const st = fs.fstatSync(fd);
  return { dev: st.dev, ino: st.ino };
}

/** An archive name in a message: quoted, and cut short when very long. */
function quoted(name: string): string {
  return JSON.stringify(name.length > 120 ? `${name.slice(0, 117)}...` : name);
}

/**
 * A file system error while unpacking, said with the entry's name instead of the
 * internal path it was written through (never a host path).
 */
function unpackFailure(err: NodeJS.ErrnoException, entry: string): Error {
  if (err.code === "ENAMETOOLONG") {
    return new ArchiveError("name_too_long", `archive entry ${quoted(entry)} has a name too long for the file system`);
  }
  const what = entry === "" ? "setting directory modes" : `writing archive entry ${quoted(entry)}`;
  const failure = new Error(`${what}: ${err.code}`) as NodeJS.ErrnoException;
  failure.code = err.code;
  if (err.errno !== undefined) failure.errno = err.errno;
  if (err.syscall !== undefined) failure.syscall = err.syscall;
  return failure;
}

async function drain(entry: AsyncIterable<Uint8Array>): Promise<void> {
  for await (const _ of entry) {
    // directories and links carry no data
  }
}
