// PUT/GET …/files: byte-exact both ways, modes kept, directories as tar streams,
// confined to /workspace (nothing written when refused), idempotent uploads.

import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import type * as tarStream from "tar-stream";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tarOf } from "../support/archives.js";
import { itNeeding } from "../support/requirements.js";
import { sha256, treeOf, unpackInto } from "../support/trees.js";
import { startTestBackend, type TestBackend, tempDir } from "./support.js";

const FILES = "/api/v1/sandbox/default/files";
let b: TestBackend;
let workspace: string;
let agent: Agent;

beforeAll(async () => {
  b = await startTestBackend();
  workspace = (await b.api("GET", "/api/v1/sandbox/default")).json.host_workspace;
  agent = new Agent({ connect: { socketPath: b.socketPath } });
});
afterAll(async () => {
  await agent.close();
  await b.stop();
});

async function put(
  query: string,
  body: Buffer | AsyncIterable<Buffer>,
  headers: Record<string, string> = {},
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
): Promise<{ status: number; headers: Record<string, unknown>; json: any }> {
  const res = await request(`http://localhost${FILES}?${query}`, {
    method: "PUT",
    dispatcher: agent,
    headers: { "content-type": "application/octet-stream", ...headers },
    body: Buffer.isBuffer(body) ? body : Readable.from(body),
  });
  return { status: res.statusCode, headers: res.headers, json: await res.body.json() };
}

async function get(query: string, headers: Record<string, string> = {}) {
  const res = await request(`http://localhost${FILES}?${query}`, { method: "GET", dispatcher: agent, headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body };
}

describe("files of a sandbox", () => {
  it("round-trips a binary file byte for byte, with its mode", async () => {
    const data = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(300_000)]);
    const up = await put("path=/workspace/bin/blob.bin&mode=0755", data);
    expect(up.status).toBe(201);
    expect(up.json).toEqual({
      path: "/workspace/bin/blob.bin",
      type: "file",
      bytes: data.length,
      sha256: sha256(data),
      entries: null,
    });
    expect(fs.statSync(path.join(workspace, "bin", "blob.bin")).mode & 0o777).toBe(0o755);

    const down = await get("path=bin/blob.bin");
    expect(down.status).toBe(200);
    expect(down.headers["content-type"]).toBe("application/octet-stream");
    expect(down.headers["sbx-file-mode"]).toBe("0755");
    expect(sha256(down.body)).toBe(sha256(data));

    const stat = await b.api("GET", `${FILES}?path=/workspace/bin/blob.bin&stat=true`);
    const onDisk = fs.statSync(path.join(workspace, "bin", "blob.bin")).blocks * 512;
    expect(stat.json).toEqual({
      path: "/workspace/bin/blob.bin",
      type: "file",
      size: data.length,
      mode: "0755",
      allocated: onDisk,
    });
    const dirStat = await b.api("GET", `${FILES}?path=/workspace&stat=true`);
    expect(dirStat.json).toMatchObject({ path: "/workspace", type: "directory", size: 0 });
    expect(dirStat.json.allocated).toBeUndefined();
    // With usage: its files' room on disk, the directory's own blocks not counted.
    const usage = await b.api("GET", `${FILES}?path=/workspace/bin&stat=true&usage=true`);
    expect(usage.json).toMatchObject({ path: "/workspace/bin", type: "directory", size: 0, allocated: onDisk });
  });

  it("round-trips a directory tree as tar: files, modes, empty directories and symlinks", async () => {
    const tree = await tarOf([
      { name: "proj/", type: "directory", mode: 0o750 },
      { name: "proj/run.sh", type: "file", mode: 0o755, data: "#!/bin/sh\necho run\n" },
      { name: "proj/data/", type: "directory", mode: 0o755 },
      { name: "proj/data/blob", type: "file", mode: 0o600, data: randomBytes(100_000) },
      { name: "proj/empty/", type: "directory", mode: 0o700 },
      { name: "proj/python", type: "symlink", linkname: "/usr/bin/python3" },
      { name: "proj/again", type: "link", linkname: "proj/run.sh" },
    ]);
    const up = await put("path=/workspace/tree", tree, { "content-type": "application/x-tar" });
    expect(up.status, JSON.stringify(up.json)).toBe(201);
    expect(up.json).toMatchObject({
      path: "/workspace/tree",
      type: "directory",
      bytes: tree.length,
      sha256: sha256(tree),
      entries: 7,
    });
    const placed = treeOf(path.join(workspace, "tree"));
    expect(placed).toMatchObject({
      proj: "dir 750",
      "proj/run.sh": `file 755 ${sha256(Buffer.from("#!/bin/sh\necho run\n"))}`,
      "proj/empty": "dir 700",
      "proj/python": "link -> /usr/bin/python3",
      "proj/again": `file 755 ${sha256(Buffer.from("#!/bin/sh\necho run\n"))}`,
    });

    const down = await get("path=/workspace/tree");
    expect(down.headers["content-type"]).toBe("application/x-tar");
    const out = tempDir("sbx-files-out-");
    await unpackInto([down.body], out);
    expect(treeOf(out)).toEqual(placed);
  });

  it("merges a tree into an existing directory, replacing files and keeping the rest", async () => {
    await put("path=merge/keep.txt", Buffer.from("keep"));
    await put("path=merge/replace.txt", Buffer.from("old"));
    const tree = await tarOf([
      { name: "replace.txt", type: "file", mode: 0o644, data: "new" },
      { name: "added/x", type: "file", mode: 0o644, data: "x" },
    ]);
    expect((await put("path=merge", tree, { "content-type": "application/x-tar" })).status).toBe(201);
    expect(fs.readFileSync(path.join(workspace, "merge", "keep.txt"), "utf8")).toBe("keep");
    expect(fs.readFileSync(path.join(workspace, "merge", "replace.txt"), "utf8")).toBe("new");
    expect(fs.readFileSync(path.join(workspace, "merge", "added", "x"), "utf8")).toBe("x");
  });

  it("refuses paths outside /workspace, and symlinks that lead out, writing nothing", async () => {
    fs.symlinkSync("/etc", path.join(workspace, "etc-link"));
    fs.symlinkSync("../../..", path.join(workspace, "up-link"));
    fs.mkdirSync(path.join(workspace, "real"));
    fs.symlinkSync("real", path.join(workspace, "inside-link"));
    const before = treeOf(workspace);
    const marker = `sbx-files-${process.pid}`;
    for (const p of ["../x", "/etc/x", "/workspace/../etc/x", "/workspacex/y", "etc-link/x", "up-link/x", "etc-link"]) {
      const res = await put(`path=${encodeURIComponent(p.replace("x", marker))}`, Buffer.from("no"));
      expect(res.status, p).toBe(400);
      expect(res.json.error).toMatchObject({ code: "invalid_path", details: { field: "path" } });
    }
    expect(fs.existsSync(path.join("/etc", marker))).toBe(false);
    expect(treeOf(workspace)).toEqual(before);
    for (const p of ["etc-link/passwd", "up-link", "/etc/passwd"]) {
      const res = await get(`path=${encodeURIComponent(p)}`);
      expect(res.status, p).toBe(400);
      expect(JSON.parse(res.body.toString()).error.code).toBe("invalid_path");
    }
    // A symlink that stays inside is followed.
    const inside = await put("path=inside-link/f", Buffer.from("in"));
    expect(inside.json.path).toBe("/workspace/real/f");
    expect(fs.readFileSync(path.join(workspace, "real", "f"), "utf8")).toBe("in");
  });

  it("refuses a tar stream with an entry that could land outside, writing nothing", async () => {
    const before = treeOf(workspace);
    const bad = [
      [{ name: "../evil", type: "file", data: "e" }],
      [{ name: "/abs/evil", type: "file", data: "e" }],
      [
        { name: "out", type: "symlink", linkname: "/etc" },
        { name: "out/evil", type: "file", data: "e" },
      ],
      [{ name: "hard", type: "link", linkname: "/etc/passwd" }],
      [{ name: "dev", type: "character-device", devmajor: 1, devminor: 3 }],
    ] as Array<Array<tarStream.Headers & { data?: string }>>;
    for (const entries of bad) {
      const res = await put("path=/workspace/unpacked", await tarOf(entries), { "content-type": "application/x-tar" });
      expect(res.status, JSON.stringify(entries)).toBe(400);
      expect(res.json.error.code).toBe("invalid_archive");
    }
    const garbage = await put("path=/workspace/unpacked", randomBytes(2048), { "content-type": "application/x-tar" });
    expect([garbage.status, garbage.json.error.code]).toEqual([400, "invalid_archive"]);
    expect(treeOf(workspace)).toEqual(before);
    expect(fs.readdirSync(path.join(path.dirname(workspace), "incoming"))).toEqual([]);
  });

  it("never blocks on a fifo a command left in the workspace: refused alone, left out of a tree", async (t) => {
    fs.mkdirSync(path.join(workspace, "pipes"));
    // The workspace is shared by this file's tests: leave it as it was.
    t.onTestFinished(() => fs.rmSync(path.join(workspace, "pipes"), { recursive: true, force: true }));
    spawnSync("mkfifo", [path.join(workspace, "pipes", "fifo")]);
    fs.writeFileSync(path.join(workspace, "pipes", "plain"), "plain");
    const alone = await get("path=pipes/fifo");
    expect([alone.status, JSON.parse(alone.body.toString()).error.code]).toEqual([409, "path_conflict"]);
    const tree = await get("path=pipes");
    const out = tempDir("sbx-files-fifo-");
    await unpackInto([tree.body], out);
    expect(treeOf(out)).toEqual({ plain: `file 644 ${sha256(Buffer.from("plain"))}` });
  });

  it("answers 404 for what is not there and 409 for a file where a directory is", async () => {
    const missing = await get("path=/workspace/nope");
    expect([missing.status, JSON.parse(missing.body.toString()).error.code]).toEqual([404, "file_not_found"]);
    await put("path=conflict/dir/f", Buffer.from("f"));
    const onDir = await put("path=conflict/dir", Buffer.from("x"));
    expect([onDir.status, onDir.json.error.code]).toEqual([409, "path_conflict"]);
    const underFile = await put("path=conflict/dir/f/g", Buffer.from("x"));
    expect([underFile.status, underFile.json.error.code]).toEqual([409, "path_conflict"]);
    const noPath = await put("mode=0644", Buffer.from("x"));
    expect([noPath.status, noPath.json.error.details.field]).toEqual([400, "path"]);
    const badMode = await put("path=m&mode=999", Buffer.from("x"));
    expect([badMode.status, badMode.json.error.details.field]).toEqual([400, "mode"]);
  });

  it("honours Idempotency-Key: a replay answers the first upload without writing again", async () => {
    const key = { "idempotency-key": "upload-1" };
    const first = await put("path=idem.txt", Buffer.from("first"), key);
    expect(first.status).toBe(201);
    fs.writeFileSync(path.join(workspace, "idem.txt"), "changed by a command");
    const again = await put("path=idem.txt", Buffer.from("first"), key);
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(fs.readFileSync(path.join(workspace, "idem.txt"), "utf8")).toBe("changed by a command");
    const reused = await put("path=idem.txt", Buffer.from("other"), key);
    expect([reused.status, reused.json.error.code]).toEqual([422, "idempotency_key_reused"]);
  });

  it("takes uploads over the 16 MiB limit of other request bodies, streamed", async () => {
    const piece = randomBytes(1024 * 1024);
    const hash = createHash("sha256");
    async function* body() {
      for (let i = 0; i < 20; i++) {
        hash.update(piece);
        yield piece;
      }
    }
    const up = await put("path=big.bin", body());
    expect(up.status).toBe(201);
    expect(up.json).toMatchObject({ bytes: 20 * 1024 * 1024, sha256: hash.digest("hex") });
  });

  itNeeding(
    "root",
    "as root, into a workspace another uid owns: every entry it makes belongs to that uid, s-bits kept",
    async () => {
      await b.api("POST", "/api/v1/sandbox/create", { body: { name: "owned" } });
      const shown = await b.api("GET", "/api/v1/sandbox/owned");
      const owned: string = shown.json.host_workspace;
      // A bwrap sandbox's workspace is its own uid's (drivers/identity.ts); another one's is given here.
      const owner =
        shown.json.isolation === "bwrap" ? `${shown.json.driver.host_uid}:${shown.json.driver.host_uid}` : "4242:4343";
      if (shown.json.isolation !== "bwrap") fs.chownSync(owned, 4242, 4343);
      const url = (q: string) => `http://localhost/api/v1/sandbox/owned/files?${q}`;
      const tree = await tarOf([
        { name: "bin/", type: "directory", mode: 0o755 },
        { name: "bin/tool", type: "file", mode: 0o4755, data: "#!/bin/sh\n" },
        { name: "bin/link", type: "symlink", linkname: "tool" },
      ]);
      for (const [q, body, type] of [
        ["path=new/parents/tree", tree, "application/x-tar"],
        ["path=other/file.txt&mode=0640", Buffer.from("x"), "application/octet-stream"],
      ] as const) {
        const res = await request(url(q), {
          method: "PUT",
          dispatcher: agent,
          headers: { "content-type": type },
          body,
        });
        expect(res.statusCode).toBe(201);
        await res.body.dump();
      }
      const owners: Record<string, string> = {};
      const walk = (dir: string, rel: string) => {
        for (const name of fs.readdirSync(dir)) {
          const st = fs.lstatSync(path.join(dir, name));
          owners[`${rel}${name}`] = `${st.uid}:${st.gid}`;
          if (st.isDirectory()) walk(path.join(dir, name), `${rel}${name}/`);
        }
      };
      walk(owned, "");
      expect(
        Object.values(owners).every((o) => o === owner),
        JSON.stringify(owners),
      ).toBe(true);
      expect(Object.keys(owners)).toContain("new/parents/tree/bin/link");
      expect(fs.statSync(path.join(owned, "new/parents/tree/bin/tool")).mode & 0o7777).toBe(0o4755);
    },
  );

  itNeeding("bwrap", "puts files where a bwrap sandbox's commands see them, and gets theirs", async () => {
    await b.api("POST", "/api/v1/sandbox/create", { body: { name: "iso", isolation: "bwrap" } });
    const url = (q: string) => `http://localhost/api/v1/sandbox/iso/files?${q}`;
    const res = await request(url("path=script.sh&mode=0755"), {
      method: "PUT",
      dispatcher: agent,
      body: "#!/bin/sh\necho from-script > made-inside.txt\n",
    });
    expect(res.statusCode).toBe(201);
    await res.body.dump();
    const ran = await b.api("POST", "/api/v1/sandbox/iso/execute", { body: { command: ["./script.sh"] } });
    expect(ran.json).toMatchObject({ outcome: "succeeded" });
    const back = await request(url("path=made-inside.txt"), { dispatcher: agent });
    expect(await back.body.text()).toBe("from-script\n");
  });
});

describe("unpackTree on the user's disk", () => {
  it("refuses to write through a symlink already there", async () => {
    const dest = tempDir("sbx-unpack-");
    const outside = tempDir("sbx-outside-");
    fs.symlinkSync(outside, path.join(dest, "link"));
    const tar = await tarOf([{ name: "link/evil", type: "file", data: "e" }]);
    await expect(unpackInto([tar], dest)).rejects.toMatchObject({ code: "through_symlink" });
    expect(fs.readdirSync(outside)).toEqual([]);
  });
});
