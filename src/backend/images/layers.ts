// An image's filesystem, made from its layers in order (docs/images.md, "Layers"): each
// layer's blob read from the store (gunzipped when it is tar+gzip) and unpacked by the
// same handle-based unpacker as `sbx cp` (src/files/unpack.ts): no entry is written
// outside the directory, through a symlink, or as a hard link to anything but a file of
// this image still in place; whiteouts and opaque directories applied; device nodes and
// fifos skipped and counted. The first refused entry stops it: the caller removes what
// was made (nothing half-made is used).

import fs from "node:fs";
import { createGunzip } from "node:zlib";
import type { Owner } from "../../files/handles.js";
import { O_DIR } from "../../files/handles.js";
import { unpackTree } from "../../files/unpack.js";
import type { ImageRecord, ImageStore } from "./store.js";

export interface RootSummary {
  entries: number;
  bytes: number;
  /** Entries left out (device nodes, fifos): the first few names, and how many. */
  skipped: string[];
  skippedCount: number;
}

/** Unpacks every layer of `image` into the empty directory `dest`, each entry owned by `owner` (null: as they are made). */
export async function unpackImage(
  store: ImageStore,
  image: ImageRecord,
  dest: string,
  owner: Owner | null,
): Promise<RootSummary> {
  const fd = fs.openSync(dest, O_DIR);
  const files = new Map<string, { dev: number; ino: number }>();
  const total: RootSummary = { entries: 0, bytes: 0, skipped: [], skippedCount: 0 };
  try {
    for (const layer of image.layers) {
      const stream = fs.createReadStream(store.blobPath(layer.digest));
      const source = layer.mediaType.endsWith("gzip") ? stream.pipe(createGunzip()) : stream;
      try {
        const s = await unpackTree(source, fd, { owner, layer: { files } });
        total.entries += s.entries;
        total.bytes += s.bytes;
        total.skipped.push(...s.skipped.slice(0, 20 - total.skipped.length));
        total.skippedCount += s.skippedCount;
      } finally {
        stream.destroy();
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return total;
}
