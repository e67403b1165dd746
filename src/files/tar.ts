// Directory trees as tar streams, both ways, shared by `sbx cp` (the user's disk)
// and the backend's files routes (a sandbox's workspace); see docs/protocol.md,
// "Files". Streamed: neither side holds a whole file in memory.
//
// Unpacking refuses, before writing it, any entry that could land outside the
// destination: absolute names, `..`, a parent that is a symlink, a hard link to
// anything but a file of the same archive, and device or fifo entries. Symlinks are
// kept as they are (their targets are never followed here). Packing walks the tree
// one directory at a time through open directory handles (O_NOFOLLOW), so a symlink
// swapped in during the walk is stored as a symlink, never followed.

import fs from "node:fs";
import path from "node:path";
import * as tarStream from "tar-stream";

export class ArchiveError extends Error {
  constructor(
    readonly code: "invalid_entry" | "unsupported_entry" | "through_symlink" | "changed" | "bad_archive",
    message: string,
  ) {
    super(message);
    this.name = "ArchiveError";
  }
}

/** Why an entry name may not be unpacked, or null. Names are relative, `/`-separated, without `..`. */
export function entryNameProblem(name: string): string | null {
  if (name.includes("\0")) return "contains a NUL byte";
  if (name.startsWith("/")) return "is an absolute path";
  if (name.split("/").includes("..")) return "contains ..";
  return null;
}

/** The segments of a relative entry name; [] for the archive's root (".", "./"). */
function segmentsOf(name: string): string[] {
  return name.split("/").filter((s) => s !== "" && s !== ".");
}

const O_DIR = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;
// O_NONBLOCK: a fifo swapped in for a file must not block the open (it is then skipped).
const O_FILE = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

/** A path that names `name` inside the directory open as `dirFd`, whatever its path has become since. */
export function atDir(dirFd: number, name = ""): string {
  return name === "" ? `/proc/self/fd/${dirFd}` : `/proc/self/fd/${dirFd}/${name}`;
}

export interface PackSummary {
  entries: number;
  /** Entries left out: sockets, fifos, devices. */
  skipped: number;
}

/**
 * A tar stream of the tree under the open directory `dirFd` (entries relative to
 * it), or of one open file (`file`: its fd and entry name). The caller keeps the fd
 * open until `done` settles, once the stream was produced (or failed).
 */
export function packTree(
  dirFd: number | null,
  file?: { fd: number; entryName: string },
): { stream: tarStream.Pack; done: Promise<PackSummary> } {
  const pack = tarStream.pack();
  const summary: PackSummary = { entries: 0, skipped: 0 };
  const done = (async () => {
    try {
      if (file) await packOpenFile(pack, file.fd, file.entryName, summary);
      else if (dirFd !== null) {
        // The root itself first, so its mode travels too.
        const st = fs.fstatSync(dirFd);
        await addEntry(pack, { name: "./", type: "directory", mode: st.mode & 0o7777, mtime: st.mtime });
        await packDirectory(pack, dirFd, "", summary);
      }
      pack.finalize();
      return summary;
    } catch (err) {
      pack.destroy(err as Error);
      throw err;
    }
  })();
  // The error reaches the reader through the stream; `done` need not be awaited.
  done.catch(() => {});
  return { stream: pack, done };
}

async function packDirectory(pack: tarStream.Pack, dirFd: number, prefix: string, summary: PackSummary): Promise<void> {
  const names = fs.readdirSync(atDir(dirFd)).sort();
  for (const name of names) {
    const entryName = prefix === "" ? name : `${prefix}/${name}`;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(atDir(dirFd, name));
    } catch {
      continue; // removed meanwhile
    }
    if (st.isSymbolicLink()) {
      const linkname = fs.readlinkSync(atDir(dirFd, name));
      await addEntry(pack, { name: entryName, type: "symlink", linkname, mode: 0o777, mtime: st.mtime });
      summary.entries++;
    } else if (st.isDirectory()) {
      let fd: number;
      try {
        fd = fs.openSync(atDir(dirFd, name), O_DIR);
      } catch (err) {
        // Became a symlink (ELOOP) or went away: it is not a directory to walk any more.
        if (isErrno(err, "ELOOP", "ENOENT", "ENOTDIR")) continue;
        throw err;
      }
      try {
        await addEntry(pack, { name: `${entryName}/`, type: "directory", mode: st.mode & 0o7777, mtime: st.mtime });
        summary.entries++;
        await packDirectory(pack, fd, entryName, summary);
      } finally {
        fs.closeSync(fd);
      }
    } else if (st.isFile()) {
      await packFile(pack, dirFd, name, entryName, summary);
    } else {
      summary.skipped++;
    }
  }
}

/** One regular file (`name` in dirFd), unless it is not one (any more). */
async function packFile(
  pack: tarStream.Pack,
  dirFd: number,
  name: string,
  entryName: string,
  summary: PackSummary,
): Promise<void> {
  let fd: number;
  try {
    fd = fs.openSync(atDir(dirFd, name), O_FILE);
  } catch (err) {
    if (isErrno(err, "ELOOP", "ENOENT")) return;
    throw err;
  }
  try {
    if (fs.fstatSync(fd).isFile()) await packOpenFile(pack, fd, entryName, summary);
  } finally {
    fs.closeSync(fd);
  }
}

/** An open regular file's bytes, its size fixed when it was opened. */
async function packOpenFile(pack: tarStream.Pack, fd: number, entryName: string, summary: PackSummary): Promise<void> {
  const st = fs.fstatSync(fd);
  const entry = pack.entry({ name: entryName, type: "file", size: st.size, mode: st.mode & 0o7777, mtime: st.mtime });
  const finished = entryFinished(entry);
  for await (const chunk of readOpenFile(fd, st.size, entryName)) {
    if (!entry.write(chunk)) await drained(entry);
  }
  entry.end();
  await finished;
  summary.entries++;
}

/** Exactly `size` bytes of an open file from its start, in pieces of at most 1 MiB. */
export async function* readOpenFile(fd: number, size: number, what: string): AsyncGenerator<Buffer> {
  let position = 0;
  while (position < size) {
    const buf = Buffer.allocUnsafe(Math.min(READ_PIECE, size - position));
    const n = await new Promise<number>((resolve, reject) =>
      fs.read(fd, buf, 0, buf.length, position, (err, bytes) => (err ? reject(err) : resolve(bytes))),
    );
    if (n === 0) throw new ArchiveError("changed", `${what} shrank while it was copied`);
    position += n;
    yield n === buf.length ? buf : buf.subarray(0, n);
  }
}

const READ_PIECE = 1024 * 1024;

function addEntry(pack: tarStream.Pack, header: tarStream.Headers): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry(header, (err) => (err ? reject(err) : resolve()));
  });
}

function entryFinished(entry: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    entry.once("finish", () => resolve());
    entry.once("close", () => resolve());
    entry.once("error", reject);
  });
}

function drained(stream: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => stream.once("drain", () => resolve()));
}

export interface UnpackSummary {
  entries: number;
  /** Bytes of file content written. */
  bytes: number;
}

/**
 * Unpacks a tar stream into the existing directory `dest`. Every entry is checked
 * before anything of it is written (see the top of this file); the first refused
 * entry stops it with an ArchiveError. Existing files and symlinks are replaced,
 * existing directories merged. Modes are kept exactly, mtimes too.
 */
export async function unpackTree(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  dest: string,
): Promise<UnpackSummary> {
  const extract = tarStream.extract();
  const feeding = feed(source, extract);
  const summary: UnpackSummary = { entries: 0, bytes: 0 };
  const dirModes: Array<{ path: string; mode: number; mtime: Date | undefined }> = [];
  const files = new Set<string>();
  try {
    for await (const entry of extract) {
      const h = entry.header;
      const problem = entryNameProblem(h.name);
      if (problem) throw new ArchiveError("invalid_entry", `archive entry ${JSON.stringify(h.name)} ${problem}`);
      const segments = segmentsOf(h.name);
      if (segments.length === 0) {
        // The archive's root: the destination itself.
        if (h.type === "directory" && h.mode !== undefined) dirModes.push({ path: dest, mode: h.mode, mtime: h.mtime });
        await drain(entry);
        continue;
      }
      const target = path.join(dest, ...segments);
      const parent = ensureParents(dest, segments.slice(0, -1), h.name);
      const leaf = path.join(parent, segments.at(-1)!);
      switch (h.type) {
        case "directory":
          makeDirectory(leaf, h.name);
          dirModes.push({ path: leaf, mode: h.mode ?? 0o755, mtime: h.mtime });
          await drain(entry);
          break;
        case "file":
        case "contiguous-file":
          summary.bytes += await writeFile(entry, leaf, h.mode ?? 0o644, h.mtime);
          files.add(target);
          break;
        case "symlink":
          if (!h.linkname) throw new ArchiveError("invalid_entry", `archive symlink ${h.name} has no target`);
          replaceWith(leaf);
          fs.symlinkSync(h.linkname, leaf);
          await drain(entry);
          break;
        case "link": {
          const linkProblem = h.linkname ? entryNameProblem(h.linkname) : "has no target";
          const linked = h.linkname ? path.join(dest, ...segmentsOf(h.linkname)) : "";
          if (linkProblem || !files.has(linked)) {
            throw new ArchiveError(
              "invalid_entry",
              `archive hard link ${h.name} must name a file earlier in the same archive (${h.linkname ?? "none"})`,
            );
          }
          replaceWith(leaf);
          fs.linkSync(linked, leaf);
          files.add(target);
          await drain(entry);
          break;
        }
        default:
          throw new ArchiveError(
            "unsupported_entry",
            `archive entry ${h.name} is a ${h.type ?? "?"}; only files, directories and links are copied`,
          );
      }
      summary.entries++;
    }
    await feeding;
  } catch (err) {
    extract.destroy();
    await feeding.catch(() => {});
    if (err instanceof ArchiveError) throw err;
    if (isErrno(err)) throw err;
    throw new ArchiveError("bad_archive", `not a valid tar stream: ${(err as Error).message}`);
  }
  // Deepest first, so a read-only directory does not stop its children being written.
  for (const d of dirModes.reverse()) {
    fs.chmodSync(d.path, d.mode & 0o7777);
    if (d.mtime) fs.utimesSync(d.path, d.mtime, d.mtime);
  }
  return summary;
}

/** Pumps `source` into a writable tar parser, honouring back-pressure. */
async function feed(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, sink: tarStream.Extract): Promise<void> {
  try {
    for await (const chunk of source) {
      if (!sink.write(Buffer.from(chunk))) await drained(sink);
    }
    sink.end();
  } catch (err) {
    sink.destroy(err as Error);
    throw err;
  }
}

/** The parent directory for an entry, created where missing; never through a symlink. */
function ensureParents(dest: string, segments: string[], name: string): string {
  let dir = dest;
  for (const s of segments) {
    dir = path.join(dir, s);
    makeDirectory(dir, name);
  }
  return dir;
}

function makeDirectory(dir: string, name: string): void {
  let st: fs.Stats | null = null;
  try {
    st = fs.lstatSync(dir);
  } catch {
    st = null;
  }
  if (st?.isDirectory()) return;
  if (st?.isSymbolicLink()) {
    throw new ArchiveError("through_symlink", `archive entry ${name} would be written through the symlink ${dir}`);
  }
  if (st) fs.rmSync(dir, { force: true });
  fs.mkdirSync(dir, { mode: 0o700 });
}

/** Makes room for a new entry at `leaf`: a file or symlink there is removed, a directory too. */
function replaceWith(leaf: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(leaf);
  } catch {
    return;
  }
  fs.rmSync(leaf, { recursive: st.isDirectory(), force: true });
}

async function writeFile(entry: AsyncIterable<Uint8Array>, leaf: string, mode: number, mtime: Date | undefined) {
  replaceWith(leaf);
  const fd = fs.openSync(
    leaf,
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
    0o600,
  );
  let bytes = 0;
  try {
    for await (const chunk of entry) {
      fs.writeSync(fd, chunk);
      bytes += chunk.length;
    }
    fs.fchmodSync(fd, mode & 0o7777);
    if (mtime) fs.futimesSync(fd, mtime, mtime);
  } finally {
    fs.closeSync(fd);
  }
  return bytes;
}

async function drain(entry: AsyncIterable<Uint8Array>): Promise<void> {
  for await (const _ of entry) {
    // directories and links carry no data
  }
}

function isErrno(err: unknown, ...codes: string[]): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return typeof code === "string" && (codes.length === 0 || codes.includes(code));
}
