// An OCI image layout directory as a source (`oci:DIR[:TAG]`; what `skopeo copy … oci:DIR:TAG`
// and `umoci` write): its index.json, the entry whose org.opencontainers.image.ref.name
// is TAG (or its only entry), and blobs/sha256/<hex>. Every file is opened without
// following a symlink in its last name; the store checks every blob's digest anyway.

import fs from "node:fs";
import path from "node:path";
import { type Descriptor, ImageFormatError, indexEntries, parseJson } from "./manifest.js";
import { type FetchedDocument, type ImageSource, ImagePullError } from "./source.js";

const REF_NAME = "org.opencontainers.image.ref.name";
const O_READ = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW;

export class OciLayoutSource implements ImageSource {
  readonly describe: string;

  constructor(
    private readonly dir: string,
    private readonly tag: string | null,
    describe?: string,
  ) {
    this.describe = describe ?? `the OCI layout ${dir}`;
  }

  async root(): Promise<FetchedDocument> {
    let layout: Record<string, unknown>;
    let index: Record<string, unknown>;
    try {
      layout = parseJson(this.read("oci-layout"), "oci-layout");
      index = parseJson(this.read("index.json"), "index.json");
    } catch (err) {
      if (err instanceof ImageFormatError) throw new ImagePullError(`${this.describe}: ${err.message}`, false);
      throw err;
    }
    if (layout.imageLayoutVersion !== "1.0.0") {
      throw new ImagePullError(
        `${this.describe}: not an OCI image layout (imageLayoutVersion ${JSON.stringify(layout.imageLayoutVersion)})`,
        false,
      );
    }
    const entries = indexEntries(index);
    const chosen = this.choose(entries);
    return { ...(await this.manifest(chosen.digest)), contentType: chosen.mediaType || null };
  }

  private choose(entries: Descriptor[]): Descriptor {
    const tags = entries.map((e) => e.annotations?.[REF_NAME]).filter((t): t is string => t !== undefined);
    if (this.tag !== null) {
      const found = entries.find((e) => e.annotations?.[REF_NAME] === this.tag);
      if (found) return found;
      throw new ImagePullError(
        `${this.describe} has no image tagged ${this.tag} (it has ${tags.length === 0 ? "no tags" : tags.join(", ")})`,
        false,
      );
    }
    if (entries.length === 1) return entries[0]!;
    throw new ImagePullError(
      `${this.describe} holds ${entries.length} images: name one (oci:DIR:TAG; tags ${tags.join(", ") || "none"})`,
      false,
    );
  }

  async manifest(digest: string): Promise<FetchedDocument> {
    return { bytes: this.read(blobName(digest)), contentType: null };
  }

  async *blob(digest: string): AsyncGenerator<Uint8Array> {
    let fd: number;
    try {
      fd = fs.openSync(path.join(this.dir, blobName(digest)), O_READ);
    } catch (err) {
      throw new ImagePullError(`${this.describe} lacks blob ${digest}: ${(err as NodeJS.ErrnoException).code}`, false);
    }
    try {
      const buf = Buffer.allocUnsafe(1024 * 1024);
      for (;;) {
        const n = fs.readSync(fd, buf, 0, buf.length, null);
        if (n === 0) return;
        yield Buffer.from(buf.subarray(0, n));
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  private read(name: string): Buffer {
    let fd: number;
    try {
      fd = fs.openSync(path.join(this.dir, name), O_READ);
    } catch (err) {
      throw new ImagePullError(`${this.describe}: cannot read ${name} (${(err as NodeJS.ErrnoException).code})`, false);
    }
    try {
      const size = fs.fstatSync(fd).size;
      if (size > 4 * 1024 * 1024) throw new ImagePullError(`${this.describe}: ${name} is larger than 4 MiB`, false);
      return fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
}

function blobName(digest: string): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest))
    throw new ImagePullError(`not a sha256 digest: ${JSON.stringify(digest)}`, false);
  return path.join("blobs", "sha256", digest.slice(7));
}
