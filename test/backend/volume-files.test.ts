// PUT/GET /volume/{volume}/files (docs/operations.md, "Named volumes"; `sbx cp` with
// volume/NAME:PATH): what is copied in is the volume's group's to read and write (a
// sandbox of another uid changes it, and what it makes in a copied directory stays
// shared whatever its umask); hostile archives and paths are refused as for a workspace,
// with no host path in the answer and nothing outside the volume touched; a symlink in a
// volume is never followed out of it (an absolute one has no one meaning in a volume).

import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { Agent, request } from "undici";
import { afterAll, beforeAll, expect, it } from "vitest";
import { tarOf, victimFile } from "../support/archives.js";
import { describeNeeding } from "../support/requirements.js";
import { AS_ROOT, startTestBackend, type TestBackend } from "./support.js";

let b: TestBackend;
let agent: Agent;
let data: string;
let gid: number | null;

beforeAll(async () => {
  b = await startTestBackend();
  agent = new Agent({ connect: { socketPath: b.socketPath } });
});
afterAll(async () => {
  await agent.close();
  await b.stop();
});

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
async function put(
  volume: string,
  query: string,
  body: Buffer,
  tar = true,
): Promise<{ status: number; text: string; json: any }> {
  const res = await request(`http://localhost/api/v1/volume/${volume}/files?${query}`, {
    method: "PUT",
    dispatcher: agent,
    headers: { "content-type": tar ? "application/x-tar" : "application/octet-stream" },
    body: Readable.from([body]),
  });
  const text = await res.body.text();
  return { status: res.statusCode, text, json: JSON.parse(text) };
}

async function get(volume: string, query: string) {
  const res = await request(`http://localhost/api/v1/volume/${volume}/files?${query}`, { dispatcher: agent });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

const mode = (p: string) => fs.statSync(path.join(data, p)).mode & 0o7777;

describeNeeding(["setfacl"], "files in and out of a named volume", () => {
  beforeAll(async () => {
    const made = await b.api("POST", "/api/v1/volume/create", { body: { name: "cache" } });
    expect(made.status, made.text).toBe(201);
    data = made.json.host_path;
    gid = made.json.gid;
  });

  it("copies a file and a tree in and out, from the volume's own /; what lands is its group's to write", async () => {
    const file = await put("cache", "path=/notes.txt&mode=0640", Buffer.from("hello\n"), false);
    expect(file.status, file.text).toBe(201);
    expect(file.json).toMatchObject({ path: "/notes.txt", type: "file", bytes: 6 });
    const tree = await put(
      "cache",
      "path=deps",
      await tarOf([
        { name: "./", type: "directory", mode: 0o755 },
        { name: "pkg/", type: "directory", mode: 0o700 },
        { name: "pkg/a.js", type: "file", mode: 0o4755, data: "a\n" },
      ]),
    );
    expect(tree.status, tree.text).toBe(201);
    expect(tree.json).toMatchObject({ path: "/deps", type: "directory", entries: 2 });
    expect(fs.readFileSync(path.join(data, "deps/pkg/a.js"), "utf8")).toBe("a\n");
    if (AS_ROOT) {
      // The group gets what the owner has; directories setgid; no setuid bit in a shared volume.
      expect([mode("notes.txt"), mode("deps"), mode("deps/pkg"), mode("deps/pkg/a.js")]).toEqual([
        0o660, 0o2775, 0o2770, 0o775,
      ]);
      for (const p of ["notes.txt", "deps", "deps/pkg", "deps/pkg/a.js"]) {
        expect(fs.statSync(path.join(data, p)).gid, p).toBe(gid);
      }
    }
    const read = await get("cache", "path=/deps/pkg/a.js");
    expect([read.status, read.text, read.headers["sbx-file-type"]]).toEqual([200, "a\n", "file"]);
    const stat = JSON.parse((await get("cache", "path=/&stat=true")).text);
    expect(stat).toMatchObject({ path: "/", type: "directory" });
    const tar = await get("cache", "path=/deps");
    expect([tar.status, tar.headers["content-type"]]).toEqual([200, "application/x-tar"]);
  });

  it("refuses paths and symlinks that lead out of the volume, and names no host path", async () => {
    fs.symlinkSync("/etc/passwd", path.join(data, "abs"));
    fs.symlinkSync("../../..", path.join(data, "up"));
    fs.symlinkSync("deps/pkg", path.join(data, "inside"));
    for (const [query, code] of [
      ["path=../volume.json", "invalid_path"],
      ["path=/abs", "invalid_path"],
      ["path=/up/volumes", "invalid_path"],
      ["path=/missing", "file_not_found"],
    ] as const) {
      const res = await get("cache", query);
      expect([res.status, JSON.parse(res.text).error.code], query).toEqual([
        code === "file_not_found" ? 404 : 400,
        code,
      ]);
      expect(res.text).not.toContain(b.dataDir);
    }
    expect(JSON.parse((await get("cache", "path=/abs")).text).error.message).toContain("leads outside the volume");
    // A symlink that stays inside is followed; one read as itself (nofollow) is the link.
    expect((await get("cache", "path=/inside/a.js")).text).toBe("a\n");
    const link = JSON.parse((await get("cache", "path=/abs&stat=true&nofollow=true")).text);
    expect(link).toMatchObject({ type: "symlink", target: "/etc/passwd" });
    // Writes through them are refused before a byte is read, nothing written anywhere.
    const through = await put("cache", "path=/up/x", Buffer.from("x"), false);
    expect([through.status, through.json.error.code]).toEqual([400, "invalid_path"]);
    expect(fs.existsSync(path.join(b.dataDir, "..", "x"))).toBe(false);
    const none = await get("nope", "path=/");
    expect([none.status, JSON.parse(none.text).error.code]).toEqual([404, "volume_not_found"]);
    const dotdot = await get("..", "path=/");
    expect(dotdot.status).toBeGreaterThanOrEqual(400);
  });

  it("a hostile archive cannot reach outside: its fix-ups never touch a host file, a hard link out is refused", async () => {
    const victim = victimFile();
    const before = victim.now();
    const attack = await tarOf([
      { name: "x/", type: "directory", mode: 0o4777, mtime: new Date(0) },
      { name: "x", type: "symlink", linkname: victim.file },
      { name: "deep/y/", type: "directory", mode: 0o6777, mtime: new Date(0) },
      { name: "deep", type: "symlink", linkname: path.dirname(victim.file) },
    ]);
    const res = await put("cache", "path=attack", attack);
    expect(res.status, res.text).toBe(201);
    expect(victim.now()).toEqual(before);
    expect(fs.statSync(path.dirname(victim.file)).mode & 0o7777).toBe(0o700);
    expect(fs.readlinkSync(path.join(data, "attack", "x"))).toBe(victim.file);

    const hard = await tarOf([
      { name: "d/victim", type: "file", data: "mine" },
      { name: "d", type: "symlink", linkname: path.dirname(victim.file) },
      { name: "h", type: "link", linkname: "d/victim" },
    ]);
    const refused = await put("cache", "path=hardlinked", hard);
    expect([refused.status, refused.json.error.code]).toEqual([400, "invalid_archive"]);
    expect(refused.text).not.toContain(b.dataDir);
    expect(victim.now()).toEqual(before);
    expect(fs.existsSync(path.join(data, "hardlinked"))).toBe(false);
  });
});

describeNeeding(["bwrap", "setfacl"], "a volume's copied files shared with sandboxes", () => {
  it("a sandbox of another uid changes what was copied in; what it makes there stays shared whatever its umask", async () => {
    const made = await b.api("POST", "/api/v1/volume/create", { body: { name: "shared" } });
    expect(made.status, made.text).toBe(201);
    const up = await put("shared", "path=/in", await tarOf([{ name: "f", type: "file", mode: 0o644, data: "cp\n" }]));
    expect(up.status, up.text).toBe(201);
    for (const name of ["one", "two"]) {
      const res = await b.api("POST", "/api/v1/sandbox/create", {
        body: { name, isolation: "bwrap", volumes: [{ name: "shared", path: "/shared" }] },
      });
      expect(res.status, res.text).toBe(201);
    }
    const exec = async (sandbox: string, command: string) =>
      (await b.api("POST", `/api/v1/sandbox/${sandbox}/execute`, { body: { command, timeout: 30_000 } })).json;
    const one = await exec(
      "one",
      "umask 077; echo one >> /shared/in/f && mkdir /shared/in/sub && echo s > /shared/in/sub/g",
    );
    expect(one, one.stderr).toMatchObject({ exit_code: 0 });
    const two = await exec(
      "two",
      "cat /shared/in/f /shared/in/sub/g && echo two >> /shared/in/sub/g && rm /shared/in/f",
    );
    expect(two, two.stderr).toMatchObject({ exit_code: 0, stdout: "cp\none\ns\n" });
    // And back out: what the sandboxes wrote is read through the volume's route.
    expect((await get("shared", "path=/in/sub/g")).text).toBe("s\ntwo\n");
  });
});
