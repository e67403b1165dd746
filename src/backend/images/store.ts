// The image store (docs/images.md, "The store"): under the daemon's data directory,
// <dataDir>/images/
//   blobs/sha256/<hex>   every manifest, config and layer, kept once by its digest
//   images/<hex>.json    one record per image, named by its manifest's digest: the
//                        references it was pulled as, its platform, config and layers
//   tmp/                 blobs being written (never visible under blobs/ until whole)
// A blob is written to tmp/, its sha256 computed on the way, checked against the digest
// it was asked for, synced and only then renamed into blobs/: a mismatch, a truncated
// download or a killed writer leaves nothing under blobs/. Records are written the same
// way (tmp, fsync, rename). Readers need no lock: every name they see is complete.

import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { isDigest } from "./reference.js";

export interface LayerRecord {
  digest: string;
  size: number;
  mediaType: string;
}

export interface ImageRecord {
  /** The manifest's digest (sha256:…): what the image is pinned by. */
  digest: string;
  /** Every reference it was pulled or imported as (canonical text), newest last. */
  references: string[];
  platform: { os: string; architecture: string; variant?: string };
  config: { digest: string; size: number };
  layers: LayerRecord[];
  /** From the image's config: what a sandbox made from it starts with. */
  env: string[];
  cmd: string[];
  entrypoint: string[];
  workingDir: string;
  user: string;
  /** Bytes of its manifest, config and layers (compressed, as stored). */
  size: number;
  pulledAt: string;
}

const WRITE_PIECE = 1024 * 1024;

export class BlobMismatch extends Error {
  constructor(
    readonly expected: string,
    readonly actual: string,
    readonly bytes: number,
  ) {
    super(`blob ${expected} arrived as ${actual} (${bytes} bytes): refused, nothing kept`);
    this.name = "BlobMismatch";
  }
}

export class ImageStore {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, "images");
  }

  private dir(name: string): string {
    const d = path.join(this.root, name);
    fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  }

  blobPath(digest: string): string {
    if (!isDigest(digest)) throw new Error(`not a sha256 digest: ${JSON.stringify(digest)}`);
    return path.join(this.root, "blobs", "sha256", digest.slice("sha256:".length));
  }

  hasBlob(digest: string): boolean {
    return fs.existsSync(this.blobPath(digest));
  }

  readBlob(digest: string): Buffer {
    return fs.readFileSync(this.blobPath(digest));
  }

  /**
   * Writes a blob from a stream of bytes, checked against `digest` (and `size` when
   * known) before it becomes visible. Already there: the stream is not read.
   */
  async writeBlob(
    digest: string,
    source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    size?: number,
  ): Promise<number> {
    const final = this.blobPath(digest);
    if (fs.existsSync(final)) return fs.statSync(final).size;
    this.dir(path.join("blobs", "sha256"));
    const tmp = path.join(this.dir("tmp"), `${digest.slice(7, 23)}-${randomBytes(6).toString("hex")}`);
    const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
    const hash = createHash("sha256");
    let bytes = 0;
    // Written in pieces of about 1 MiB (a registry's chunks are a few KiB each): bounded memory, few writes.
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    const flush = () => {
      const piece = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
      let offset = 0;
      while (offset < piece.length) offset += fs.writeSync(fd, piece, offset);
      pending = [];
      pendingBytes = 0;
    };
    try {
      for await (const chunk of source) {
        bytes += chunk.length;
        if (size !== undefined && bytes > size) {
          throw new BlobMismatch(digest, "more bytes than its descriptor's size", bytes);
        }
        hash.update(chunk);
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= WRITE_PIECE) flush();
      }
      if (pendingBytes > 0) flush();
      const actual = `sha256:${hash.digest("hex")}`;
      if (actual !== digest || (size !== undefined && bytes !== size)) throw new BlobMismatch(digest, actual, bytes);
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      fs.renameSync(tmp, final);
      return bytes;
    } catch (err) {
      try {
        fs.closeSync(fd);
      } catch {
        // closed above
      }
      fs.rmSync(tmp, { force: true });
      throw err;
    }
  }

  writeBlobBytes(digest: string, bytes: Uint8Array): Promise<number> {
    return this.writeBlob(digest, [bytes], bytes.length);
  }

  saveImage(record: ImageRecord): void {
    const dir = this.dir("images");
    const name = `${record.digest.slice(7)}.json`;
    const tmp = path.join(this.dir("tmp"), `${name}-${randomBytes(6).toString("hex")}`);
    const fd = fs.openSync(tmp, "wx", 0o600);
    try {
      fs.writeSync(fd, `${JSON.stringify(record, null, 2)}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, path.join(dir, name));
  }

  listImages(): ImageRecord[] {
    let names: string[];
    try {
      names = fs.readdirSync(path.join(this.root, "images"));
    } catch {
      return [];
    }
    const out: ImageRecord[] = [];
    for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
      try {
        out.push(JSON.parse(fs.readFileSync(path.join(this.root, "images", name), "utf8")) as ImageRecord);
      } catch {
        // removed meanwhile
      }
    }
    return out.sort((a, b) => a.pulledAt.localeCompare(b.pulledAt));
  }

  getImage(digest: string): ImageRecord | null {
    return this.listImages().find((i) => i.digest === digest) ?? null;
  }

  /**
   * The image a reference names: its digest (sha256:… or a unique prefix of its hex),
   * or a reference it was pulled as (canonical text); the newest pull wins.
   */
  findImage(text: string, canonical: string | null): ImageRecord | null {
    const images = this.listImages();
    if (isDigest(text)) return images.find((i) => i.digest === text) ?? null;
    const byRef = images.filter(
      (i) => i.references.includes(text) || (canonical !== null && i.references.includes(canonical)),
    );
    if (byRef.length > 0) return byRef.at(-1)!;
    if (/^[0-9a-f]{6,64}$/.test(text)) {
      const byPrefix = images.filter((i) => i.digest.slice(7).startsWith(text));
      if (byPrefix.length === 1) return byPrefix[0]!;
    }
    return null;
  }

  /** Removes an image's record, then every blob no remaining image uses. Returns the blobs removed. */
  removeImage(digest: string): number {
    fs.rmSync(path.join(this.root, "images", `${digest.slice(7)}.json`), { force: true });
    return this.removeUnused();
  }

  /** Removes the blobs no image uses (a pull under way at the same time may lose its blobs: pull again). */
  removeUnused(): number {
    const used = new Set<string>();
    for (const image of this.listImages()) {
      used.add(image.digest);
      used.add(image.config.digest);
      for (const l of image.layers) used.add(l.digest);
    }
    let removed = 0;
    const blobs = path.join(this.root, "blobs", "sha256");
    let names: string[] = [];
    try {
      names = fs.readdirSync(blobs);
    } catch {
      // none yet
    }
    for (const hex of names) {
      if (used.has(`sha256:${hex}`)) continue;
      fs.rmSync(path.join(blobs, hex), { force: true });
      removed++;
    }
    return removed;
  }

  /** Moves a reference to `digest`: no other image keeps it (a tag names one image). */
  claimReference(reference: string, digest: string): void {
    for (const image of this.listImages()) {
      if (image.digest === digest || !image.references.includes(reference)) continue;
      this.saveImage({ ...image, references: image.references.filter((r) => r !== reference) });
    }
  }
}
