// sbx cp SANDBOX:PATH LOCAL and the local disk: a sparse file keeps its holes (it
// takes on the host what it took in the sandbox); a copy that cannot fit is refused
// before anything is written; a disk that cannot take it all the same (a real small
// tmpfs, as root) is a local failure, exit 74, saying the disk is full and where, how
// far the copy got, and that nothing was left at the destination; never "internal error".

import { createHash, randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendHandle } from "../../src/backend/backend.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startHomeBackend } from "../support/home-backend.js";
import { runMain } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";
import { smallTmpfs } from "../support/tmpfs.js";

let home: string;
let backend: BackendHandle;
let workspace: string;

const cp = (...args: string[]) => runMain(["cp", ...args], { home });

beforeAll(async () => {
  home = makeHome("sbx-cp-disk-");
  backend = await startHomeBackend(home);
  const shown = await runMain(["sandbox", "show", "default", "--json"], { home });
  workspace = JSON.parse(shown.stdout).host_workspace;
});
afterAll(async () => {
  await backend.close();
  removeHome(home);
});

const MiB = 1024 * 1024;

/** A sparse file of `size` bytes with a few bytes of data at its start, middle and end: 3 blocks on disk. */
function sparseFile(file: string, size: number): void {
  const fd = fs.openSync(file, "w");
  fs.writeSync(fd, "head");
  fs.writeSync(fd, "middle", Math.floor(size / 2) + 5);
  fs.writeSync(fd, "end", size - 3);
  fs.closeSync(fd);
}

/** sha256 of a file, read in pieces (a sparse file's whole apparent size). */
function sha256Of(file: string): string {
  const hash = createHash("sha256");
  const fd = fs.openSync(file, "r");
  const buf = Buffer.alloc(4 * MiB);
  try {
    for (let n = fs.readSync(fd, buf); n > 0; n = fs.readSync(fd, buf)) hash.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest("hex");
}

const onDisk = (file: string) => fs.statSync(file).blocks * 512;

describe("sbx cp out of a sparse file", () => {
  it("keeps its holes: the copy occupies a few blocks on the host, its bytes identical (a file, and in a tree)", async () => {
    const src = path.join(workspace, "sparse.img");
    sparseFile(src, 256 * MiB);
    expect(onDisk(src)).toBeLessThan(64 * 1024);
    const dir = makeHome("sbx-cp-sparse-");
    const out = path.join(dir, "sparse.img");

    const r = await cp("default:sparse.img", out);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.statSync(out).size).toBe(256 * MiB);
    expect(onDisk(out)).toBeLessThan(64 * 1024);
    expect(sha256Of(out)).toBe(sha256Of(src));

    fs.mkdirSync(path.join(workspace, "images"));
    fs.renameSync(src, path.join(workspace, "images", "sparse.img"));
    const t = await cp("default:images", path.join(dir, "images"));
    expect(t.code, t.stderr).toBe(0);
    const inTree = path.join(dir, "images", "sparse.img");
    expect(fs.statSync(inTree).size).toBe(256 * MiB);
    expect(onDisk(inTree)).toBeLessThan(64 * 1024);
    expect(sha256Of(inTree)).toBe(sha256Of(path.join(workspace, "images", "sparse.img")));
    removeHome(dir);
  });
});

describeNeeding("tmpfs", "sbx cp out onto a full local disk (a small tmpfs, as root)", () => {
  it("a tree with more files than the disk takes: exit 74, the disk named, nothing left there", async () => {
    // Room for the bytes, not for the files: the disk fills on the 9th of 40 files.
    const fsys = smallTmpfs("8m", { inodes: 8 });
    const tree = path.join(workspace, "many");
    fs.mkdirSync(tree);
    for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(tree, `f${i}`), randomBytes(1000));
    const before = fs.readdirSync(fsys.dir);

    const r = await cp("default:/workspace/many", path.join(fsys.dir, "many"));
    expect(r.code, r.stderr).toBe(74);
    expect(r.stderr).toContain(`copying default:/workspace/many to ${path.join(fsys.dir, "many")}: the disk is full`);
    expect(r.stderr).toContain(`on the file system at ${fsys.dir} (`);
    expect(r.stderr).toContain(`nothing was written to ${path.join(fsys.dir, "many")}`);
    expect(r.stderr).toContain(`hint: free some space there (df -h ${fsys.dir}), or copy it elsewhere`);
    expect(r.stderr).not.toContain("internal error");
    expect(r.stderr).not.toContain("ENOSPC");
    // The staged tree is gone with everything in it.
    expect(fs.readdirSync(fsys.dir)).toEqual(before);
  });

  it("a file or a tree that does not fit: refused before writing, exit 74, the room said", async () => {
    const fsys = smallTmpfs("2m");
    fs.writeFileSync(path.join(workspace, "big.bin"), randomBytes(4 * MiB));
    const dest = path.join(fsys.dir, "big.bin");

    const r = await cp("default:big.bin", dest);
    expect(r.code, r.stderr).toBe(74);
    expect(r.stderr).toBe(
      `sbx: copying default:/workspace/big.bin to ${dest}: it takes 4.0 MiB on disk, and the file system at ${fsys.dir} has 2.0 MiB free; nothing was written\n` +
        `hint: free some space there (df -h ${fsys.dir}), or copy it elsewhere\n`,
    );
    expect(fs.readdirSync(fsys.dir)).toEqual([]);

    fs.mkdirSync(path.join(workspace, "dense"));
    for (const n of ["a", "b", "c"]) fs.writeFileSync(path.join(workspace, "dense", n), randomBytes(MiB));
    const t = await cp("default:dense", fsys.dir);
    expect(t.code, t.stderr).toBe(74);
    expect(t.stderr).toContain(`it takes 3.0 MiB on disk, and the file system at ${fsys.dir} has 2.0 MiB free`);
    expect(fs.readdirSync(fsys.dir)).toEqual([]);
  });

  it("a sparse file larger than the disk, whose data fits: copied, holes kept", async () => {
    const fsys = smallTmpfs("2m");
    sparseFile(path.join(workspace, "disk.img"), 64 * MiB);
    const dest = path.join(fsys.dir, "disk.img");
    const r = await cp("default:disk.img", dest);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.statSync(dest).size).toBe(64 * MiB);
    expect(onDisk(dest)).toBeLessThan(64 * 1024);
    expect(sha256Of(dest)).toBe(sha256Of(path.join(workspace, "disk.img")));
  });

  it("a sparse file whose data does not fit: refused before writing, its holes said", async () => {
    const fsys = smallTmpfs("2m");
    const src = path.join(workspace, "data.img");
    sparseFile(src, 64 * MiB);
    const fd = fs.openSync(src, "r+");
    fs.writeSync(fd, randomBytes(3 * MiB), 0, 3 * MiB, 8 * MiB);
    fs.closeSync(fd);
    const r = await cp("default:data.img", fsys.dir);
    expect(r.code, r.stderr).toBe(74);
    expect(r.stderr).toMatch(/it takes 3\.0\d? MiB on disk \(64\.0 MiB with its holes, which stay holes\)/);
    expect(fs.readdirSync(fsys.dir)).toEqual([]);
  });

  it("a destination it may not write: exit 74 saying why, not an internal error", async () => {
    const fsys = smallTmpfs("2m");
    fs.writeFileSync(path.join(workspace, "small.txt"), "hello\n");
    execFileSyncRo(fsys.dir);
    const dest = path.join(fsys.dir, "small.txt");
    const r = await cp("default:small.txt", dest);
    expect(r.code, r.stderr).toBe(74);
    expect(r.stderr).toContain(`copying default:/workspace/small.txt to ${dest}: the file system is read-only`);
    expect(r.stderr).not.toContain("internal error");
  });
});

/** Remounts a tmpfs read-only (root cannot be kept out by modes). */
function execFileSyncRo(dir: string): void {
  execFileSync("mount", ["-o", "remount,ro", dir]);
}
