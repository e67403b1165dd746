// A small tmpfs for disk-full tests (root only; the tests skip otherwise), and filling it.

import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { atEndOfFile } from "./temp.js";

/**
 * Mounts a tmpfs of `size` (e.g. "2m") on a fresh private directory; cleanup unmounts
 * and removes it, and runs by itself when the test file that mounted it ends.
 * `inodes` bounds how many files and directories it holds (nr_inodes).
 */
export function smallTmpfs(size: string, opts: { inodes?: number } = {}): { dir: string; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-tmpfs-"));
  let mounted = false;
  const cleanup = () => {
    if (mounted) spawnSync("umount", ["-l", dir]);
    mounted = false;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  atEndOfFile(cleanup);
  const inodes = opts.inodes === undefined ? "" : `,nr_inodes=${opts.inodes}`;
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700${inodes}`, "tmpfs", dir]);
  mounted = true;
  return { dir, cleanup };
}

/** Fills a file system until only `leave` bytes are free; returns the filler's path. */
export function fillUntilFree(dir: string, leave = 0): string {
  const file = path.join(dir, "filler");
  const st = fs.statfsSync(dir);
  let left = st.bavail * st.bsize - leave;
  const fd = fs.openSync(file, "w");
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    while (left > 0) left -= fs.writeSync(fd, chunk, 0, Math.min(chunk.length, left));
    // Nothing left to leave: write until the file system says it is full.
    if (leave === 0) for (;;) fs.writeSync(fd, chunk);
  } catch {
    // ENOSPC: full
  } finally {
    fs.closeSync(fd);
  }
  return file;
}
