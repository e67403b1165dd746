// oci-archive:FILE[:TAG] (docs/images.md, "Sources"): an OCI layout as a tar file, as
// skopeo writes it, pulled into the store and a sandbox made from it; an archive with an
// entry leaving its directory is refused, with nothing left in the store's tmp/.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildLayout, busyboxEntries, type LayoutImage, tarOf } from "../support/images.js";
import { type LocalHome, localHome } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";

describeNeeding(["bwrap", "skopeo", "busyboxStatic"], "images from an oci-archive file", () => {
  let home: LocalHome;
  let layout: LayoutImage;
  let archive: string;
  beforeAll(async () => {
    home = await localHome("sbx-image-archive-");
    layout = await buildLayout([busyboxEntries()], { tag: "1" });
    archive = path.join(home.home, "image.tar");
    const r = spawnSync("skopeo", ["copy", "-q", `oci:${layout.dir}:1`, `oci-archive:${archive}:v1`], {
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`skopeo copy failed: ${r.stderr}`);
  });
  afterAll(async () => {
    await home?.close();
  });

  it("pulls an archive skopeo wrote, and a sandbox runs from it", async () => {
    const pulled = await home.json<{ digest: string; references: string[] }>([
      "image",
      "pull",
      `oci-archive:${archive}:v1`,
      "--json",
    ]);
    expect(pulled.result.code, pulled.result.stderr).toBe(0);
    expect(pulled.doc.references).toEqual([`oci-archive:${archive}:v1`]);
    const inspect = spawnSync("skopeo", ["inspect", "--raw", `oci-archive:${archive}:v1`]);
    expect(pulled.doc.digest).toBe(`sha256:${createHash("sha256").update(inspect.stdout).digest("hex")}`);
    const created = await home.sbx(["sandbox", "create", "arch", "--image", `oci-archive:${archive}:v1`]);
    expect(created.code, created.stderr).toBe(0);
    expect((await home.sbx(["exec", "-s", "arch", "--", "cat", "/etc/image-release"])).stdout).toBe("sbx-test-image\n");
    // sbx image import FILE:TAG is the same pull.
    const imported = await home.json<{ digest: string }>(["image", "import", `${archive}:v1`, "--json"]);
    expect(imported.result.code, imported.result.stderr).toBe(0);
    expect(imported.doc.digest).toBe(pulled.doc.digest);
    // Nothing of the unpacked archive stays.
    expect(fs.readdirSync(path.join(home.home, "daemon", "images", "tmp"))).toEqual([]);
  });

  it("refuses an archive with an entry leaving its directory, leaving nothing behind", async () => {
    const outside = path.join(home.home, "escaped");
    const bad = path.join(home.home, "bad.tar");
    fs.writeFileSync(bad, await tarOf([{ name: "../escaped", data: "x\n" }]));
    const r = await home.sbx(["image", "pull", `oci-archive:${bad}`]);
    expect(r.code).toBe(125);
    expect(r.stderr).toContain(`image pull failed: the OCI archive ${bad} cannot be unpacked`);
    expect(fs.existsSync(outside)).toBe(false);
    expect(fs.readdirSync(path.join(home.home, "daemon", "images", "tmp"))).toEqual([]);
  });
});
