// sbx cp: copy files and directories into a sandbox's /workspace and out of it, as
// `docker cp` and `kubectl cp` do, and into and out of a named volume (volume/NAME:PATH). Streamed both ways (a directory travels as a tar
// stream), byte-exact and with modes kept; an upload is sent once with a fresh
// Idempotency-Key, and the sha256 the backend received is compared with what was sent.

import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { FilesApi, placeName } from "../../client/files.js";
import { volumeNameProblem } from "../../protocol/volumes.js";
import { packTree, readOpenFile } from "../../files/tar.js";
import type { FileUpload } from "../../protocol/types.js";
import { isValidSandboxRef } from "../../protocol/validate.js";
import type { RunFn } from "../command.js";
import type { Context } from "../context.js";
import { BackendError, SbxError, UsageError } from "../../common/errors.js";
import { refusalIsUsage } from "../refusal.js";
import { formatBytes } from "../render/bytes.js";
import { counted } from "../render/words.js";
import { printJson } from "../render/outcome.js";
import { ExitCodes } from "../../common/exit-codes.js";
import { NoSandboxSide, suggestingSandbox } from "./cp-suggest.js";
import { wholeSandboxRef } from "../id-prefix.js";
import { download } from "./cp-download.js";
import { type CpOptions, type CpResult, describe, type Location, TransferMeter } from "./cp-transfer.js";

export type { CpOptions, CpResult, Location } from "./cp-transfer.js";

const SANDBOX_SPEC = /^([A-Za-z0-9][A-Za-z0-9_.-]{0,62}):(.*)$/s;
/** volume/NAME:PATH — a named volume's files, PATH from its own root (docs/operations.md, "Named volumes"). */
const VOLUME_SPEC = /^volume\/([^:/]*):(.*)$/s;

/** `-`, SANDBOX:PATH, volume/NAME:PATH, or a local path (write a local path with a colon as ./a:b). */
export function parseLocation(arg: string): Location {
  if (arg === "-") return { kind: "stdio" };
  const v = VOLUME_SPEC.exec(arg);
  if (v) {
    const problem = volumeNameProblem(v[1]!);
    if (problem !== null) throw new UsageError(`${arg}: ${problem}`, "e.g. volume/cache:/deps");
    if (v[2]!.split("/").includes("..")) {
      throw new UsageError(`${arg}: a path in a volume may not contain ..`, "name it from the volume's / down");
    }
    return { kind: "sandbox", sandbox: v[1]!, path: v[2] === "" ? "/" : v[2]!, volume: true };
  }
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

export function parseCpOptions(
  source: string,
  destination: string,
  raw: { json?: boolean; followLink?: boolean },
): CpOptions {
  const s = parseLocation(source);
  const d = parseLocation(destination);
  if (s.kind !== "sandbox" && d.kind !== "sandbox") throw new NoSandboxSide([source, destination]);
  if (s.kind === "sandbox" && d.kind === "sandbox") {
    throw new UsageError(
      "both sides name a sandbox; one must be local (or -)",
      "e.g. sbx cp ./src build:/workspace/src, or sbx cp build:/workspace/out.txt .",
    );
  }
  if (s.kind === "stdio" && d.kind === "stdio") throw new UsageError("- can be only one side");
  return { source: s, destination: d, json: raw.json === true, followLink: raw.followLink === true };
}

const newKey = () => `sbx-${randomUUID()}`;

export async function run(opts: CpOptions, ctx: Context): Promise<number> {
  const files = new FilesApi((await ctx.api()).http);
  const meter = new TransferMeter(ctx, opts);
  const { source, destination } = opts;
  let result: CpResult;
  try {
    // What the backend refused (a path out of /workspace, nothing there, a bad archive)
    // wrote nothing, either way.
    result = await refusalIsUsage(
      () =>
        destination.kind === "sandbox"
          ? upload(files, source as Exclude<Location, { kind: "sandbox" }>, destination, meter).catch((err) => {
              throw uploadInDoubt(err, destination, meter.sent);
            })
          : download(files, source as Extract<Location, { kind: "sandbox" }>, destination, meter, ctx, opts.followLink),
      "nothing was written",
    );
  } finally {
    meter.stop();
  }
  if (opts.json) printJson(ctx, result);
  else if (opts.destination.kind !== "stdio") {
    const what =
      result.type === "symlink"
        ? `the symlink ${path.posix.basename(result.source)} -> ${result.target}`
        : result.entries === null
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
    answer = await files.upload(dest, dest.path, meter.count(sent, meter.ctx.io.stdinChunks()), {
      tar: true,
      idempotencyKey: newKey(),
    });
  } else {
    const st = localStat(source.path);
    const inside = await uploadTarget(files, dest, path.basename(path.resolve(source.path)), st.isDirectory());
    if (st.isDirectory()) {
      const dirFd = fs.openSync(source.path, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
      try {
        const treeSize = treeFileBytes(source.path);
        const packed = packTree(dirFd);
        answer = await files.upload(dest, inside, meter.count(sent, packed.stream), {
          tar: true,
          idempotencyKey: newKey(),
          // What its files hold: the backend refuses, before writing, what cannot fit.
          ...(treeSize === undefined ? {} : { size: treeSize }),
        });
        await packed.done;
      } finally {
        fs.closeSync(dirFd);
      }
    } else {
      const fd = fs.openSync(source.path, fs.constants.O_RDONLY);
      try {
        const size = fs.fstatSync(fd).size;
        answer = await files.upload(dest, inside, meter.count(sent, readOpenFile(fd, size, source.path)), {
          tar: false,
          mode: st.mode,
          idempotencyKey: newKey(),
          size,
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
      { exitCode: ExitCodes.notStarted, hint: "copy it again" },
    );
  }
  return {
    source: describe(source),
    destination: `${placeName(dest)}:${answer.path}`,
    type: answer.type,
    bytes: answer.bytes,
    sha256,
    entries: answer.entries,
  };
}

/** Bytes of the regular files under a directory (symlinks not followed), as a tar of it will write. */
function treeFileBytes(dir: string): number | undefined {
  let total = 0;
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) total += fs.lstatSync(p).size;
    }
  };
  try {
    walk(dir);
  } catch {
    return undefined; // unreadable: packing it says why
  }
  return total;
}

/**
 * An upload whose connection broke after bytes were sent (the backend killed, the
 * network gone): said with what is known. The backend places an upload only once it
 * is complete, so the path holds all of it or what was there before.
 */
function uploadInDoubt(err: unknown, dest: Extract<Location, { kind: "sandbox" }>, sent: number): unknown {
  if (!(err instanceof BackendError) || err.exitCode !== ExitCodes.inDoubt) return err;
  const where = dest.path.startsWith("/") ? dest.path : `${dest.volume ? "" : "/workspace"}/${dest.path}`;
  return new SbxError(
    "connection_lost",
    `copy to ${placeName(dest)}:${dest.path}: the connection to the backend broke after ${formatBytes(sent)} sent; ` +
      `an upload is placed only once complete, so ${where} holds all of it or what was there before`,
    {
      exitCode: ExitCodes.inDoubt,
      hint: dest.volume
        ? `look with sbx cp ${placeName(dest)}:${where} -, then copy it again`
        : `look with sbx exec -s ${dest.sandbox} -- ls -l ${where}, then copy it again`,
    },
  );
}

/** Where a local file or directory lands: into a directory that is there (or named with a trailing /), else at the path. */
async function uploadTarget(
  files: FilesApi,
  dest: Extract<Location, { kind: "sandbox" }>,
  name: string,
  isDirectory: boolean,
): Promise<string> {
  if (dest.path.endsWith("/") && !isDirectory) return `${dest.path}${name}`;
  const there = await files.stat(dest, dest.path);
  if (there?.type === "directory") return `${there.path === "/" ? "" : there.path}/${name}`;
  if (there && isDirectory) {
    throw new UsageError(`${placeName(dest)}:${there.path} is a file; a directory cannot be copied onto it`);
  }
  return dest.path;
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

/** Bound to `sbx cp` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const opts = await suggestingSandbox(ctx, () => parseCpOptions(c.args[0]!, c.args[1]!, c.optsWithGlobals()));
  // sbx_4k2m:PATH (a prefix of a sandbox id) names the sandbox it is the prefix of.
  const whole = async (l: Location): Promise<Location> =>
    l.kind === "sandbox" && !l.volume ? { ...l, sandbox: await wholeSandboxRef(ctx, l.sandbox) } : l;
  return run({ ...opts, source: await whole(opts.source), destination: await whole(opts.destination) }, ctx);
};
