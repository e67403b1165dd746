// Named volumes (docs/operations.md, "Named volumes"): a volume written by one sandbox is
// read — and written — by another running as another uid; mounted read-only a write is
// EROFS; a volume in use is not removed, naming its sandboxes; a mount path that would
// reach a workspace (its own, another's) or the host's directories, and a name that
// would reach anything but the volume's own directory, are refused with nothing created.

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeNeeding } from "../support/requirements.js";
import { AS_ROOT, startTestBackend, type TestBackend } from "./support.js";

describeNeeding(["bwrap", "setfacl"], "named volumes", () => {
  let b: TestBackend;
  beforeAll(async () => {
    b = await startTestBackend();
  });
  afterAll(async () => {
    await b.stop();
  });

  const create = (body: unknown) => b.api("POST", "/api/v1/sandbox/create", { body });
  const exec = async (sandbox: string, command: string) =>
    (await b.api("POST", `/api/v1/sandbox/${sandbox}/execute`, { body: { command, timeout: 30_000 } })).json;

  it("is written by one sandbox and read and written by another (its own uid), :ro refuses writes with EROFS", async () => {
    const made = await b.api("POST", "/api/v1/volume/create", { body: { name: "cache" } });
    expect(made.status, made.text).toBe(201);
    expect(made.json).toMatchObject({ name: "cache", used_by: [] });
    // A second volume of that name is refused, naming it; the first is untouched.
    const again = await b.api("POST", "/api/v1/volume/create", { body: { name: "cache" } });
    expect([again.status, again.json.error.code, again.json.error.message]).toEqual([
      409,
      "volume_exists",
      'a volume named "cache" exists',
    ]);
    for (const [name, mount] of [
      ["writer", { name: "cache", path: "/cache" }],
      ["reader", { name: "cache", path: "/data/cache" }],
      ["viewer", { name: "cache", path: "/cache", read_only: true }],
    ] as const) {
      const res = await create({ name, isolation: "bwrap", volumes: [mount] });
      expect(res.status, res.text).toBe(201);
      expect(res.json.volumes).toEqual([mount]);
    }
    // Sandboxes of a root daemon are uids of their own: two different ones here.
    const uids = await Promise.all(
      ["writer", "reader"].map(async (s) => (await b.api("GET", `/api/v1/sandbox/${s}`)).json.driver.host_uid),
    );
    if (AS_ROOT) expect(uids[0]).not.toBe(uids[1]);

    const wrote = await exec("writer", "umask 077; mkdir -p /cache/deps && echo from-writer > /cache/deps/pkg");
    expect(wrote, wrote.stderr).toMatchObject({ exit_code: 0 });
    const read = await exec(
      "reader",
      "cat /data/cache/deps/pkg && echo from-reader >> /data/cache/deps/pkg && touch /data/cache/deps/new",
    );
    expect(read, read.stderr).toMatchObject({ exit_code: 0, stdout: "from-writer\n" });
    expect((await exec("writer", "cat /cache/deps/pkg; ls /cache/deps")).stdout).toBe(
      "from-writer\nfrom-reader\nnew\npkg\n",
    );

    const refused = await exec("viewer", "cat /cache/deps/pkg && touch /cache/deps/x");
    expect(refused.stdout).toBe("from-writer\nfrom-reader\n");
    expect(refused.exit_code).not.toBe(0);
    expect(refused.stderr).toContain("Read-only file system");
    // The files are on the host, in the volume's directory, made by the writer's uid.
    const shown = (await b.api("GET", "/api/v1/volume/cache")).json;
    expect(shown.used_by.sort()).toEqual(["reader", "viewer", "writer"]);
    const pkg = fs.statSync(path.join(shown.host_path, "deps", "pkg"));
    if (AS_ROOT) {
      expect(pkg.uid).toBe(uids[0]);
      expect(pkg.gid).toBe(shown.gid);
    }
  });

  it("refuses to remove a volume in use, naming its sandboxes; removes it once none mounts it", async () => {
    const busy = await b.api("DELETE", "/api/v1/volume/cache");
    expect(busy.status, busy.text).toBe(409);
    expect(busy.json.error.code).toBe("volume_in_use");
    expect(busy.json.error.details.sandboxes.sort()).toEqual(["reader", "viewer", "writer"]);
    expect(busy.json.error.message).toContain("writer, reader, viewer");
    for (const s of ["writer", "reader", "viewer"]) {
      expect((await b.api("DELETE", `/api/v1/sandbox/${s}?force=true`)).status).toBe(200);
    }
    const gone = await b.api("DELETE", "/api/v1/volume/cache");
    expect(gone.status, gone.text).toBe(200);
    expect((await b.api("GET", "/api/v1/volume/cache")).json.error.code).toBe("volume_not_found");
  });

  it("refuses a mount at or under a workspace or the host's directories, and a name that leaves the volumes", async () => {
    await b.api("POST", "/api/v1/volume/create", { body: { name: "data" } });
    const victim = await create({ name: "victim", isolation: "bwrap" });
    const before = fs.readdirSync(path.join(b.dataDir, "sandboxes")).sort();
    for (const mount of [
      { name: "data", path: "/workspace" },
      { name: "data", path: "/workspace/cache" },
      { name: "data", path: "/cache/../workspace" },
      { name: "data", path: "/" },
      { name: "data", path: "/etc" },
      { name: "data", path: "/proc/1" },
      { name: "data", path: "cache" },
      { name: `../sandboxes/${victim.json.sandbox_id}/workspace`, path: "/cache" },
      { name: "..", path: "/cache" },
    ]) {
      const res = await create({ name: "attacker", isolation: "bwrap", volumes: [mount] });
      expect({ mount, status: res.status, code: res.json.error?.code }).toEqual({
        mount,
        status: 400,
        code: "invalid_request",
      });
    }
    const missing = await create({ name: "attacker", isolation: "bwrap", volumes: [{ name: "nope", path: "/x" }] });
    expect(missing.json.error?.code).toBe("volume_not_found");
    expect(fs.readdirSync(path.join(b.dataDir, "sandboxes")).sort()).toEqual(before);
    expect((await b.api("GET", "/api/v1/sandbox/attacker")).status).toBe(404);
    expect((await b.api("POST", "/api/v1/volume/create", { body: { name: "../sandboxes" } })).status).toBe(400);
  });
});
