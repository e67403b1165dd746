// Directory trees as tar streams, shared by `sbx cp` (the user's disk) and the
// backend's files routes (a sandbox's workspace); see docs/protocol.md, "Files".
// Streamed: neither side holds a whole file in memory. Here: packing, and what both
// directions share; unpacking is ./unpack.ts.
//
// Packing walks the tree one directory at a time through open directory handles
// (O_NOFOLLOW), so a symlink swapped in during the walk is stored as a symlink, never
// followed. Symlinks are kept as they are (their targets are never followed here).

import fs from "node:fs";
import * as tarStream from "tar-stream";
import { atDir, isErrno, O_DIR } from "./handles.js";

export class ArchiveError extends Error {
  constructor(
    readonly code:
      | "invalid_entry"
      | "unsupported_entry"
      | "through_symlink"
      | "name_too_long"
      | "changed"
      | "bad_archive",
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
export function segmentsOf(name: string): string[] {
  return name.split("/").filter((s) => s !== "" && s !== ".");
}

// O_NONBLOCK: a fifo swapped in for a file must not block the open (it is then skipped).
const O_FILE = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

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

/** A tar stream of one symlink, as it is (its target never followed). */
export async function* packLink(entryName: string, linkname: string, mtime: Date): AsyncGenerator<Uint8Array> {
  const pack = tarStream.pack();
  pack.entry({ name: entryName, type: "symlink", linkname, mode: 0o777, mtime });
  pack.finalize();
  for await (const chunk of pack) yield chunk as Uint8Array;
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
      let linkname: string;
      try {
        linkname = fs.readlinkSync(atDir(dirFd, name));
      } catch (err) {
        // No longer a symlink (EINVAL), or gone: changed meanwhile, left out as a removed entry is.
        if (isErrno(err, "EINVAL", "ENOENT")) continue;
        throw err;
      }
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
  // Awaited below; when the read fails instead, the whole pack is destroyed with its error.
  finished.catch(() => {});
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

/**
 * Until a stream takes writes again, or is closed, or `stop` says no more is written to
 * it (a destroyed tar parser may never close while an entry's write is pending).
 */
function drained(stream: NodeJS.EventEmitter, stop?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      stop?.removeEventListener("abort", done);
      resolve();
    };
    stream.on("drain", done);
    stream.on("close", done);
    stop?.addEventListener("abort", done);
  });
}

function isAsync<T>(source: AsyncIterable<T> | Iterable<T>): source is AsyncIterable<T> {
  return Symbol.asyncIterator in source;
}

/**
 * Pumps `source` into a writable tar parser, honouring back-pressure, until the source
 * ends or `stop` is aborted (the reader gave up: a refused entry, a failed write).
 */
export async function feed(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  sink: tarStream.Extract,
  stop?: AbortSignal,
): Promise<void> {
  try {
    // Iterated by hand: when the reader stops, the source is left as it is, not
    // destroyed (an HTTP request still gets its answer).
    const it = isAsync(source) ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
    for (;;) {
      if (stop?.aborted || sink.destroyed) return;
      const next = await it.next();
      if (next.done) break;
      if (stop?.aborted || sink.destroyed) return;
      // A view, not a copy: Buffer.from(buffer) copied every chunk (and its allocation
      // kept the collector busy: a third of the daemon's CPU for a 256 MiB tree, BENCHMARKS.md).
      const v = next.value;
      const chunk = Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
      if (!sink.write(chunk)) await drained(sink, stop);
    }
    sink.end();
  } catch (err) {
    sink.destroy(err as Error);
    throw err;
  }
}

/**
 * The same tar stream as it would land for the user running `sbx cp` (what
 * `sbx cp SANDBOX:PATH -` writes): every entry owned by `owner`, without user or group
 * names, and without setuid, setgid or sticky bits (docs/protocol.md, "Files").
 */
export async function* ownedBy(
  source: AsyncIterable<Uint8Array>,
  owner: { uid: number; gid: number },
): AsyncGenerator<Uint8Array> {
  const extract = tarStream.extract();
  const pack = tarStream.pack();
  const feeding = feed(source, extract);
  feeding.catch(() => {});
  const repacking = (async () => {
    try {
      for await (const entry of extract) {
        const { uname: _u, gname: _g, ...h } = entry.header;
        const header = { ...h, mode: (h.mode ?? 0o644) & 0o777, uid: owner.uid, gid: owner.gid };
        let written: () => void = () => {};
        let failed: (err: Error) => void = () => {};
        const done = new Promise<void>((resolve, reject) => {
          written = resolve;
          failed = reject;
        });
        const out = pack.entry(header, (err) => (err ? failed(err) : written()));
        for await (const chunk of entry) {
          if (!out.write(chunk)) await drained(out);
        }
        out.end();
        await done;
      }
      pack.finalize();
    } catch (err) {
      pack.destroy(err as Error);
    }
  })();
  try {
    for await (const chunk of pack) yield chunk as Buffer;
    await feeding;
  } finally {
    extract.destroy();
    await repacking;
  }
}
