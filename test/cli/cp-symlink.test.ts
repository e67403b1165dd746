// sbx cp SANDBOX:PATH of a symlink named by itself: copied as the link (as docker cp
// does), whatever it points at, and followed only with -L, only where it stays inside
// /workspace. The attacks (links to /etc/shadow, to ../../ and past it), as root: no
// host content is ever copied, and the host is unchanged.

import fs from "node:fs";
import path from "node:path";
import * as tarStream from "tar-stream";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { BackendHandle } from "../../src/backend/backend.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startHomeBackend } from "../support/home-backend.js";
import { runMain } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";
import { sha256 } from "../support/trees.js";

let home: string;
let backend: BackendHandle;
let workspace: string;
let dest: string;

const cp = (...args: string[]) => runMain(["cp", ...args], { home });

beforeAll(async () => {
  home = makeHome("sbx-cp-link-");
  backend = await startHomeBackend(home);
  const shown = await runMain(["sandbox", "show", "default", "--json"], { home });
  workspace = JSON.parse(shown.stdout).host_workspace;
  fs.mkdirSync(path.join(workspace, "sub"));
  fs.writeFileSync(path.join(workspace, "sub", "file.txt"), "inside\n");
  fs.symlinkSync("/etc/shadow", path.join(workspace, "shadow-link"));
  fs.symlinkSync("../../", path.join(workspace, "up"));
  fs.symlinkSync("../../../../../../etc/passwd", path.join(workspace, "up-passwd"));
  fs.symlinkSync("sub/file.txt", path.join(workspace, "inside"));
  fs.symlinkSync("/workspace/sub", path.join(workspace, "dirlink"));
});
afterAll(async () => {
  await backend.close();
  removeHome(home);
});
beforeEach((t) => {
  const dir = makeHome("sbx-cp-link-dest-");
  dest = path.join(dir, "out");
  fs.mkdirSync(dest);
  t.onTestFinished(() => removeHome(dir));
});

/** Every regular file under a directory, with its bytes. */
function filesUnder(dir: string): Map<string, Buffer> {
  const found = new Map<string, Buffer>();
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const p = path.join(e.parentPath, e.name);
    if (e.isFile()) found.set(path.relative(dir, p), fs.readFileSync(p));
  }
  return found;
}

async function tarEntries(bytes: Buffer): Promise<tarStream.Headers[]> {
  const extract = tarStream.extract();
  const headers: tarStream.Headers[] = [];
  const reading = (async () => {
    for await (const entry of extract) {
      headers.push(entry.header);
      for await (const _ of entry) {
        // links carry no data
      }
    }
  })();
  extract.end(bytes);
  await reading;
  return headers;
}

describe("sbx cp of a symlink named by itself", () => {
  it("copies the link itself, target as it is; --json says symlink and its target", async () => {
    const r = await cp("default:/workspace/inside", path.join(dest, "x"));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`sbx: copied the symlink inside -> sub/file.txt to ${path.join(dest, "x")}\n`);
    expect(fs.readlinkSync(path.join(dest, "x"))).toBe("sub/file.txt");

    // Into a directory that is there: under its own name.
    const j = await cp("default:inside", dest, "--json");
    expect(j.code, j.stderr).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({
      source: "default:/workspace/inside",
      destination: path.join(dest, "inside"),
      type: "symlink",
      target: "sub/file.txt",
      bytes: "sub/file.txt".length,
      sha256: sha256(Buffer.from("sub/file.txt")),
      entries: null,
    });
    expect(fs.lstatSync(path.join(dest, "inside")).isSymbolicLink()).toBe(true);
  });

  it("-L follows a link that stays inside: a file's bytes, a directory's tree", async () => {
    const f = await cp("-L", "default:/workspace/inside", path.join(dest, "x"));
    expect(f.code, f.stderr).toBe(0);
    expect(fs.lstatSync(path.join(dest, "x")).isFile()).toBe(true);
    expect(fs.readFileSync(path.join(dest, "x"), "utf8")).toBe("inside\n");

    const d = await cp("--follow-link", "default:dirlink", path.join(dest, "tree"));
    expect(d.code, d.stderr).toBe(0);
    expect(fs.readFileSync(path.join(dest, "tree", "file.txt"), "utf8")).toBe("inside\n");
  });

  it("as a tar stream on stdout: one symlink entry, its target as it is", async () => {
    const r = await cp("default:/workspace/inside", "-");
    expect(r.code, r.stderr).toBe(0);
    const entries = await tarEntries(Buffer.from(r.stdout, "latin1"));
    expect(entries.map((h) => [h.name, h.type, h.linkname])).toEqual([["inside", "symlink", "sub/file.txt"]]);
  });
});

describeNeeding("root", "sbx cp of a symlink that leads out of /workspace (attacks, as root)", () => {
  const shadowBefore = () => {
    const st = fs.statSync("/etc/shadow");
    return { sha: sha256(fs.readFileSync("/etc/shadow")), mtime: st.mtimeMs, mode: st.mode };
  };

  it("a link to /etc/shadow, by name: the link is copied, never the host's file; the host is unchanged", async () => {
    const before = shadowBefore();
    const shadow = fs.readFileSync("/etc/shadow");
    const r = await cp("default:/workspace/shadow-link", path.join(dest, "x"));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`sbx: copied the symlink shadow-link -> /etc/shadow to ${path.join(dest, "x")}\n`);
    expect(fs.lstatSync(path.join(dest, "x")).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(path.join(dest, "x"))).toBe("/etc/shadow");
    expect(filesUnder(dest).size).toBe(0);

    // On stdout: a tar of the link alone, nothing of the file.
    const out = await cp("default:/workspace/shadow-link", "-");
    expect(out.code, out.stderr).toBe(0);
    const bytes = Buffer.from(out.stdout, "latin1");
    expect((await tarEntries(bytes)).map((h) => [h.type, h.linkname, h.size ?? 0])).toEqual([
      ["symlink", "/etc/shadow", 0],
    ]);
    if (shadow.length > 8) expect(bytes.includes(shadow.subarray(0, 8))).toBe(false);
    expect(shadowBefore()).toEqual(before);
  });

  it("-L on a link that leads out (/etc/shadow, ../../, past the root): refused, nothing written, host unchanged", async () => {
    const before = shadowBefore();
    for (const [name, target] of [
      ["shadow-link", "/etc/shadow"],
      ["up", "../../"],
      ["up-passwd", "../../../../../../etc/passwd"],
    ] as const) {
      const r = await cp("-L", `default:/workspace/${name}`, path.join(dest, "x"));
      expect(r.code, r.stderr).toBe(125);
      expect(r.stderr).toContain(`leads outside /workspace (/workspace/${name} -> ${target}); nothing was written`);
      expect(r.stderr).toContain("hint: without -L (--follow-link), sbx cp copies the symlink itself");
      const s = await cp("-L", `default:/workspace/${name}`, "-");
      expect(s.code, s.stderr).toBe(125);
      expect(s.stdout).toBe("");
    }
    expect(fs.readdirSync(dest)).toEqual([]);
    expect(shadowBefore()).toEqual(before);
  });

  it("a link to ../../ by name is the link itself: no host directory is copied", async () => {
    const r = await cp("default:up", dest);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readlinkSync(path.join(dest, "up"))).toBe("../../");
    expect(fs.readdirSync(dest)).toEqual(["up"]);
    expect(filesUnder(dest).size).toBe(0);
  });
});
