// Tun device nodes of a test's own (as root: mknod), for the user-network probe's
// device option (drivers' tunDevice): the same character device as /dev/net/tun
// (10, 200), one root-only (mode 0600, as the kernel makes it without udev) and one
// open to every uid (0666, as udev's rule makes it), so both answers of the probe are
// tried on any machine, whatever its own /dev/net/tun is.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "./temp.js";

export interface TunDevices {
  /** Mode 0600, owned by root: no sandbox uid can open it. */
  rootOnly: string;
  /** Mode 0666: any uid can open it. */
  open: string;
  /** A path where no device is. */
  missing: string;
}

export function tunDevices(): TunDevices {
  const dir = tempDir("sbx-tun-");
  // A sandbox's uid opens them (the probe's trial): the way to them must be open to it
  // (the run's temporary directories are private otherwise).
  for (let d = dir; d !== path.dirname(d); d = path.dirname(d)) {
    const mode = fs.statSync(d).mode;
    if ((mode & 0o001) !== 0) break;
    fs.chmodSync(d, (mode & 0o7777) | 0o711);
  }
  const make = (name: string, mode: string) => {
    const file = path.join(dir, name);
    const made = spawnSync("mknod", ["-m", mode, file, "c", "10", "200"], { encoding: "utf8" });
    if (made.status !== 0) throw new Error(`mknod ${file}: ${made.stderr.trim()}`);
    return file;
  };
  return { rootOnly: make("tun-0600", "0600"), open: make("tun-0666", "0666"), missing: path.join(dir, "none") };
}
