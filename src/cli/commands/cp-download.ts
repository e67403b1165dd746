// `sbx cp SANDBOX:PATH LOCAL` (or -): a copy out of a sandbox's workspace onto the
// user's disk. A file is written beside its destination and renamed; a directory
// unpacked beside it and moved into place once complete; a tar stream on stdout
// belongs to the user running sbx cp. A broken connection says what was kept.

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { type Download, type FilesApi, placeName } from "../../client/files.js";
import type { FileStat } from "../../protocol/types.js";
import { fileErrorWords } from "../../common/file-errors.js";
import { diskRoom } from "../../files/disk-room.js";
import { isErrno, makeDirAt, removeAt } from "../../files/handles.js";
import { placeTree } from "../../files/place.js";
import { SparseWriter } from "../../files/sparse.js";
import { ArchiveError, ownedBy } from "../../files/tar.js";
import { unpackTree } from "../../files/unpack.js";
import type { Context } from "../context.js";
import { BackendError, SbxError, UsageError } from "../../common/errors.js";
import { formatBytes } from "../render/bytes.js";
import { ExitCodes } from "../../common/exit-codes.js";
import { type CpResult, describe, type Location, type TransferMeter } from "./cp-transfer.js";

export async function download(
  files: FilesApi,
  source: Extract<Location, { kind: "sandbox" }>,
  dest: Exclude<Location, { kind: "sandbox" }>,
  meter: TransferMeter,
  ctx: Context,
  followLink: boolean,
): Promise<CpResult> {
  const received = createHash("sha256");
  // Without -L, a symlink named as the source is copied as itself (as docker cp does).
  const nofollow = !followLink;
  if (dest.kind === "stdio") {
    const d = await files.download(source, source.path, { tar: true, nofollow });
    let bytes = 0;
    const owner = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
    const what = `${placeName(source)}:${source.path}`;
    for await (const chunk of ownedBy(meter.count(received, untilBroken(d.chunks, what, "-")), owner)) {
      bytes += chunk.length;
      await ctx.io.writeOutPaced(chunk);
    }
    return {
      source: describe(source),
      destination: "-",
      type: d.type,
      bytes,
      sha256: received.digest("hex"),
      entries: null,
    };
  }
  const there = await files.stat(source, source.path, { nofollow, usage: true }).catch((err: unknown) => {
    throw followLink ? followRefused(err) : err;
  });
  if (there === null) {
    throw new SbxError("file_not_found", `${placeName(source)}:${source.path}: no such file or directory`, {
      exitCode: ExitCodes.usage,
    });
  }
  const what = `${placeName(source)}:${there.path}`;
  const name = path.posix.basename(there.path);
  const local = localDirectory(dest.path) ? path.join(dest.path, name) : dest.path;
  if (there.type === "symlink") {
    const target = there.target ?? "";
    await writingLocally(local, what, meter, null, async () => linkBeside(local, target));
    const bytes = Buffer.byteLength(target);
    received.update(target);
    return {
      source: what,
      destination: local,
      type: "symlink",
      target,
      bytes,
      sha256: received.digest("hex"),
      entries: null,
    };
  }
  if (there.type === "directory") {
    if (fs.existsSync(local) && !localDirectory(local)) {
      throw new UsageError(`${local} is a file; a directory cannot be copied onto it`);
    }
    refuseWhatDoesNotFit(local, what, there);
    const d = await files.download(source, source.path, { tar: false, nofollow });
    let bytes = 0;
    const tallied = (async function* () {
      for await (const chunk of meter.count(received, untilBroken(d.chunks, what, local))) {
        bytes += chunk.length;
        yield chunk;
      }
    })();
    const entries = await writingLocally(local, what, meter, null, () =>
      unpackBeside(local, what, (staged) =>
        // What lands on the user's disk is the user's: created by this process, without s-bits.
        unpackTree(tallied, staged, { dropSpecialBits: true }),
      ),
    );
    return {
      source: what,
      destination: local,
      type: "directory",
      bytes,
      sha256: received.digest("hex"),
      entries,
    };
  }
  refuseWhatDoesNotFit(local, what, there);
  const d = await files.download(source, source.path, { tar: false, nofollow });
  const bytes = await writingLocally(local, what, meter, there.size, () =>
    writeFileBeside(local, there.path, d, meter.count(received, untilBroken(d.chunks, what, local))),
  );
  return {
    source: what,
    destination: local,
    type: "file",
    bytes,
    sha256: received.digest("hex"),
    entries: null,
  };
}

/**
 * Refuses, before anything is written, a copy that cannot fit where it lands: what it
 * occupies in the sandbox (its allocated bytes: holes stay holes here too) against the
 * free space of the local file system. Not known (an older backend): not checked, and
 * a disk that fills up midway is said as such (writingLocally).
 */
function refuseWhatDoesNotFit(local: string, what: string, there: FileStat): void {
  if (there.allocated === undefined) return;
  const dir = path.dirname(path.resolve(local));
  const room = diskRoom(dir);
  if (room === null || there.allocated <= room.free) return;
  const where = room.mountPoint ?? dir;
  const holes =
    there.type === "file" && there.size > there.allocated
      ? ` (${formatBytes(there.size)} with its holes, which stay holes)`
      : "";
  throw new SbxError(
    "local_disk_full",
    `copying ${what} to ${local}: it takes ${formatBytes(there.allocated)} on disk${holes}, and the file system at ${where} has ${formatBytes(room.free)} free; nothing was written`,
    { exitCode: ExitCodes.storeUnusable, hint: `free some space there (df -h ${where}), or copy it elsewhere` },
  );
}

/**
 * A symlink made beside `local` and renamed onto it, its target as it was in the
 * sandbox (never followed here either: the link is what is copied, not what it names).
 */
function linkBeside(local: string, target: string): void {
  const partial = path.join(path.dirname(local), `.${path.basename(local)}.sbx-cp-${process.pid}`);
  fs.symlinkSync(target, partial);
  try {
    if (localDirectory(local) && !fs.lstatSync(local).isSymbolicLink()) {
      throw new UsageError(`${local} is a directory; a symlink cannot be copied onto it`);
    }
    fs.renameSync(partial, local);
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw err;
  }
}

/** -L on a symlink that leads out of /workspace: refused, and how to copy the link itself. */
function followRefused(err: unknown): unknown {
  if (!(err instanceof BackendError) || err.code !== "invalid_path") return err;
  return new SbxError(err.code, `${err.message}; nothing was written`, {
    exitCode: ExitCodes.usage,
    hint: "without -L (--follow-link), sbx cp copies the symlink itself",
  });
}

/** A file's bytes written beside `local` and renamed onto it: a failed copy leaves no partial file behind. */
async function writeFileBeside(
  local: string,
  inside: string,
  d: Download,
  chunks: AsyncIterable<Uint8Array>,
): Promise<number> {
  const partial = path.join(path.dirname(local), `.${path.basename(local)}.sbx-cp-${process.pid}`);
  const fd = fs.openSync(partial, "wx", 0o600);
  let open = true;
  // Zeros stay holes: a sparse file takes no more room here than in the sandbox.
  const out = new SparseWriter(fd);
  try {
    for await (const chunk of chunks) out.write(chunk);
    out.finish();
    const bytes = out.length;
    if (d.size !== null && bytes !== d.size) {
      throw new SbxError("copy_incomplete", `received ${bytes} of ${d.size} bytes of ${inside}`, {
        exitCode: ExitCodes.notStarted,
      });
    }
    fs.fchmodSync(fd, (d.mode ?? 0o644) & 0o777);
    open = false;
    fs.closeSync(fd);
    fs.renameSync(partial, local);
  } catch (err) {
    if (open) fs.closeSync(fd);
    fs.rmSync(partial, { force: true });
    throw err;
  }
  return out.length;
}

/**
 * Writes a copy onto the user's disk, a failure of that disk (full, read-only, not
 * allowed) said as what it is: a local failure (exit 74, as for any directory sbx
 * writes), where, how far the copy got, and that nothing was left at `local` (what
 * was written is removed, file or staged tree).
 */
async function writingLocally<T>(
  local: string,
  what: string,
  meter: TransferMeter,
  total: number | null,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof SbxError || !isErrno(err)) throw err;
    const got = `${formatBytes(meter.sent)}${total === null ? "" : ` of ${formatBytes(total)}`}`;
    const nothing = `nothing was written to ${local}`;
    if (isErrno(err, "ENOSPC", "EDQUOT")) {
      const room = diskRoom(path.dirname(path.resolve(local)));
      const where = room?.mountPoint ?? path.dirname(path.resolve(local));
      const quota = isErrno(err, "EDQUOT") ? "your disk quota is used up" : "the disk is full";
      const free = room === null ? "" : ` (${formatBytes(room.free)} free of ${formatBytes(room.size)})`;
      throw new SbxError(
        "local_disk_full",
        `copying ${what} to ${local}: ${quota} on the file system at ${where}${free} after ${got}; ${nothing}`,
        { exitCode: ExitCodes.storeUnusable, hint: `free some space there (df -h ${where}), or copy it elsewhere` },
      );
    }
    throw new SbxError(
      "local_write_failed",
      `copying ${what} to ${local}: ${fileErrorWords(err)} (after ${got}); ${nothing}`,
      { exitCode: ExitCodes.storeUnusable },
    );
  }
}

/**
 * Unpacks into a hidden directory beside `local` and moves the tree into place only
 * once it is complete: a copy that fails midway leaves nothing half-written there.
 */
async function unpackBeside(
  local: string,
  what: string,
  unpack: (staged: number) => Promise<{ entries: number }>,
): Promise<number> {
  const parentDir = path.dirname(path.resolve(local));
  const name = path.basename(path.resolve(local));
  fs.mkdirSync(parentDir, { recursive: true });
  const parent = fs.openSync(parentDir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  const stagedName = `.${name}.sbx-cp-${process.pid}`;
  try {
    const staged = makeDirAt(parent, stagedName, 0o700, null);
    try {
      const summary = await unpack(staged);
      placeTree(parent, stagedName, parent, name);
      return summary.entries;
    } catch (err) {
      if (err instanceof ArchiveError) {
        throw new SbxError(
          "invalid_archive",
          `${what}: the backend sent ${err.message}; nothing was written to ${local}`,
          {
            exitCode: ExitCodes.notStarted,
          },
        );
      }
      throw err;
    } finally {
      fs.closeSync(staged);
      removeAt(parent, stagedName);
    }
  } finally {
    fs.closeSync(parent);
  }
}

/**
 * The bytes of a download, a broken connection (the backend killed, the network gone)
 * said as what it means here: the copy stopped, and what of it was kept.
 */
async function* untilBroken(
  chunks: AsyncIterable<Uint8Array>,
  what: string,
  local: string,
): AsyncGenerator<Uint8Array> {
  let bytes = 0;
  try {
    for await (const chunk of chunks) {
      bytes += chunk.length;
      yield chunk;
    }
  } catch (err) {
    if (err instanceof SbxError) throw err;
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    const kept =
      local === "-"
        ? `the ${formatBytes(bytes)} written to stdout are an incomplete tar stream`
        : `nothing was written to ${local}`;
    throw new SbxError(
      "connection_lost",
      `${what}: the connection to the backend broke after ${formatBytes(bytes)} (${why}); ${kept}`,
      {
        exitCode: ExitCodes.inDoubt,
        hint: "see whether the backend is up (sbx daemon status), then copy it again",
      },
    );
  }
}

export function localDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
