// Pulling an image into the store (docs/images.md): the reference's manifest (an index
// resolved to this machine's platform), its config and layers, each checked against its
// sha256 before it is kept; the image's record last, so an image is listed only once
// everything it needs is in the store.

import { createHash } from "node:crypto";
import path from "node:path";
import {
  choosePlatform,
  ImageFormatError,
  indexEntries,
  isIndex,
  parseConfig,
  parseJson,
  parseManifest,
} from "./manifest.js";
import { withUnpackedArchive } from "./oci-archive.js";
import { OciLayoutSource } from "./oci-layout.js";
import { canonicalRef, type ImageRef } from "./reference.js";
import { insecureFromEnv, RegistrySource } from "./registry.js";
import { type ImageSource, ImagePullError } from "./source.js";
import { BlobMismatch, type ImageRecord, type ImageStore } from "./store.js";

export interface PullOptions {
  insecure?: readonly string[];
  fetch?: typeof fetch;
  now?: () => Date;
  /** Told each step ("layer 2/3 sha256:…"), for progress. */
  progress?: (step: string) => void;
}

function digestOf(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

export function sourceFor(ref: Exclude<ImageRef, { kind: "oci-archive" }>, opts: PullOptions = {}): ImageSource {
  if (ref.kind === "oci") return new OciLayoutSource(ref.dir, ref.tag);
  return new RegistrySource(ref.registry, ref.repository, ref.digest ?? ref.tag ?? "latest", {
    insecure: opts.insecure ?? insecureFromEnv(),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}

/** Pulls `ref` into `store` and returns its record (an image already there gains the reference). */
export async function pullImage(store: ImageStore, ref: ImageRef, opts: PullOptions = {}): Promise<ImageRecord> {
  if (ref.kind === "oci" && !path.isAbsolute(ref.dir)) throw new Error("an oci: directory must be absolute here");
  if (ref.kind === "oci-archive") {
    if (!path.isAbsolute(ref.file)) throw new Error("an oci-archive: file must be absolute here");
    return withUnpackedArchive(ref.file, path.join(store.root, "tmp"), (dir) => {
      const layout = new OciLayoutSource(dir, ref.tag, `the OCI archive ${ref.file}`);
      return pullChecked(store, layout, ref, opts);
    });
  }
  return pullChecked(store, sourceFor(ref, opts), ref, opts);
}

async function pullChecked(
  store: ImageStore,
  source: ImageSource,
  ref: ImageRef,
  opts: PullOptions,
): Promise<ImageRecord> {
  try {
    return await pullFrom(store, source, ref, opts);
  } catch (err) {
    if (err instanceof ImageFormatError) throw new ImagePullError(`${source.describe}: ${err.message}`, false);
    if (err instanceof BlobMismatch) throw new ImagePullError(`${source.describe}: ${err.message}`, true);
    throw err;
  }
}

async function pullFrom(
  store: ImageStore,
  source: ImageSource,
  ref: ImageRef,
  opts: PullOptions,
): Promise<ImageRecord> {
  const say = opts.progress ?? (() => {});
  let doc = await source.root();
  let digest = digestOf(doc.bytes);
  if (ref.kind === "registry" && ref.digest !== null && ref.tag === null && digest !== ref.digest) {
    throw new ImagePullError(`${source.describe}: the manifest for ${ref.digest} arrived as ${digest}: refused`, false);
  }
  let json = parseJson(doc.bytes, "the manifest");
  if (isIndex(json, doc.contentType)) {
    const entry = choosePlatform(indexEntries(json));
    doc = await source.manifest(entry.digest);
    digest = digestOf(doc.bytes);
    if (digest !== entry.digest) {
      throw new ImagePullError(
        `${source.describe}: the manifest for ${entry.digest} arrived as ${digest}: refused`,
        false,
      );
    }
    json = parseJson(doc.bytes, "the manifest");
    doc = { ...doc, contentType: entry.mediaType || doc.contentType };
  }
  const manifest = parseManifest(json, doc.contentType);
  say(`manifest ${digest}`);
  const configBytes = await collect(source.blob(manifest.config.digest, manifest.config.size), manifest.config.size);
  await store.writeBlobBytes(manifest.config.digest, configBytes);
  const config = parseConfig(parseJson(configBytes, "the image's config"));
  let size = doc.bytes.length + configBytes.length;
  for (const [i, layer] of manifest.layers.entries()) {
    say(`layer ${i + 1}/${manifest.layers.length} ${layer.digest} (${layer.size} bytes)`);
    if (!store.hasBlob(layer.digest))
      await store.writeBlob(layer.digest, source.blob(layer.digest, layer.size), layer.size);
    size += layer.size;
  }
  await store.writeBlobBytes(digest, doc.bytes);
  const reference = canonicalRef(ref);
  const existing = store.getImage(digest);
  const record: ImageRecord = {
    digest,
    references: [...(existing?.references.filter((r) => r !== reference) ?? []), reference],
    platform: config.platform,
    config: { digest: manifest.config.digest, size: manifest.config.size },
    layers: manifest.layers.map((l) => ({ digest: l.digest, size: l.size, mediaType: l.mediaType })),
    env: config.env,
    cmd: config.cmd,
    entrypoint: config.entrypoint,
    workingDir: config.workingDir,
    user: config.user,
    size,
    pulledAt: (opts.now?.() ?? new Date()).toISOString(),
  };
  if (ref.kind !== "registry" || ref.tag !== null) store.claimReference(reference, digest);
  store.saveImage(record);
  return record;
}

/** A small blob (the config) whole in memory, at most its descriptor's size (plus one byte to see more). */
async function collect(source: AsyncIterable<Uint8Array>, size: number): Promise<Buffer> {
  if (size > 4 * 1024 * 1024) throw new ImageFormatError(`the config is ${size} bytes, more than 4 MiB`);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of source) {
    total += chunk.length;
    if (total > size) break;
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}
