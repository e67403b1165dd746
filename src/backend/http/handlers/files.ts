// File routes (docs/protocol.md, "Files"): PUT /sandbox/{id}/files?path=… (a raw
// file, or a tar stream unpacked at the path) and GET /sandbox/{id}/files?path=…
// (a file's bytes, or a directory as a tar stream; `stat=true` says what is there).
// Both stream: an upload is staged beside the workspace while it arrives, checked,
// and moved into place whole once complete; a replayed Idempotency-Key answers what
// the first upload wrote without writing again. The same two, under /volume/{volume}/files,
// read and write a named volume's directory (paths from its own "/").

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {
  ErrorCodes,
  FILE_MODE_HEADER,
  FILE_TYPE_HEADER,
  type FileStat,
  type FileUpload,
  TAR_CONTENT_TYPE,
} from "../../../protocol/types.js";
import { atDir, chownFd, makeDirAt, O_DIR, O_NEW_FILE, type Owner } from "../../../files/handles.js";
import { ArchiveError, packLink, packTree, readOpenFile } from "../../../files/tar.js";
import { unpackTree } from "../../../files/unpack.js";
import { notStarted } from "../../refusal.js";
import { isStorageFailure } from "../../runs/index.js";
import type { RequestContext } from "../context.js";
import { ApiError, invalidRequest, jsonReply, type Reply, sendStream } from "../replies.js";
import { runFixedAnswerMutation, streamedRequestDigest } from "../idempotency.js";
import { STREAMED } from "../sse.js";
import {
  type FileRoot,
  freeBytes,
  openForReading,
  SHARED_DIR_MODE,
  placeFile,
  placeTree,
  sandboxPath,
  statInWorkspace,
  uploadTarget,
  WorkspacePathError,
  workspaceRefusal,
  workspaceRoot,
} from "../../sandboxes/index.js";

const DEFAULT_FILE_MODE = 0o644;

/** What a files route reads or writes: a sandbox's workspace, or a named volume. */
interface FilesPlace {
  root: FileRoot;
  /** What it is, in messages: "sandbox NAME's workspace", "volume NAME". */
  what: string;
  /** Where an upload is staged (a directory on the same file system). */
  incoming: string;
  /** Who what is written belongs to (null: the backend's user). */
  owner: Owner | null;
}

function sandboxPlace(ctx: RequestContext): FilesPlace {
  const { sandboxes } = ctx.services;
  const sandbox = sandboxes.resolve(ctx.params.id!, { createDefault: true, warn: ctx.warn });
  const workspaceDir = sandboxes.ensureWorkspace(sandbox.sandbox_id);
  return {
    root: workspaceRoot(workspaceDir),
    what: `sandbox ${sandbox.name}'s workspace`,
    incoming: sandboxes.incomingDir(sandbox.sandbox_id),
    // What is written belongs to whoever the workspace's commands run as.
    owner: sandboxes.workspaceOwner(workspaceDir),
  };
}

function volumePlace(ctx: RequestContext): FilesPlace {
  const name = ctx.params.volume!;
  const files = ctx.services.sandboxes.volumes.files(name);
  return {
    root: { dir: files.dir, prefix: "", shared: files.owner !== null },
    what: `volume ${name}`,
    incoming: files.incoming,
    owner: files.owner,
  };
}

export const putFile = (ctx: RequestContext) => put(ctx, sandboxPlace(ctx));
export const getFile = (ctx: RequestContext) => get(ctx, sandboxPlace(ctx));
export const putVolumeFile = (ctx: RequestContext) => put(ctx, volumePlace(ctx));
export const getVolumeFile = (ctx: RequestContext) => get(ctx, volumePlace(ctx));

async function put(ctx: RequestContext, place: FilesPlace): Promise<Reply> {
  const { root, owner } = place;
  const requested = requiredPath(ctx);
  const asked = parseMode(ctx.query.get("mode")) ?? DEFAULT_FILE_MODE;
  // In a shared volume its group gets what the owner has (as the volume's default ACL gives).
  const mode = root.shared ? (asked & 0o1777) | ((asked & 0o700) >> 3) : asked;
  const isTree = (ctx.headers["content-type"] ?? "").startsWith(TAR_CONTENT_TYPE);
  // Refused before a byte of the body is read: nothing is staged for a path that cannot be written.
  const target = inWorkspace(requested, () => uploadTarget(root, requested));
  // An upload that says its size and cannot fit is refused before anything is written.
  const size = parseSize(ctx.query.get("size"));
  const room = size === null ? null : freeBytes(root.dir);
  if (size !== null && room !== null && size > room) {
    await discardRest(ctx.request);
    throw new ApiError(
      413,
      ErrorCodes.workspaceFull,
      `${size} bytes do not fit in ${place.what}: ${room} bytes left on its disk; nothing was written`,
      { needed_bytes: size, available_bytes: room },
    );
  }
  const staging = fs.mkdtempSync(path.join(place.incoming, "upload-"));
  const stagingFd = fs.openSync(staging, O_DIR);
  try {
    const sha256 = createHash("sha256");
    const digest = streamedRequestDigest(ctx.query);
    let bytes = 0;
    async function* received(): AsyncGenerator<Buffer> {
      // Not destroyed when the reader stops early: the request still gets its answer.
      for await (const chunk of ctx.request.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
        sha256.update(chunk);
        digest.update(chunk);
        bytes += chunk.length;
        yield chunk;
      }
    }
    const stagedName = isTree ? "tree" : "file";
    let entries: number | null = null;
    try {
      if (isTree) {
        const tree = makeDirAt(stagingFd, stagedName, 0o755, owner);
        try {
          if (root.shared) fs.fchmodSync(tree, SHARED_DIR_MODE);
          entries = (await unpackTree(received(), tree, { owner, sharedGroup: root.shared === true })).entries;
        } finally {
          fs.closeSync(tree);
        }
      } else {
        await writeStaged(received(), stagingFd, stagedName, mode, owner);
      }
    } catch (err) {
      // Answered once the body is all read: closing on unread bytes resets the connection, answer and all.
      await discardRest(ctx.request);
      if (err instanceof ArchiveError) {
        throw new ApiError(400, ErrorCodes.invalidArchive, `${err.message}; nothing was written`, {
          reason: err.code,
        });
      }
      // The backend's disk is full: nothing was written, and the same upload may be sent again.
      if (isStorageFailure(err)) {
        const code = (err as NodeJS.ErrnoException).code;
        throw notStarted("storage_unavailable", `the backend's disk is full (${code}); nothing was written`);
      }
      throw err;
    }
    if (!ctx.request.complete) throw incomplete();
    return await runFixedAnswerMutation(
      ctx,
      async () => {
        try {
          const upload = { root, segments: target, staging: stagingFd, stagedName, owner };
          if (isTree) placeTree(upload);
          else placeFile(upload);
        } catch (err) {
          throw workspaceRefusal(err, sandboxPath(target, root.prefix)) ?? err;
        }
        const answer: FileUpload = {
          path: sandboxPath(target, root.prefix),
          type: isTree ? "directory" : "file",
          bytes,
          sha256: sha256.digest("hex"),
          entries,
        };
        return jsonReply(201, answer);
      },
      digest.digest("hex"),
    );
  } finally {
    fs.closeSync(stagingFd);
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

async function get(ctx: RequestContext, { root }: FilesPlace): Promise<Reply> {
  const requested = requiredPath(ctx);
  // nofollow: a symlink at the path is read as itself, never followed (`sbx cp` without -L).
  const nofollow = isTrue(ctx.query.get("nofollow"));
  if (isTrue(ctx.query.get("stat"))) {
    const st = inWorkspace(requested, () =>
      statInWorkspace(root, requested, { nofollow, usage: isTrue(ctx.query.get("usage")) }),
    );
    const answer: FileStat = { ...st, mode: octal(st.mode) };
    return jsonReply(200, answer);
  }
  const entry = inWorkspace(requested, () => openForReading(root, requested, { nofollow }));
  const asTar = entry.kind === "directory" || (ctx.headers.accept ?? "").includes(TAR_CONTENT_TYPE);
  if (entry.kind === "symlink") {
    if (!asTar) {
      throw new WorkspacePathError(
        "path_conflict",
        `${entry.path} is a symlink (-> ${entry.target}): read it as a tar stream (Accept: ${TAR_CONTENT_TYPE}), or follow it (without nofollow)`,
      );
    }
    const packed = packLink(path.posix.basename(entry.path), entry.target, entry.mtime);
    const headers = { [FILE_TYPE_HEADER]: "symlink", [FILE_MODE_HEADER]: "0777", "Content-Type": TAR_CONTENT_TYPE };
    await sendStream(ctx.response, 200, headers, packed, ctx.signal);
    return STREAMED;
  }
  try {
    const headers = { [FILE_TYPE_HEADER]: entry.kind, [FILE_MODE_HEADER]: octal(entry.mode) };
    if (asTar) {
      const packed =
        entry.kind === "directory"
          ? packTree(entry.fd)
          : packTree(null, { fd: entry.fd, entryName: path.posix.basename(entry.path) });
      const body = await started(packed.stream, entry.path);
      await sendStream(ctx.response, 200, { ...headers, "Content-Type": TAR_CONTENT_TYPE }, body, ctx.signal);
      await packed.done.catch(() => {});
    } else {
      const body = await started(readOpenFile(entry.fd, entry.size, entry.path), entry.path);
      await sendStream(
        ctx.response,
        200,
        { ...headers, "Content-Type": "application/octet-stream", "Content-Length": entry.size },
        body,
        ctx.signal,
      );
    }
  } finally {
    fs.closeSync(entry.fd);
  }
  return STREAMED;
}

/**
 * A body whose first piece is already read: a read that fails before anything could be
 * sent (the file or tree changed under it) is still a 409 answer, not a connection
 * closed without one. Later failures can only cut the streamed answer short.
 */
async function started(source: AsyncIterable<Uint8Array>, where: string): Promise<AsyncIterable<Uint8Array>> {
  const it = source[Symbol.asyncIterator]();
  let first: IteratorResult<Uint8Array>;
  try {
    first = await it.next();
  } catch (err) {
    if (err instanceof ArchiveError) {
      throw new WorkspacePathError(
        "path_conflict",
        `${where} changed while it was read (${err.message}); copy it again`,
      );
    }
    throw workspaceRefusal(err, where) ?? err;
  }
  return (async function* () {
    if (first.done) return;
    yield first.value;
    for (;;) {
      const next = await it.next();
      if (next.done) return;
      yield next.value;
    }
  })();
}

/** A read of the workspace, its file system errors said as refusals (never with host paths). */
function inWorkspace<T>(requested: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw workspaceRefusal(err, requested) ?? err;
  }
}

function requiredPath(ctx: RequestContext): string {
  const requested = ctx.query.get("path");
  if (requested === null || requested === "") {
    throw invalidRequest("path", "path is required, e.g. ?path=/workspace/src (a volume: ?path=/src)");
  }
  return requested;
}

/** A flag in the query: "true" or "1". */
function isTrue(text: string | null): boolean {
  return text === "true" || text === "1";
}

/** `?mode=0755`: permission bits in octal; null when not given. */
function parseMode(text: string | null): number | null {
  if (text === null) return null;
  if (!/^0?[0-7]{1,4}$/.test(text)) throw invalidRequest("mode", "mode must be octal permission bits, e.g. 0755");
  return Number.parseInt(text, 8);
}

function octal(mode: number): string {
  return `0${(mode & 0o7777).toString(8).padStart(3, "0")}`;
}

async function writeStaged(
  source: AsyncIterable<Buffer>,
  staging: number,
  name: string,
  mode: number,
  owner: Owner | null,
): Promise<void> {
  const fd = fs.openSync(atDir(staging, name), O_NEW_FILE, 0o600);
  try {
    for await (const chunk of source) {
      let offset = 0;
      while (offset < chunk.length) {
        offset += await new Promise<number>((resolve, reject) =>
          fs.write(fd, chunk, offset, chunk.length - offset, null, (err, n) => (err ? reject(err) : resolve(n))),
        );
      }
    }
    chownFd(fd, owner);
    fs.fchmodSync(fd, mode);
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads what is left of a request body and drops it. */
/** The `size` query parameter: bytes the upload will write, or null when not given. */
function parseSize(text: string | null): number | null {
  if (text === null) return null;
  if (!/^[0-9]{1,15}$/.test(text)) throw invalidRequest("size", "size must be a whole number of bytes");
  return Number(text);
}

async function discardRest(req: RequestContext["request"]): Promise<void> {
  if (req.complete) return;
  try {
    for await (const _ of req.iterator({ destroyOnReturn: false })) {
      // dropped
    }
  } catch {
    // the connection broke: nothing left to read
  }
}

function incomplete(): ApiError {
  return new ApiError(400, ErrorCodes.invalidRequest, "the upload was not received completely; nothing was written", {
    field: "body",
  });
}
