// An image's layers unpacked into a root (src/backend/images/layers.ts): whiteouts and
// opaque directories applied, device nodes skipped and said, and hostile layers refused
// as root, with the host unchanged.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { unpackImage } from "../../src/backend/images/layers.js";
import { pullImage } from "../../src/backend/images/pull.js";
import { parseImageRef } from "../../src/backend/images/reference.js";
import { ImageStore } from "../../src/backend/images/store.js";
import { buildLayout, type LayerEntry } from "../support/images.js";
import { describeNeeding } from "../support/requirements.js";
import { tempDir } from "../support/temp.js";

/** Pulls an image of these layers into a fresh store and unpacks it into a fresh root. */
async function unpacked(layers: LayerEntry[][]) {
  const layout = await buildLayout(layers, { tag: "t" });
  const store = new ImageStore(tempDir("sbx-store-"));
  const image = await pullImage(store, parseImageRef(`oci:${layout.dir}:t`));
  const root = path.join(tempDir("sbx-root-"), "root");
  fs.mkdirSync(root);
  return { root, run: () => unpackImage(store, image, root, null) };
}

describe("image layers", () => {
  it("applies whiteouts and opaque directories of later layers, keeping the layer's own entries", async () => {
    const { root, run } = await unpacked([
      [
        { name: "etc/", type: "directory" },
        { name: "etc/keep", data: "keep" },
        { name: "etc/gone", data: "gone" },
        { name: "opt/", type: "directory" },
        { name: "opt/old-a", data: "a" },
        { name: "opt/sub/", type: "directory" },
        { name: "opt/sub/old-b", data: "b" },
      ],
      [
        { name: "etc/.wh.gone", data: "" },
        { name: "opt/", type: "directory" },
        { name: "opt/new", data: "new" },
        { name: "opt/.wh..wh..opq", data: "" },
      ],
    ]);
    await run();
    expect(fs.readFileSync(path.join(root, "etc/keep"), "utf8")).toBe("keep");
    expect(fs.existsSync(path.join(root, "etc/gone"))).toBe(false);
    expect(fs.readdirSync(path.join(root, "opt"))).toEqual(["new"]);
    // No whiteout marker is left behind as a file.
    expect(fs.readdirSync(path.join(root, "etc"))).toEqual(["keep"]);
  });

  it("lets a hard link name a file of a layer below, still in place", async () => {
    const { root, run } = await unpacked([
      [
        { name: "bin/", type: "directory" },
        { name: "bin/tool", data: "tool" },
      ],
      [{ name: "bin/alias", type: "link", linkname: "bin/tool" }],
    ]);
    await run();
    expect(fs.statSync(path.join(root, "bin/alias")).ino).toBe(fs.statSync(path.join(root, "bin/tool")).ino);
  });
});

describeNeeding("root", "hostile image layers, unpacked as root", () => {
  it("skips a device node and a fifo, and says so", async () => {
    const { root, run } = await unpacked([
      [
        { name: "dev/", type: "directory" },
        { name: "dev/sda", type: "character-device", devmajor: 8, devminor: 0 },
        { name: "dev/pipe", type: "fifo" },
        { name: "ok", data: "ok" },
      ],
    ]);
    const summary = await run();
    expect(summary.skippedCount).toBe(2);
    expect(summary.skipped).toEqual(["dev/sda", "dev/pipe"]);
    expect(fs.readdirSync(path.join(root, "dev"))).toEqual([]);
    expect(fs.readFileSync(path.join(root, "ok"), "utf8")).toBe("ok");
  });

  it("refuses a ../ entry, and nothing lands outside the root", async () => {
    const outside = tempDir("sbx-outside-");
    const { root, run } = await unpacked([[{ name: `../../${path.basename(outside)}/planted`, data: "x" }]]);
    await expect(run()).rejects.toThrow(/contains \.\./);
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it("refuses an absolute entry", async () => {
    const outside = tempDir("sbx-outside-");
    const { run } = await unpacked([[{ name: `${outside}/planted`, data: "x" }]]);
    await expect(run()).rejects.toThrow(/absolute/);
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it("refuses writing through a symlink a lower layer planted to a host directory", async () => {
    const outside = tempDir("sbx-outside-");
    fs.writeFileSync(path.join(outside, "passwd"), "host's own\n");
    const { run } = await unpacked([
      [{ name: "etc", type: "symlink", linkname: outside }],
      [{ name: "etc/passwd", data: "owned\n" }],
    ]);
    await expect(run()).rejects.toThrow(/through the symlink etc/);
    expect(fs.readFileSync(path.join(outside, "passwd"), "utf8")).toBe("host's own\n");
    expect(fs.readdirSync(outside)).toEqual(["passwd"]);
  });

  it("refuses a whiteout through a symlink to the host: the host file stays", async () => {
    const outside = tempDir("sbx-outside-");
    fs.writeFileSync(path.join(outside, "precious"), "keep me\n");
    const { run } = await unpacked([
      [{ name: "lib", type: "symlink", linkname: outside }],
      [{ name: "lib/.wh.precious", data: "" }],
    ]);
    await expect(run()).rejects.toThrow(/through the symlink lib/);
    expect(fs.readFileSync(path.join(outside, "precious"), "utf8")).toBe("keep me\n");
  });

  it("refuses an opaque marker below a symlink to the host: nothing there is emptied", async () => {
    const outside = tempDir("sbx-outside-");
    fs.writeFileSync(path.join(outside, "precious"), "keep me\n");
    const { run } = await unpacked([
      [{ name: "var", type: "symlink", linkname: outside }],
      [{ name: "var/.wh..wh..opq", data: "" }],
    ]);
    await expect(run()).rejects.toThrow(/through the symlink var/);
    expect(fs.readdirSync(outside)).toEqual(["precious"]);
  });

  it("refuses a hard link to a host file", async () => {
    const outside = tempDir("sbx-outside-");
    const secret = path.join(outside, "secret");
    fs.writeFileSync(secret, "host secret\n", { mode: 0o600 });
    const { root, run } = await unpacked([[{ name: "stolen", type: "link", linkname: secret.slice(1) }]]);
    await expect(run()).rejects.toThrow(/must name a file earlier/);
    expect(fs.statSync(secret).nlink).toBe(1);
    expect(fs.existsSync(path.join(root, "stolen"))).toBe(false);
  });

  it("refuses a whiteout named .. (nothing above the directory is removed)", async () => {
    const { root, run } = await unpacked([
      [
        { name: "a/", type: "directory" },
        { name: "a/f", data: "f" },
      ],
      [{ name: "a/.wh...", data: "" }],
    ]);
    await expect(run()).rejects.toThrow(/whiteout of no name/);
    expect(fs.readFileSync(path.join(root, "a/f"), "utf8")).toBe("f");
  });
});
