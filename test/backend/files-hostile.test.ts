// PUT/GET …/files against hostile content, as root where CI runs: an archive that
// redirects its own fix-ups (a directory replaced by a symlink to a host file), a
// hard link through a swapped parent, names too long, sockets, headers over the
// limit, and a command swapping a directory for a symlink while copies run. Every
// answer is a 4xx without host paths, and the host file is unchanged afterwards.

import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { Readable } from "node:stream";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tarOf, victimFile } from "../support/archives.js";
import { describeNeeding } from "../support/requirements.js";
import { fillUntilFree, smallTmpfs } from "../support/tmpfs.js";
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

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
async function put(query: string, body: Buffer, tar = true): Promise<{ status: number; text: string; json: any }> {
  const res = await request(`http://localhost${FILES}?${query}`, {
    method: "PUT",
    dispatcher: agent,
    headers: { "content-type": tar ? "application/x-tar" : "application/octet-stream" },
    body: Readable.from([body]),
  });
  const text = await res.body.text();
  return { status: res.statusCode, text, json: JSON.parse(text) };
}

/** A GET's status and body; a streamed answer cut off midway (a file changed under it) reads as "[cut off]". */
async function get(query: string, headers: Record<string, string> = {}) {
  const res = await request(`http://localhost${FILES}?${query}`, { dispatcher: agent, headers });
  const text = await res.body.text().catch(() => "[cut off]");
  return { status: res.statusCode, text };
}

describe("archives cannot reach outside their target", () => {
  it("a directory entry replaced by a symlink to a host file: the fix-up never reaches the host file", async () => {
    const victim = victimFile();
    const before = victim.now();
    const attack = await tarOf([
      { name: "x/", type: "directory", mode: 0o4777, mtime: new Date(0) },
      { name: "x", type: "symlink", linkname: victim.file },
      { name: "deep/y/", type: "directory", mode: 0o6777, mtime: new Date(0) },
      { name: "deep", type: "symlink", linkname: path.dirname(victim.file) },
    ]);
    const res = await put("path=attack", attack);
    expect(res.status, res.text).toBe(201);
    expect(victim.now()).toEqual(before);
    expect(fs.statSync(path.dirname(victim.file)).mode & 0o7777).toBe(0o700);
    // The archive's own symlinks are kept as symlinks, never followed.
    expect(fs.readlinkSync(path.join(workspace, "attack", "x"))).toBe(victim.file);
  });

  it("a hard link to a file whose parent was swapped for a symlink is refused, writing nothing", async () => {
    const victim = victimFile();
    const before = victim.now();
    const attack = await tarOf([
      { name: "d/victim", type: "file", data: "mine" },
      { name: "d", type: "symlink", linkname: path.dirname(victim.file) },
      { name: "h", type: "link", linkname: "d/victim" },
    ]);
    const res = await put("path=hardlinked", attack);
    expect([res.status, res.json.error.code]).toEqual([400, "invalid_archive"]);
    expect(victim.now()).toEqual(before);
    expect(fs.existsSync(path.join(workspace, "hardlinked"))).toBe(false);
  });

  it("a name longer than the file system takes is 400 invalid_archive (name_too_long), no host path", async () => {
    const res = await put("path=long", await tarOf([{ name: `d/${"n".repeat(300)}`, type: "file", data: "x" }]));
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: "invalid_archive", details: { reason: "name_too_long" } });
    expect(res.text).not.toContain(b.dir);
    const asPath = await put(`path=${"p".repeat(300)}/f`, Buffer.from("x"), false);
    expect([asPath.status, asPath.json.error.code]).toEqual([400, "invalid_path"]);
    expect(asPath.text).not.toContain(b.dir);
    const read = await get(`path=${"p".repeat(300)}`);
    expect(read.status).toBe(404);
  });

  it("a refused entry early in a large upload still gets its answer (the rest is read, not reset)", async () => {
    const big = await tarOf([
      { name: "../evil", type: "file", data: "e" },
      { name: "blob", type: "file", data: Buffer.alloc(24 * 1024 * 1024, 1) },
    ]);
    const res = await put("path=early", big);
    expect([res.status, res.json.error.code]).toEqual([400, "invalid_archive"]);
    expect(fs.existsSync(path.join(workspace, "early"))).toBe(false);
  });

  it("a GET of a socket is 409 path_conflict, no host path", async () => {
    const server = net.createServer().listen(path.join(workspace, "daemon.sock"));
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const res = await get("path=daemon.sock");
      expect(res.status).toBe(409);
      expect(JSON.parse(res.text).error.code).toBe("path_conflict");
      expect(res.text).not.toContain(b.dir);
    } finally {
      server.close();
    }
  });

  it("headers over the limit are 431 headers_too_large, said as headers", async () => {
    const res = await get(`path=${"a".repeat(20_000)}`);
    expect(res.status).toBe(431);
    const error = JSON.parse(res.text).error;
    expect(error.code).toBe("headers_too_large");
    expect(error.message).toMatch(/headers/);
  });

  it("a command swapping a directory for a symlink meanwhile gets 4xx answers, never 500, nothing outside", async () => {
    const outside = tempDir("sbx-swap-outside-");
    fs.writeFileSync(path.join(outside, "f"), "outside\n");
    fs.utimesSync(path.join(outside, "f"), new Date("2001-01-01Z"), new Date("2001-01-01Z"));
    // What a hostile command in the sandbox would run, as fast as it can.
    const swapper = spawn(
      "sh",
      [
        "-c",
        'while :; do rm -rf race; mkdir -p race/sub; echo in > race/f; rm -rf race; ln -s "$1" race; done',
        "sh",
        outside,
      ],
      { cwd: workspace, stdio: "ignore" },
    );
    const statuses = new Set<number>();
    try {
      const upload = await tarOf([
        { name: "sub/", type: "directory", mode: 0o755 },
        { name: "sub/g", type: "file", data: "uploaded" },
      ]);
      for (let i = 0; i < 30; i++) {
        const answers = [
          await put("path=race/sub", upload),
          await put("path=race/f", Buffer.from("uploaded"), false),
          await get("path=race"),
          await get("path=race/f"),
        ];
        for (const a of answers) {
          statuses.add(a.status);
          expect(a.status, `${a.text} ${b.logs.filter((l) => l.includes("internal")).join("\n")}`).not.toBe(500);
          expect(a.text).not.toContain(b.dir);
        }
      }
    } finally {
      swapper.kill("SIGKILL");
      await new Promise((resolve) => swapper.once("exit", resolve));
    }
    expect(fs.readdirSync(outside)).toEqual(["f"]);
    expect(fs.readFileSync(path.join(outside, "f"), "utf8")).toBe("outside\n");
    expect(fs.statSync(path.join(outside, "f")).mtimeMs).toBe(new Date("2001-01-01Z").getTime());
    expect([...statuses].every((s) => s < 500)).toBe(true);
  });
});

describeNeeding("tmpfs", "an upload onto a full disk (a small tmpfs, as root)", () => {
  it("is 503 not_started (storage_unavailable) without host paths, nothing written; it goes through once there is room", async (t) => {
    const fsys = smallTmpfs("16m");
    const full = await startTestBackend({}, fsys.dir);
    const fullAgent = new Agent({ connect: { socketPath: full.socketPath } });
    t.onTestFinished(async () => {
      await fullAgent.close();
      await full.stop();
      fsys.cleanup();
    });
    const fullWorkspace: string = (await full.api("GET", "/api/v1/sandbox/default")).json.host_workspace;
    const filler = fillUntilFree(fsys.dir);
    const send = async (query: string, body: Buffer, type: string) => {
      const res = await request(`http://localhost${FILES}?${query}`, {
        method: "PUT",
        dispatcher: fullAgent,
        headers: { "content-type": type },
        body,
      });
      const text = await res.body.text();
      return { status: res.statusCode, text };
    };
    const blob = Buffer.alloc(2 * 1024 * 1024, 1);
    const tree = await tarOf([{ name: "d/blob", type: "file", data: blob }]);
    for (const [query, body, type] of [
      ["path=blob", blob, "application/octet-stream"],
      ["path=tree", tree, "application/x-tar"],
    ] as const) {
      const refused = await send(query, body, type);
      expect(refused.status, refused.text).toBe(503);
      expect(JSON.parse(refused.text).error).toMatchObject({
        code: "not_started",
        details: { reason: "storage_unavailable" },
      });
      expect(refused.text).not.toContain(fsys.dir);
    }
    expect(fs.readdirSync(fullWorkspace)).toEqual([]);
    fs.rmSync(filler);
    expect((await send("path=blob", blob, "application/octet-stream")).status).toBe(201);
  });
});
