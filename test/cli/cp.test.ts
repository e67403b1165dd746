// sbx cp, in-process against the embedded backend: byte-exact round trips of a
// binary file and of a directory tree (sha256 of every file, modes, symlinks),
// tar streams on stdin and stdout, escapes refused with nothing written.

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendHandle } from "../../src/backend/backend.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { packTree } from "../../src/files/tar.js";
import { tarOf, victimFile } from "../support/archives.js";
import { treeOf, sha256, unpackInto } from "../support/trees.js";
import { makeHome, removeHome } from "../support/cli.js";
import { startHomeBackend } from "../support/home-backend.js";

let home: string;
let backend: BackendHandle;
let workspace: string;

beforeAll(async () => {
  home = makeHome("sbx-cp-");
  backend = await startHomeBackend(home);
  const shown = await sbx(["sandbox", "show", "default", "--json"]);
  workspace = JSON.parse(shown.out).host_workspace;
});
afterAll(async () => {
  await backend.close();
  removeHome(home);
});

async function sbx(argv: string[], stdin?: Buffer) {
  const io = createBufferIO(stdin === undefined ? {} : { stdin });
  const code = await main(argv, io, { SBX_HOME: home });
  return { code, out: io.stdoutText(), bytes: io.stdoutBytes(), err: io.stderrText() };
}

function localProject(): string {
  const root = path.join(makeHome("sbx-cp-src-"), "proj");
  fs.mkdirSync(path.join(root, "bin"), { recursive: true });
  fs.mkdirSync(path.join(root, "empty"));
  fs.writeFileSync(path.join(root, "bin", "tool"), "#!/bin/sh\necho tool\n", { mode: 0o755 });
  fs.writeFileSync(path.join(root, "data.bin"), randomBytes(2 * 1024 * 1024 + 17), { mode: 0o600 });
  fs.writeFileSync(path.join(root, "utf8-\u00e9.txt"), "caf\u00e9\n");
  fs.symlinkSync("bin/tool", path.join(root, "run"));
  fs.symlinkSync("/usr/bin/env", path.join(root, "abs-link"));
  return root;
}

describe("sbx cp", () => {
  it("round-trips a binary file byte for byte, mode kept", async () => {
    const dir = makeHome("sbx-cp-file-");
    const file = path.join(dir, "blob.bin");
    const data = randomBytes(1024 * 1024 + 3);
    fs.writeFileSync(file, data, { mode: 0o751 });
    const up = await sbx(["cp", file, "default:/workspace/blob.bin", "--json"]);
    expect(up.code, up.err).toBe(0);
    expect(JSON.parse(up.out)).toEqual({
      source: file,
      destination: "default:/workspace/blob.bin",
      type: "file",
      bytes: data.length,
      sha256: sha256(data),
      entries: null,
    });
    expect(sha256(fs.readFileSync(path.join(workspace, "blob.bin")))).toBe(sha256(data));

    const back = path.join(dir, "back.bin");
    const down = await sbx(["cp", "default:blob.bin", back]);
    expect(down.code, down.err).toBe(0);
    expect(down.err).toBe(`sbx: copied 1.0 MiB to ${back}\n`);
    expect(sha256(fs.readFileSync(back))).toBe(sha256(data));
    expect(fs.statSync(back).mode & 0o777).toBe(0o751);
    // Into a directory that exists: under its own name.
    expect((await sbx(["cp", "default:blob.bin", dir])).code).toBe(0);
    expect(sha256(fs.readFileSync(path.join(dir, "blob.bin")))).toBe(sha256(data));
  });

  it("round-trips a directory tree: every file's sha256, modes, empty directories, symlinks", async () => {
    const project = localProject();
    const up = await sbx(["cp", project, "default:/workspace/proj"]);
    expect(up.code, up.err).toBe(0);
    expect(treeOf(path.join(workspace, "proj"))).toEqual(treeOf(project));

    const out = makeHome("sbx-cp-out-");
    const down = await sbx(["cp", "default:proj", out]);
    expect(down.code, down.err).toBe(0);
    expect(treeOf(path.join(out, "proj"))).toEqual(treeOf(project));
    // A directory copied onto one that exists goes inside it.
    expect((await sbx(["cp", project, "default:/workspace/proj"])).code).toBe(0);
    expect(fs.existsSync(path.join(workspace, "proj", "proj", "bin", "tool"))).toBe(true);
  });

  it("takes a tar stream on stdin and gives one on stdout", async () => {
    const project = localProject();
    const fd = fs.openSync(project, "r");
    const chunks: Buffer[] = [];
    const packed = packTree(fd);
    for await (const c of packed.stream) chunks.push(c as Buffer);
    fs.closeSync(fd);
    const tar = Buffer.concat(chunks);
    const up = await sbx(["cp", "-", "default:/workspace/from-stdin"], tar);
    expect(up.code, up.err).toBe(0);
    expect(treeOf(path.join(workspace, "from-stdin"))).toEqual(treeOf(project));

    const down = await sbx(["cp", "default:/workspace/from-stdin", "-"]);
    expect(down.code, down.err).toBe(0);
    expect(down.err).toBe("");
    const out = makeHome("sbx-cp-tar-");
    await unpackInto([down.bytes], out);
    expect(treeOf(out)).toEqual(treeOf(project));
  });

  it("refuses escapes and bad arguments, writing nothing", async () => {
    const dir = makeHome("sbx-cp-bad-");
    const file = path.join(dir, "f");
    fs.writeFileSync(file, "f");
    fs.symlinkSync("/etc", path.join(workspace, "to-etc"));
    const before = treeOf(workspace);
    for (const [argv, message] of [
      [["cp", file, "default:../f"], "may not contain .."],
      [["cp", file, "default:/etc/f"], "only /workspace"],
      [["cp", file, "default:to-etc/f"], "leads outside /workspace"],
      [["cp", file, "other-dir"], "one side must be SANDBOX:PATH"],
      [["cp", "default:a", "default:b"], "both sides name a sandbox"],
      [["cp", path.join(dir, "missing"), "default:"], "no such file or directory; nothing was sent"],
    ] as const) {
      const r = await sbx([...argv]);
      expect(r.code, argv.join(" ")).toBe(125);
      expect(r.err).toContain(message);
    }
    expect(treeOf(workspace)).toEqual(before);
    expect(fs.existsSync("/etc/f")).toBe(false);
    const missing = await sbx(["cp", "default:nope", dir]);
    expect([missing.code, missing.err]).toEqual([125, "sbx: default:nope: no such file or directory\n"]);
    // Out through a symlink that leads out: refused as the way in is.
    const out = await sbx(["cp", "default:to-etc/passwd", dir]);
    expect(out.code).toBe(125);
    expect(out.err).toContain("leads outside /workspace");
    expect(out.err).toContain("nothing was written");
  });

  it("a file a command made 6755 is copied out without s-bits, belonging to the user running sbx cp", async () => {
    const made = await sbx([
      "exec",
      "--",
      "sh",
      "-c",
      "mkdir -p suid && cp /bin/true suid/tool && chmod 6755 suid/tool",
    ]);
    expect(made.code, made.err).toBe(0);
    const tool = path.join(workspace, "suid", "tool");
    if (process.getuid?.() === 0) {
      // Whoever the sandbox's commands run as, not the user copying out.
      fs.chownSync(tool, 4242, 4242);
      fs.chmodSync(tool, 0o6755);
    }
    expect(fs.statSync(tool).mode & 0o7777).toBe(0o6755);
    const out = makeHome("sbx-cp-suid-");
    expect((await sbx(["cp", "default:suid/tool", path.join(out, "tool")])).code).toBe(0);
    expect((await sbx(["cp", "default:suid", out])).code).toBe(0);
    for (const copied of [path.join(out, "tool"), path.join(out, "suid", "tool")]) {
      const st = fs.statSync(copied);
      expect([copied, (st.mode & 0o7777).toString(8), st.uid, st.gid]).toEqual([
        copied,
        "755",
        process.getuid!(),
        process.getgid!(),
      ]);
    }
  });

  it("a tar stream on stdin is unpacked by the same rules: its fix-ups never reach a host file", async () => {
    const victim = victimFile();
    const before = victim.now();
    const attack = await tarOf([
      { name: "x/", type: "directory", mode: 0o4777, mtime: new Date(0) },
      { name: "x", type: "symlink", linkname: victim.file },
    ]);
    const up = await sbx(["cp", "-", "default:/workspace/stdin-attack"], attack);
    expect(up.code, up.err).toBe(0);
    expect(victim.now()).toEqual(before);
  });

  it("suggests SANDBOX: when a side is the name of a sandbox and the colon was forgotten", async () => {
    expect((await sbx(["sandbox", "create", "ci"])).code).toBe(0);
    const dir = makeHome("sbx-cp-colon-");
    const file = path.join(dir, "f.txt");
    fs.writeFileSync(file, "f");
    const into = await sbx(["cp", file, "ci"]);
    expect(into.code).toBe(125);
    expect(into.err).toBe(
      `sbx: one side must be SANDBOX:PATH\nhint: sandbox ci exists: did you mean \`sbx cp ${file} ci:\`?\n`,
    );
    const outOf = await sbx(["cp", "ci", dir]);
    expect(outOf.err).toContain(`hint: sandbox ci exists: did you mean \`sbx cp ci: ${dir}\`?`);
    // No sandbox of that name: the general hint, nothing guessed.
    const plain = await sbx(["cp", file, "cj"]);
    expect(plain.code).toBe(125);
    expect(plain.err).toBe(
      "sbx: one side must be SANDBOX:PATH\nhint: e.g. sbx cp ./src build:/workspace/src, or sbx cp build:/workspace/out.txt .\n",
    );
    expect(fs.existsSync(path.join(process.cwd(), "ci"))).toBe(false);
  });
});
