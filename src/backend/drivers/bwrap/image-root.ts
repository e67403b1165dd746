// What a sandbox made from an image needs of the host (docs/images.md, "A sandbox from
// an image"): its root is the image's filesystem, so the init (node, dynamically linked)
// cannot find the host's loader and libraries where its ELF header says. The host's /usr
// is bound read-only at HOST_USR_INSIDE, and the init is started through the host's
// loader there (`ld.so --library-path … PROGRAM`), never through anything of the image.

import fs from "node:fs";
import path from "node:path";

/** Where the host's /usr is, read-only, inside a sandbox made from an image. */
export const HOST_USR_INSIDE = "/run/sbx-host/usr";

export interface HostLoader {
  /** The loader's path inside the sandbox (under HOST_USR_INSIDE). */
  loader: string;
  /** --library-path: the host's library directories, inside. */
  libraryPath: string;
}

/** The program interpreter (PT_INTERP) an ELF executable names, or null (static, or not ELF). */
export function programInterpreter(file: string): string | null {
  const fd = fs.openSync(file, "r");
  try {
    const head = Buffer.alloc(64);
    fs.readSync(fd, head, 0, 64, 0);
    if (head.readUInt32BE(0) !== 0x7f454c46 || head[4] !== 2 || head[5] !== 1) return null; // 64-bit little-endian only
    const phoff = Number(head.readBigUInt64LE(0x20));
    const phentsize = head.readUInt16LE(0x36);
    const phnum = head.readUInt16LE(0x38);
    const ph = Buffer.alloc(phentsize * phnum);
    fs.readSync(fd, ph, 0, ph.length, phoff);
    for (let i = 0; i < phnum; i++) {
      const at = i * phentsize;
      if (ph.readUInt32LE(at) !== 3) continue; // PT_INTERP
      const offset = Number(ph.readBigUInt64LE(at + 8));
      const size = Number(ph.readBigUInt64LE(at + 0x20));
      const buf = Buffer.alloc(size);
      fs.readSync(fd, buf, 0, size, offset);
      return buf.toString("latin1").replace(/\0.*$/s, "");
    }
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * How to start `executable` inside an image's root: its loader and the host's library
 * directories, both under the host's /usr; throws saying why not (a loader outside
 * /usr: a host without a merged /usr).
 */
export function hostLoaderFor(executable: string): HostLoader {
  const interp = programInterpreter(executable);
  if (interp === null) throw new Error(`${executable} names no program interpreter`);
  const real = fs.realpathSync(interp);
  if (!real.startsWith("/usr/")) throw new Error(`the host's loader ${real} is outside /usr`);
  const dirs = new Set<string>();
  for (const d of [path.dirname(real), "/usr/lib", "/usr/lib64", "/usr/local/lib"]) {
    if (fs.existsSync(d)) dirs.add(fs.realpathSync(d));
  }
  const inside = (p: string) => path.posix.join(HOST_USR_INSIDE, p.slice("/usr".length));
  return {
    loader: inside(real),
    libraryPath: [...dirs]
      .filter((d) => d.startsWith("/usr/"))
      .map(inside)
      .join(":"),
  };
}
