// sbx cp: copy files and directories into a sandbox's /workspace and out of it, as
// `docker cp` and `kubectl cp` do. Streamed both ways (a directory travels as a tar
// stream), byte-exact and with modes kept; an upload is sent once with a fresh
// Idempotency-Key, and the sha256 the backend received is compared with what was sent.

import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { FilesApi } from "../../client/files.js";
import { packTree, readOpenFile, unpackTree } from "../../files/tar.js";
import type { FileUpload } from "../../protocol/types.js";
import { isValidSandboxRef } from "../../protocol/validate.js";
import type { RunFn } from "../command.js";
import type { Context } from "../context.js";
import { SbxError, UsageError } from "../../common/errors.js";
import { refusalIsUsage } from "../refusal.js";
import { formatBytes } from "../render/bytes.js";
import { counted } from "../render/words.js";
import { printJson } from "../render/outcome.js";
import { ExitCodes } from "../../common/exit-codes.js";

export type Location =
  | { kind: "local"; path: string }
  | { kind: "stdio" }
  | { kind: "sandbox"; sandbox: string; path: string };

export interface CpOptions {
  source: Location;
  destination: Location;
  json: boolean;
}

export interface CpResult {
  source: string;
  destination: string;
  type: "file" | "directory";
  /** Bytes moved: a file's, or the tar stream's. */
  bytes: number;
  /** sha256 of those bytes, as both sides saw them. */
  sha256: string;
  /** Entries of a tar stream; null for a file. */
  entries: number | null;
}

const SANDBOX_SPEC = /^([A-Za-z0-9][A-Za-z0-9_.-]{0,62}):(.*)$/s;

/** `-`, SANDBOX:PATH, or a local path (write a local path with a colon as ./a:b). */
export function parseLocation(arg: string): Location {
  if (arg === "-") return { kind: "stdio" };
  const m = SANDBOX_SPEC.exec(arg);
  if (m && isValidSandboxRef(m[1]!)) {
    const inside = m[2]!;
    if (inside.split("/").includes("..")) {
      throw new UsageError(`${arg}: a path in a sandbox may not contain ..`, "name it from /workspace down");
    }
    if (inside.startsWith("/") && inside !== "/workspace" && !inside.startsWith("/workspace/")) {
      throw new UsageError(
        `${arg}: only /workspace can be copied to or from`,
        "e.g. build:/workspace/src or build:src",
      );
    }
    return { kind: "sandbox", sandbox: m[1]!, path: inside === "" ? "/workspace" : inside };
  }
  return { kind: "local", path: arg };
}

export function parseCpOptions(source: string, destination: string, raw: { json?: boolean }): CpOptions {
  const s = parseLocation(source);
  const d = parseLocation(destination);
  if ((s.kind === "sandbox") === (d.kind === "sandbox")) {
    throw new UsageError(
      s.kind === "sandbox" ? "both sides name a sandbox; one must be local (or -)" : "one side must be SANDBOX:PATH",
      "e.g. sbx cp ./src build:/workspace/src, or sbx cp build:/workspace/out.txt .",
    );
  }
  if (s.kind === "stdio" && d.kind === "stdio") throw new UsageError("- can be only one side");
  return { source: s, destination: d, json: raw.json === true };
}

function describe(l: Location): string {
  return l.kind === "stdio" ? "-" : l.kind === "sandbox" ? `${l.sandbox}:${l.path}` : l.path;
}

const newKey = () => `sbx-${randomUUID()}`;

export async function run(opts: CpOptions, ctx: Context): Promise<number> {
  const files = new FilesApi((await ctx.api()).http);
  const meter = new TransferMeter(ctx, opts);
  let result: CpResult;
  try {
    result =
      opts.destination.kind === "sandbox"
        ? // An upload the backend refused (a path out of /workspace, a bad archive) wrote nothing.
          await refusalIsUsage(
            () =>
              upload(
                files,
                opts.source as Exclude<Location, { kind: "sandbox" }>,
                opts.destination as Extract<Location, { kind: "sandbox" }>,
                meter,
              ),
            "nothing was written",
          )
        : await download(files, opts.source as Extract<Location, { kind: "sandbox" }>, opts.destination, meter, ctx);
  } finally {
    meter.stop();
  }
  if (opts.json) printJson(ctx, result);
  else if (opts.destination.kind !== "stdio") {
    const what =
      result.entries === null
        ? formatBytes(result.bytes)
        : `${counted(result.entries, "entry", "entries")}, ${formatBytes(result.bytes)} of tar`;
    ctx.io.info(`sbx: copied ${what} to ${result.destination}`);
  }
  return ExitCodes.ok;
}

async function upload(
  files: FilesApi,
  source: Exclude<Location, { kind: "sandbox" }>,
  dest: Extract<Location, { kind: "sandbox" }>,
  meter: TransferMeter,
): Promise<CpResult> {
  const sent = createHash("sha256");
  let answer: FileUpload;
  if (source.kind === "stdio") {
    answer = await files.upload(dest.sandbox, dest.path, meter.count(sent, meter.ctx.io.stdinChunks()), {
      tar: true,
      idempotencyKey: newKey(),
    });
  } else {
    const st = localStat(source.path);
    const inside = await uploadTarget(files, dest, path.basename(path.resolve(source.path)), st.isDirectory());
    if (st.isDirectory()) {
      const dirFd = fs.openSync(source.path, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
      try {
        const packed = packTree(dirFd);
        answer = await files.upload(dest.sandbox, inside, meter.count(sent, packed.stream), {
          tar: true,
          idempotencyKey: newKey(),
        });
        await packed.done;
      } finally {
        fs.closeSync(dirFd);
      }
    } else {
      const fd = fs.openSync(source.path, fs.constants.O_RDONLY);
      try {
        const size = fs.fstatSync(fd).size;
        answer = await files.upload(dest.sandbox, inside, meter.count(sent, readOpenFile(fd, size, source.path)), {
          tar: false,
          mode: st.mode,
          idempotencyKey: newKey(),
        });
      } finally {
        fs.closeSync(fd);
      }
    }
  }
  const sha256 = sent.digest("hex");
  if (answer.sha256 !== sha256) {
    throw new SbxError(
      "copy_corrupted",
      `the backend received bytes whose sha256 (${answer.sha256}) is not what was sent (${sha256})`,
      { exitCode: ExitCodes.failure, hint: "copy it again" },
    );
  }
  return {
    source: describe(source),
    destination: `${dest.sandbox}:${answer.path}`,
    type: answer.type,
    bytes: answer.bytes,
    sha256,
    entries: answer.entries,
  };
}

/** Where a local file or directory lands: into a directory that is there (or named with a trailing /), else at the path. */
async function uploadTarget(
  files: FilesApi,
  dest: Extract<Location, { kind: "sandbox" }>,
  name: string,
  isDirectory: boolean,
): Promise<string> {
  if (dest.path.endsWith("/") && !isDirectory) return `${dest.path}${name}`;
  const there = await files.stat(dest.sandbox, dest.path);
  if (there?.type === "directory") return `${there.path}/${name}`;
  if (there && isDirectory) {
    throw new UsageError(`${dest.sandbox}:${there.path} is a file; a directory cannot be copied onto it`);
  }
  return dest.path;
}

async function download(
  files: FilesApi,
  source: Extract<Location, { kind: "sandbox" }>,
  dest: Exclude<Location, { kind: "sandbox" }>,
  meter: TransferMeter,
  ctx: Context,
): Promise<CpResult> {
  const received = createHash("sha256");
  if (dest.kind === "stdio") {
    const d = await files.download(source.sandbox, source.path, { tar: true });
    let bytes = 0;
    for await (const chunk of meter.count(received, d.chunks)) {
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
  const there = await files.stat(source.sandbox, source.path);
  if (there === null) {
    throw new SbxError("file_not_found", `${source.sandbox}:${source.path}: no such file or directory`, {
      exitCode: ExitCodes.failure,
    });
  }
  const name = path.posix.basename(there.path);
  const local = localDirectory(dest.path) ? path.join(dest.path, name) : dest.path;
  if (there.type === "directory") {
    if (fs.existsSync(local) && !localDirectory(local)) {
      throw new UsageError(`${local} is a file; a directory cannot be copied onto it`);
    }
    fs.mkdirSync(local, { recursive: true });
    const d = await files.download(source.sandbox, source.path, { tar: false });
    let bytes = 0;
    const tallied = (async function* () {
      for await (const chunk of meter.count(received, d.chunks)) {
        bytes += chunk.length;
        yield chunk;
      }
    })();
    const summary = await unpackTree(tallied, local);
    return {
      source: `${source.sandbox}:${there.path}`,
      destination: local,
      type: "directory",
      bytes,
      sha256: received.digest("hex"),
      entries: summary.entries,
    };
  }
  const d = await files.download(source.sandbox, source.path, { tar: false });
  // Written beside the target and renamed: a failed copy leaves no partial file behind.
  const partial = path.join(path.dirname(local), `.${path.basename(local)}.sbx-cp-${process.pid}`);
  const fd = fs.openSync(partial, "wx", 0o600);
  let bytes = 0;
  try {
    for await (const chunk of meter.count(received, d.chunks)) {
      fs.writeSync(fd, chunk);
      bytes += chunk.length;
    }
    if (d.size !== null && bytes !== d.size) {
      throw new SbxError("copy_incomplete", `received ${bytes} of ${d.size} bytes of ${there.path}`, {
        exitCode: ExitCodes.failure,
      });
    }
    fs.fchmodSync(fd, d.mode ?? 0o644);
    fs.closeSync(fd);
    fs.renameSync(partial, local);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(partial, { force: true });
    throw err;
  }
  return {
    source: `${source.sandbox}:${there.path}`,
    destination: local,
    type: "file",
    bytes,
    sha256: received.digest("hex"),
    entries: null,
  };
}

function localStat(p: string): fs.Stats {
  try {
    return fs.statSync(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(
      `${p}: ${code === "ENOENT" ? "no such file or directory" : (err as Error).message}; nothing was sent`,
    );
  }
}

function localDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Counts and hashes the bytes going by, and shows them on a spinner while they do. */
class TransferMeter {
  private bytes = 0;
  private lastUpdate = 0;
  private readonly progress;

  constructor(
    readonly ctx: Context,
    private readonly opts: CpOptions,
  ) {
    this.progress = ctx.io.progress(this.text());
  }

  async *count(hash: ReturnType<typeof createHash>, chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    for await (const chunk of chunks) {
      hash.update(chunk);
      this.bytes += chunk.length;
      const now = Date.now();
      if (now - this.lastUpdate > 100) {
        this.lastUpdate = now;
        this.progress.update(this.text());
      }
      yield chunk;
    }
  }

  stop(): void {
    this.progress.stop();
  }

  private text(): string {
    return `copying ${describe(this.opts.source)} to ${describe(this.opts.destination)}… ${formatBytes(this.bytes)}`;
  }
}

/** Bound to `sbx cp` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseCpOptions(c.args[0]!, c.args[1]!, c.optsWithGlobals()), ctx);
