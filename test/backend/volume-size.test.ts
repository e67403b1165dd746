// A named volume's size (docs/operations.md, "Named volumes"): a file system of its own,
// so a write past it fails with ENOSPC in the sandbox that writes and the host's disk
// keeps the rest, an upload that says it does not fit is refused before anything is
// written, and rm unmounts it. Where it cannot be had (no root, no mkfs.ext4), a size is
// refused with the reason and nothing is created — never a volume without its limit.

import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { Agent, request } from "undici";
import { expect, it } from "vitest";
import { isMountPoint, WorkspaceDisks } from "../../src/backend/drivers/limits/workspace-disk.js";
import { Refusal } from "../../src/backend/refusal.js";
import { VolumeRegistry } from "../../src/backend/volumes/index.js";
import { describeNeeding } from "../support/requirements.js";
import { startTestBackend, tempDir } from "./support.js";

const MiB = 1024 * 1024;

describeNeeding(["bwrap", "setfacl", "workspaceDisk"], "a volume with a size", () => {
  it("is a file system of that size: a write past it is ENOSPC, a too-big upload 413, rm unmounts it", async () => {
    const b = await startTestBackend();
    const made = await b.api("POST", "/api/v1/volume/create", { body: { name: "small", size_bytes: 16 * MiB } });
    expect(made.status, made.text).toBe(201);
    expect(made.json.size_bytes).toBe(16 * MiB);
    expect(made.json.free_bytes).toBeGreaterThanOrEqual(16 * MiB);
    expect(made.json.free_bytes).toBeLessThan(18 * MiB);
    const mount = path.dirname(made.json.host_path);
    expect(isMountPoint(mount)).toBe(true);

    for (const name of ["w", "r"]) {
      const res = await b.api("POST", "/api/v1/sandbox/create", {
        body: { name, isolation: "bwrap", volumes: [{ name: "small", path: "/data" }] },
      });
      expect(res.status, res.text).toBe(201);
    }
    const exec = async (sandbox: string, command: string) =>
      (await b.api("POST", `/api/v1/sandbox/${sandbox}/execute`, { body: { command, timeout: 60_000 } })).json;
    const full = await exec("w", "echo kept > /data/kept; head -c 24M /dev/zero > /data/big");
    expect(full.exit_code).toBeGreaterThan(0);
    expect(full.stderr).toContain("No space left on device");
    const read = await exec("r", "cat /data/kept; rm /data/big && df -k /data | tail -1");
    expect(read, read.stderr).toMatchObject({ exit_code: 0 });
    expect(read.stdout.split("\n")[0]).toBe("kept");

    // An upload that says it does not fit is refused before a byte is written.
    const agent = new Agent({ connect: { socketPath: b.socketPath } });
    const res = await request(`http://localhost/api/v1/volume/small/files?path=/huge&size=${32 * MiB}`, {
      method: "PUT",
      dispatcher: agent,
      headers: { "content-type": "application/octet-stream" },
      body: Readable.from([Buffer.from("x")]),
    });
    const answer = JSON.parse(await res.body.text());
    await agent.close();
    expect([res.statusCode, answer.error.code]).toEqual([413, "workspace_full"]);
    expect(answer.error.message).toContain("volume small");
    expect(fs.existsSync(path.join(made.json.host_path, "huge"))).toBe(false);

    for (const s of ["w", "r"]) expect((await b.api("DELETE", `/api/v1/sandbox/${s}?force=true`)).status).toBe(200);
    expect((await b.api("DELETE", "/api/v1/volume/small")).status).toBe(200);
    expect(isMountPoint(mount)).toBe(false);
    expect(fs.existsSync(path.dirname(mount))).toBe(false);
    await b.stop();
  });
});

it("a size that cannot be enforced here is refused with the reason, and nothing is created", () => {
  const dataDir = tempDir("sbx-volume-size-");
  const registry = (disks: WorkspaceDisks) =>
    new VolumeRegistry({
      dataDir,
      asRoot: false,
      now: () => 0,
      path: "",
      takenIds: () => new Set(),
      sandboxes: () => [],
      disks,
    });
  for (const [disks, reason] of [
    [new WorkspaceDisks({ asRoot: false, find: () => "/bin/true" }), "needs a daemon running as root"],
    [new WorkspaceDisks({ asRoot: true, find: () => null }), "mkfs.ext4 (e2fsprogs)"],
  ] as const) {
    let refused: unknown;
    try {
      registry(disks).create("sized", 32 * MiB);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(Refusal);
    expect((refused as Refusal).code).toBe("limit_unavailable");
    expect((refused as Refusal).message).toContain(reason);
    expect(fs.existsSync(path.join(dataDir, "volumes", "sized"))).toBe(false);
  }
  // Too small for a file system of its own: said, nothing created.
  expect(() => registry(new WorkspaceDisks({ asRoot: true, find: () => null })).create("tiny", MiB)).toThrow(
    /at least 16777216/,
  );
  // Without a size nothing of it is needed.
  expect(registry(new WorkspaceDisks({ asRoot: true, find: () => null })).create("plain").size_bytes).toBeNull();
});
