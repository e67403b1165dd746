// sbx cp SANDBOX:PATH LOCAL onto a local disk that cannot take it (a real small tmpfs,
// as root): a local failure, exit 74, saying the disk is full and where, how far the
// copy got, and that nothing was left at the destination; never "internal error".

import { randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
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

describeNeeding("tmpfs", "sbx cp out onto a full local disk (a small tmpfs, as root)", () => {
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

  it("a file larger than the disk: exit 74 saying so, no partial file left", async () => {
    const fsys = smallTmpfs("2m");
    fs.writeFileSync(path.join(workspace, "big.bin"), randomBytes(4 * 1024 * 1024));
    const dest = path.join(fsys.dir, "big.bin");

    const r = await cp("default:big.bin", dest);
    expect(r.code, r.stderr).toBe(74);
    expect(r.stderr).toContain(`copying default:/workspace/big.bin to ${dest}: the disk is full`);
    expect(r.stderr).toContain(`on the file system at ${fsys.dir} (`);
    expect(r.stderr).toContain(`of 4.0 MiB; nothing was written to ${dest}`);
    expect(r.stderr).not.toContain("internal error");
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
