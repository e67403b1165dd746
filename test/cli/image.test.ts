// sbx image pull / list / rm in-process, on the local backend's store (no daemon needed).

import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeHome, removeHome } from "../support/cli.js";
import { buildLayout } from "../support/images.js";
import { runMain, runMainJson } from "../support/in-process.js";

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) removeHome(h);
});

function home(): string {
  const h = makeHome("sbx-cli-image-");
  homes.push(h);
  return h;
}

describe("sbx image", () => {
  it("pulls from an OCI layout (a relative directory), lists it and removes it with its blobs", async () => {
    const h = home();
    const layout = await buildLayout([[{ name: "hello", data: "hi\n" }]], { tag: "1.0" });
    const rel = path.relative(process.cwd(), layout.dir);
    const pulled = await runMainJson<{ digest: string; references: string[]; layers: number }>(
      ["image", "pull", `oci:${rel}:1.0`, "--json"],
      { home: h },
    );
    expect(pulled.result.code).toBe(0);
    expect(pulled.doc.digest).toBe(layout.digest);
    expect(pulled.doc.references).toEqual([`oci:${layout.dir}:1.0`]);
    const listed = await runMainJson<{ images: Array<{ digest: string; platform: string }> }>(
      ["image", "list", "--json"],
      { home: h },
    );
    expect(listed.doc.images.map((i) => i.digest)).toEqual([layout.digest]);
    const table = await runMain(["image", "list"], { home: h });
    expect(table.stdout).toContain(`oci:${layout.dir}:1.0`);
    const blobs = path.join(h, "daemon", "images", "blobs", "sha256");
    expect(fs.readdirSync(blobs)).toHaveLength(3);
    const rm = await runMain(["image", "rm", `oci:${layout.dir}:1.0`], { home: h });
    expect(rm.code).toBe(0);
    expect(rm.stderr).toContain(`removed image ${layout.digest} (3 blobs no other image uses)`);
    expect(fs.readdirSync(blobs)).toEqual([]);
    const again = await runMain(["image", "rm", layout.digest], { home: h });
    expect(again.code).toBe(125);
    expect(again.stderr).toContain("no image");
  });

  it("says a failed pull as image_pull_failed, nothing kept", async () => {
    const h = home();
    const r = await runMain(["image", "pull", "oci:/nonexistent/layout:1"], { home: h });
    expect(r.code).toBe(125);
    expect(r.stderr).toContain(
      "image pull failed: the OCI layout /nonexistent/layout: cannot read oci-layout (ENOENT)",
    );
    const listed = await runMainJson<{ images: unknown[] }>(["image", "list", "--json"], { home: h });
    expect(listed.doc.images).toEqual([]);
  });

  it("refuses a reference that is not one, as a usage error", async () => {
    const r = await runMain(["image", "pull", "Not A Ref!"], { home: home() });
    expect(r.code).toBe(125);
    expect(r.stderr).toContain("is not an image reference");
  });
});
