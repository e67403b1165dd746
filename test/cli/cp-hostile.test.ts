// sbx cp SANDBOX:PATH LOCAL against a hostile backend (a small HTTP server that
// answers what the test crafts): its archive may not reach outside the destination
// (the fix-up of a directory replaced by a symlink to a user's file), what lands is
// the user's without setuid, setgid or sticky bits (also in a tar stream on stdout),
// and a connection that breaks midway leaves nothing half-written at the destination.

import fs from "node:fs";
import path from "node:path";
import * as tarStream from "tar-stream";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { tarOf, victimFile } from "../support/archives.js";
import { makeHome, removeHome } from "../support/cli.js";
import { runMain, startMain } from "../support/in-process.js";
import { type Answer, type MisbehavingServer, startMisbehavingServer } from "../support/misbehaving-server.js";

let server: MisbehavingServer;
let home: string;
let dest: string;

beforeAll(async () => {
  server = await startMisbehavingServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach((t) => {
  home = makeHome("sbx-cp-hostile-");
  dest = path.join(home, "out");
  fs.mkdirSync(dest);
  t.onTestFinished(() => removeHome(home));
});

/** The backend answers a stat of PATH as `type`, and its read with `body` (a tar stream or a file's bytes). */
function serve(type: "file" | "directory", body: Buffer, opts: { mode?: string; dropAfter?: number } = {}): void {
  server.setBehaviour((req): Answer => {
    if (req.path.includes("stat=true")) {
      return { kind: "json", status: 200, body: { path: "/workspace/x", type, size: body.length, mode: "0755" } };
    }
    return {
      kind: "bytes",
      status: 200,
      contentType: type === "directory" ? "application/x-tar" : "application/octet-stream",
      body,
      headers: { "sbx-file-type": type, "sbx-file-mode": opts.mode ?? "0755" },
      ...(opts.dropAfter === undefined ? {} : { dropAfter: opts.dropAfter }),
    };
  });
}

const cp = (...args: string[]) => runMain(["cp", "--api-url", server.url, ...args], { home });

describe("sbx cp from a hostile backend", () => {
  it("a directory replaced by a symlink to the user's file: the user's file keeps its mode and mtime", async () => {
    const victim = victimFile();
    const before = victim.now();
    serve(
      "directory",
      await tarOf([
        { name: "./", type: "directory", mode: 0o755 },
        { name: "x/", type: "directory", mode: 0o4777, mtime: new Date(0) },
        { name: "x", type: "symlink", linkname: victim.file },
      ]),
    );
    const res = await cp("default:/workspace/x", dest);
    expect(res.code, res.stderr).toBe(0);
    expect(victim.now()).toEqual(before);
    expect(fs.readlinkSync(path.join(dest, "x", "x"))).toBe(victim.file);
  });

  it("a hard link through a swapped parent is refused: nothing at the destination, the user's file unlinked", async () => {
    const victim = victimFile();
    const before = victim.now();
    serve(
      "directory",
      await tarOf([
        { name: "d/victim", type: "file", data: "mine" },
        { name: "d", type: "symlink", linkname: path.dirname(victim.file) },
        { name: "h", type: "link", linkname: "d/victim" },
      ]),
    );
    const res = await cp("default:/workspace/x", dest);
    expect(res.code).toBe(75);
    expect(res.stderr).toMatch(/hard link .*nothing was written to/);
    expect(victim.now()).toEqual(before);
    expect(fs.readdirSync(dest)).toEqual([]);
  });

  it("drops setuid, setgid and sticky bits and gives everything to the user running sbx cp", async () => {
    serve(
      "directory",
      await tarOf([
        { name: "./", type: "directory", mode: 0o755 },
        { name: "bin/", type: "directory", mode: 0o3775, uid: 0, gid: 0 },
        { name: "bin/tool", type: "file", mode: 0o6755, uid: 4242, gid: 4242, data: "#!/bin/sh\n" },
      ]),
    );
    expect((await cp("default:/workspace/x", dest)).code).toBe(0);
    const dir = fs.statSync(path.join(dest, "x", "bin"));
    const tool = fs.statSync(path.join(dest, "x", "bin", "tool"));
    expect([(dir.mode & 0o7777).toString(8), (tool.mode & 0o7777).toString(8)]).toEqual(["775", "755"]);
    expect([tool.uid, tool.gid]).toEqual([process.getuid!(), process.getgid!()]);

    serve("file", Buffer.from("#!/bin/sh\n"), { mode: "6755" });
    expect((await cp("default:/workspace/x", path.join(dest, "one"))).code).toBe(0);
    expect((fs.statSync(path.join(dest, "one")).mode & 0o7777).toString(8)).toBe("755");
  });

  it("the tar stream on stdout carries the user's ownership and no s-bits either", async () => {
    serve(
      "directory",
      await tarOf([
        { name: "bin/", type: "directory", mode: 0o2755, uid: 4242, gid: 4242, uname: "evil", gname: "evil" },
        { name: "bin/tool", type: "file", mode: 0o6755, uid: 4242, gid: 4242, uname: "evil", data: "#!/bin/sh\n" },
      ]),
    );
    const run = startMain(["cp", "--api-url", server.url, "default:/workspace/x", "-"], { home });
    expect((await run.done).code).toBe(0);
    const headers: tarStream.Headers[] = [];
    const extract = tarStream.extract();
    const reading = (async () => {
      for await (const entry of extract) {
        headers.push(entry.header);
        entry.resume();
      }
    })();
    extract.end(run.io.stdoutBytes());
    await reading;
    expect(headers.map((h) => [h.name, (h.mode ?? 0).toString(8), h.uid, h.gid, h.uname ?? ""])).toEqual([
      ["bin/", "755", process.getuid!(), process.getgid!(), ""],
      ["bin/tool", "755", process.getuid!(), process.getgid!(), ""],
    ]);
  });

  it("a connection broken midway exits 255 saying so, and nothing half-written is at the destination", async () => {
    const tree = await tarOf([{ name: "big", type: "file", data: Buffer.alloc(256 * 1024, 7) }]);
    serve("directory", tree, { dropAfter: 100_000 });
    const dir = await cp("default:/workspace/x", dest);
    expect(dir.code).toBe(255);
    expect(dir.stderr).toMatch(/connection to the backend broke after .*; nothing was written to /);
    expect(fs.readdirSync(dest)).toEqual([]);

    serve("file", Buffer.alloc(256 * 1024, 7), { dropAfter: 100_000 });
    const file = await cp("default:/workspace/x", path.join(dest, "file"));
    expect(file.code).toBe(255);
    expect(file.stderr).toMatch(/connection to the backend broke/);
    expect(fs.readdirSync(dest)).toEqual([]);
  });
});
