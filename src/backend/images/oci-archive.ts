// An OCI image layout as a tar file (`oci-archive:FILE[:TAG]`, what `skopeo copy …
// oci-archive:FILE:TAG` writes): unpacked into a directory of its own under the store's
// tmp/ by the same handle-based unpacker as a layer (no entry outside it, through a
// symlink, or as a hard link elsewhere), read there as an `oci:` layout, and removed
// whatever happens. It costs the archive's size on disk while the pull runs.

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { O_DIR } from "../../files/handles.js";
import { unpackTree } from "../../files/unpack.js";
import { ImagePullError } from "./source.js";

/** Unpacks `file` into a fresh directory under `tmpRoot`, runs `use` on it, and removes it. */
export async function withUnpackedArchive<T>(
  file: string,
  tmpRoot: string,
  use: (dir: string) => Promise<T>,
): Promise<T> {
  fs.mkdirSync(tmpRoot, { recursive: true, mode: 0o700 });
  const dir = path.join(tmpRoot, `archive-${randomBytes(6).toString("hex")}`);
  fs.mkdirSync(dir, { mode: 0o700 });
  try {
    let stream: fs.ReadStream;
    try {
      // Opened without following a symlink in its last name, as a layout's files are.
      const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
      stream = fs.createReadStream("", { fd });
    } catch (err) {
      throw new ImagePullError(
        `the OCI archive ${file} cannot be read (${(err as NodeJS.ErrnoException).code})`,
        false,
      );
    }
    const fd = fs.openSync(dir, O_DIR);
    try {
      await unpackTree(stream, fd, { owner: null });
    } catch (err) {
      if (err instanceof ImagePullError) throw err;
      throw new ImagePullError(`the OCI archive ${file} cannot be unpacked: ${(err as Error).message}`, false);
    } finally {
      stream.destroy();
      fs.closeSync(fd);
    }
    return await use(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
