// What a directory tree holds, to compare two trees byte for byte.

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { type UnpackOptions, type UnpackSummary, unpackTree } from "../../src/files/unpack.js";

export const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

/**
 * relative path → "file MODE SHA256" | "dir MODE" | "link -> TARGET" | "special MODE" (a fifo,
 * socket or device, never opened: a fifo would block), for every entry under a directory.
 */
export function treeOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, prefix: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const rel = prefix ? `${prefix}/${name}` : name;
      const st = fs.lstatSync(p);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[rel] = `link -> ${fs.readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[rel] = `dir ${mode}`;
        walk(p, rel);
      } else if (st.isFile()) out[rel] = `file ${mode} ${sha256(fs.readFileSync(p))}`;
      else out[rel] = `special ${mode}`;
    }
  };
  walk(dir, "");
  return out;
}

/** Unpacks a tar stream into the directory `dir` (opened for it), as sbx cp does. */
export async function unpackInto(
  chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  dir: string,
  opts: UnpackOptions = {},
): Promise<UnpackSummary> {
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    return await unpackTree(chunks, fd, opts);
  } finally {
    fs.closeSync(fd);
  }
}
