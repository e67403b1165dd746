// A sandbox's root made from an image (docs/images.md, "A sandbox from an image"):
// the image found in the backend's store by reference or digest (pulled when it is not
// there), its layers unpacked into <sandboxDir>/root, every entry owned by the
// sandbox's own uid (a writable copy of its own: writes to / stay in it, never in the
// image). Refused as image_pull_failed, with nothing left, when it cannot be made.

import fs from "node:fs";
import path from "node:path";
import type { Owner } from "../../files/handles.js";
import {
  canonicalRef,
  type ImageRecord,
  ImagePullError,
  ImageRefError,
  ImageStore,
  isDigest,
  parseImageRef,
  pullImage,
  unpackImage,
} from "../images/index.js";
import { ErrorCodes } from "../../protocol/types.js";
import { invalidField, Refusal } from "../refusal.js";

export interface SandboxImage {
  reference: string;
  digest: string;
  platform: string;
}

/** What a sandbox's row keeps of its image: what it says, and the Env and WorkingDir its commands start with. */
export interface StoredImage extends SandboxImage {
  env: string[];
  /** The image's WorkingDir ("" or absent: none; rows made before it was kept). */
  workingDir?: string;
  /** The image's User, kept to say it is not applied (docs/images.md, "Who runs"). */
  user?: string;
}

/** The image's WorkingDir as an absolute, normalised sandbox path; null: the image names none (or the root is the host's). */
export function imageWorkingDir(row: { image: string | null }): string | null {
  if (row.image === null) return null;
  const dir = (JSON.parse(row.image) as StoredImage).workingDir ?? "";
  return dir === "" ? null : path.posix.resolve("/", dir);
}

/**
 * The host directory behind `workingDir` (an absolute sandbox path outside /workspace) in
 * an image sandbox's root, when it is a directory that exists and, symlinks followed on
 * the host, stays in that root; refused (invalid_request) otherwise. The command itself
 * starts there inside the sandbox, where its root resolves any symlink.
 */
export function rootCwd(rootDir: string, workingDir: string, sandboxName: string): string {
  const lexical = path.join(rootDir, workingDir);
  let realRoot: string;
  let real: string;
  try {
    realRoot = fs.realpathSync(rootDir);
    real = fs.realpathSync(lexical);
  } catch {
    throw invalidField("working_dir", `${workingDir} does not exist in sandbox ${sandboxName}`);
  }
  const rel = path.relative(realRoot, real);
  if (rel.startsWith("..") || path.isAbsolute(rel)) {
    throw invalidField("working_dir", `${workingDir} leads outside the sandbox's root (through a symlink)`);
  }
  if (!fs.statSync(real).isDirectory()) {
    throw invalidField("working_dir", `${workingDir} is not a directory in sandbox ${sandboxName}`);
  }
  return path.join(rootDir, rel);
}

/** The directory a sandbox's image root is in. */
export function imageRootOf(sandboxDir: string): string {
  return path.join(sandboxDir, "root");
}

function refused(image: string, reason: string): Refusal {
  return new Refusal(ErrorCodes.imagePullFailed, `image ${JSON.stringify(image)}: ${reason}; no sandbox was created`, {
    image,
    reason,
  });
}

/** The image a reference names in the store, pulled into it when it is not there. */
export async function resolveImage(dataDir: string, text: string): Promise<ImageRecord> {
  const store = new ImageStore(dataDir);
  let ref: ReturnType<typeof parseImageRef> | null = null;
  if (!isDigest(text)) {
    try {
      ref = parseImageRef(text);
    } catch (err) {
      if (err instanceof ImageRefError) throw refused(text, err.message);
      throw err;
    }
    if (ref.kind === "oci" && !path.isAbsolute(ref.dir)) throw refused(text, "an oci: directory must be absolute");
    if (ref.kind === "oci-archive" && !path.isAbsolute(ref.file)) {
      throw refused(text, "an oci-archive: file must be absolute");
    }
  }
  // A tag is resolved at create: an oci: layout or a registry tag is read again; a digest is used as stored.
  const stored = store.findImage(text, ref === null ? null : canonicalRef(ref));
  if (stored !== null && (ref === null || (ref.kind === "registry" && ref.digest !== null))) return stored;
  if (ref === null) throw refused(text, "no image with that digest in the store");
  try {
    return await pullImage(store, ref);
  } catch (err) {
    if (err instanceof ImagePullError) throw refused(text, err.message);
    throw err;
  }
}

/** Unpacks the image into the sandbox's root (made here, empty); on failure nothing of it stays. */
export async function makeImageRoot(
  dataDir: string,
  sandboxDir: string,
  image: ImageRecord,
  owner: Owner | null,
  text: string,
): Promise<void> {
  const root = imageRootOf(sandboxDir);
  fs.mkdirSync(root, { mode: 0o755 });
  if (owner !== null) fs.chownSync(root, owner.uid, owner.gid);
  try {
    await unpackImage(new ImageStore(dataDir), image, root, owner);
  } catch (err) {
    fs.rmSync(root, { recursive: true, force: true });
    throw refused(text, `its layers cannot be unpacked: ${(err as Error).message}`);
  }
}

export function imageInfo(image: ImageRecord, reference: string): SandboxImage {
  const p = image.platform;
  return {
    reference,
    digest: image.digest,
    platform: `${p.os}/${p.architecture}${p.variant ? `/${p.variant}` : ""}`,
  };
}

/** The image a sandbox's root was made from, as its row keeps it (JSON), for the wire; null: the host's. */
export function storedImageOf(row: { image: string | null }): SandboxImage | null {
  if (row.image === null) return null;
  const { reference, digest, platform } = JSON.parse(row.image) as StoredImage;
  return { reference, digest, platform };
}

/** An image's Env (NAME=VALUE lines) as variables; a line without `=` is left out. */
export function envOf(lines: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines) {
    const eq = line.indexOf("=");
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}
