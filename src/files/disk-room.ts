// The room on the local file system a copy lands on: how much is free there, and
// which mount that is (to say where a disk is full, not only that one is).

import fs from "node:fs";
import path from "node:path";

export interface DiskRoom {
  /** Where the file system holding the directory is mounted ("/", "/home"), or null when unknown. */
  mountPoint: string | null;
  /** Bytes an ordinary write may still take there (statfs f_bavail). */
  free: number;
  /** The file system's size in bytes. */
  size: number;
}

/** The room on the file system holding `dir` (the nearest directory that exists), or null when it cannot be read. */
export function diskRoom(dir: string): DiskRoom | null {
  let at = path.resolve(dir);
  while (!fs.existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  try {
    const st = fs.statfsSync(at);
    return { mountPoint: mountPointOf(at), free: st.bavail * st.bsize, size: st.blocks * st.bsize };
  } catch {
    return null;
  }
}

/** The longest mount point that holds `dir` (from /proc/self/mountinfo), or null. */
function mountPointOf(dir: string): string | null {
  let real: string;
  let lines: string[];
  try {
    real = fs.realpathSync(dir);
    lines = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n");
  } catch {
    return null;
  }
  let best: string | null = null;
  for (const line of lines) {
    // "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw": the 5th field, octal-escaped.
    const field = line.split(" ")[4];
    if (field === undefined) continue;
    const mount = field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
    const inside = mount === "/" || real === mount || real.startsWith(`${mount}/`);
    if (inside && (best === null || mount.length >= best.length)) best = mount;
  }
  return best;
}
