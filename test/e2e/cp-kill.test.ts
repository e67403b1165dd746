// sbx cp while its daemon is killed with SIGKILL, both ways: sbx exits 255 saying
// what is known (never 70, "internal error"), and nothing half-written is visible at
// the destination (out: no file or partial file; in: nothing at the sandbox path).

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { collect, makeHome, removeHome, runSbx, runSbxJson, spawnSbx } from "../support/cli.js";
import { stopDaemon } from "../support/daemon.js";
import { until } from "../support/wait.js";

function daemonPid(home: string): number {
  return Number(fs.readFileSync(path.join(home, "daemon", "daemon.pid"), "utf8").trim());
}

/** Bytes of the files in a directory tree (0 when it is not there). */
function bytesUnder(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}

/** 16 GiB, sparse: many bytes to send without as many on disk; the copy is killed long before its end. */
function sparseFile(file: string): void {
  const fd = fs.openSync(file, "w");
  fs.ftruncateSync(fd, 16 * 1024 * 1024 * 1024);
  fs.closeSync(fd);
}

describe("sbx cp when its daemon is killed midway", () => {
  it("out: exits 255, and no file or partial file is at the destination", { timeout: 60_000 }, async (t) => {
    const home = makeHome("sbx-e2e-cpkill-");
    t.onTestFinished(async () => {
      await stopDaemon(home);
      removeHome(home);
    });
    const { doc } = await runSbxJson<{ host_workspace: string }>(["sandbox", "show", "default", "--json"], { home });
    fs.mkdirSync(path.join(doc.host_workspace, "dir"));
    sparseFile(path.join(doc.host_workspace, "dir", "big"));
    const dest = path.join(home, "dest");
    fs.mkdirSync(dest);
    for (const source of ["default:dir/big", "default:dir"]) {
      if (source !== "default:dir/big") expect((await runSbx(["daemon", "start"], { home })).code).toBe(0);
      const cp = spawnSbx(["cp", source, dest], { home });
      const done = collect(cp, 50_000, `sbx cp ${source}`);
      // Bytes arriving: the copy is midway.
      await until(() => bytesUnder(dest) > 1024 * 1024, 30_000, "bytes arriving");
      process.kill(daemonPid(home), "SIGKILL");
      const res = await done;
      expect(res.code, res.stderr).toBe(255);
      expect(res.stderr).toMatch(/the connection to the backend broke after .*; nothing was written to /);
      expect(fs.readdirSync(dest)).toEqual([]);
    }
  });

  it("in: exits 255 saying it may or may not be there, and nothing is at the sandbox path", {
    timeout: 60_000,
  }, async (t) => {
    const home = makeHome("sbx-e2e-cpkill-in-");
    t.onTestFinished(async () => {
      await stopDaemon(home);
      removeHome(home);
    });
    const { doc } = await runSbxJson<{ host_workspace: string }>(["sandbox", "show", "default", "--json"], { home });
    const big = path.join(home, "big");
    sparseFile(big);
    const cp = spawnSbx(["cp", big, "default:/workspace/big"], { home });
    const done = collect(cp, 50_000, "sbx cp in");
    const incoming = path.join(path.dirname(doc.host_workspace), "incoming");
    await until(() => bytesUnder(incoming) > 1024 * 1024, 30_000, "bytes arriving");
    process.kill(daemonPid(home), "SIGKILL");
    const res = await done;
    expect(res.code, res.stderr).toBe(255);
    expect(res.stderr).toMatch(
      /the connection to the backend broke after .* sent; .*\/workspace\/big holds all of it or what was there before/,
    );
    expect(fs.existsSync(path.join(doc.host_workspace, "big"))).toBe(false);
  });
});
