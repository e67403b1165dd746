// Sandboxes made from an image (docs/images.md, "A sandbox from an image"), through the
// CLI in-process against the embedded backend: the image's busybox runs, not the host's
// tools; writes to / stay in the sandbox's own copy, never in the image or another
// sandbox made from it; sandbox show says the image and its digest.

import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { routePath } from "../../src/protocol/routes.js";
import { buildLayout, busyboxEntries, type LayoutImage } from "../support/images.js";
import { type LocalHome, localHome } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";

/** One GET on the backend's socket, its JSON answer. */
function getJson(socketPath: string, urlPath: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    http
      .get({ socketPath, path: urlPath }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
      })
      .on("error", reject);
  });
}

function hashOfDir(dir: string): string {
  const h = createHash("sha256");
  for (const name of fs.readdirSync(dir, { recursive: true }).map(String).sort()) {
    const p = path.join(dir, name);
    const st = fs.lstatSync(p);
    h.update(
      `${name}:${st.mode}:${st.isFile() ? createHash("sha256").update(fs.readFileSync(p)).digest("hex") : ""}\n`,
    );
  }
  return h.digest("hex");
}

describeNeeding(["bwrap", "busyboxStatic"], "a sandbox from an image", () => {
  let home: LocalHome;
  let layout: LayoutImage;
  beforeAll(async () => {
    home = await localHome("sbx-image-sandbox-");
    layout = await buildLayout([busyboxEntries()], { tag: "1", config: { Env: ["GREETING=from-image"], Cmd: ["sh"] } });
  });
  afterAll(async () => {
    await home?.close();
  });

  it("runs the image's busybox, not the host's tools, and says the image and its digest", async () => {
    const created = await home.sbx(["sandbox", "create", "img1", "--image", `oci:${layout.dir}:1`]);
    expect(created.code, created.stderr).toBe(0);
    const release = await home.sbx(["exec", "-s", "img1", "--", "cat", "/etc/image-release"]);
    expect(release.stdout).toBe("sbx-test-image\n");
    // The host has python3 and /usr/bin; the image has neither.
    const python = await home.sbx(["exec", "-s", "img1", "--", "python3", "--version"]);
    expect(python.code).toBe(127);
    const usr = await home.sbx(["exec", "-s", "img1", "--", "ls", "/usr/bin"]);
    expect(usr.code).not.toBe(0);
    const env = await home.sbx(["exec", "-s", "img1", "--", "sh", "-c", "echo $GREETING; readlink /proc/self/exe"]);
    expect(env.stdout).toBe("from-image\n/bin/busybox\n");
    const show = await home.json<{ image: { reference: string; digest: string; platform: string } }>([
      "sandbox",
      "show",
      "img1",
      "--json",
    ]);
    expect(show.doc.image).toEqual({
      reference: `oci:${layout.dir}:1`,
      digest: layout.digest,
      platform: `linux/${process.arch === "x64" ? "amd64" : process.arch}`,
    });
    const text = await home.sbx(["sandbox", "show", "img1"]);
    expect(text.stdout).toContain(`root\timage oci:${layout.dir}:1 ${layout.digest}`);
  });

  it("keeps writes to / in the sandbox's own copy: not in the image, not in another sandbox", async () => {
    const before = hashOfDir(layout.dir);
    const store = path.join(home.home, "daemon", "images", "blobs");
    const storeBefore = hashOfDir(store);
    expect((await home.sbx(["sandbox", "create", "img2", "--image", `oci:${layout.dir}:1`])).code).toBe(0);
    expect((await home.sbx(["sandbox", "create", "img3", "--image", `oci:${layout.dir}:1`])).code).toBe(0);
    const write = await home.sbx([
      "exec",
      "-s",
      "img2",
      "--",
      "sh",
      "-c",
      "echo installed > /srv/tool && mkdir -p /opt/pkg && echo changed > /etc/image-release",
    ]);
    expect(write.code, write.stderr).toBe(0);
    const again = await home.sbx(["exec", "-s", "img2", "--", "cat", "/srv/tool", "/etc/image-release"]);
    expect(again.stdout).toBe("installed\nchanged\n");
    const other = await home.sbx(["exec", "-s", "img3", "--", "cat", "/etc/image-release"]);
    expect(other.stdout).toBe("sbx-test-image\n");
    expect((await home.sbx(["exec", "-s", "img3", "--", "ls", "/srv"])).stdout).toBe("");
    expect(hashOfDir(layout.dir)).toBe(before);
    expect(hashOfDir(store)).toBe(storeBefore);
    // Stopped and started again, the sandbox keeps its root.
    expect((await home.sbx(["sandbox", "stop", "img2"])).code).toBe(0);
    expect((await home.sbx(["exec", "-s", "img2", "--", "cat", "/srv/tool"])).stdout).toBe("installed\n");
  });

  it("names the image digest on each execution's record, its receipt and the signed bundle", async () => {
    expect((await home.sbx(["sandbox", "create", "ev1", "--image", `oci:${layout.dir}:1`])).code).toBe(0);
    expect((await home.sbx(["sandbox", "create", "ev-host"])).code).toBe(0);
    const exec = await home.json<{ receipt_id: string; execution_id: string; image_digest: string | null }>([
      "exec",
      "-s",
      "ev1",
      "--json",
      "--",
      "true",
    ]);
    expect(exec.doc.image_digest).toBe(layout.digest);
    const record = (await getJson(
      home.backend.socketPath!,
      routePath("executions.get", { id: "ev1", eid: exec.doc.execution_id }),
    )) as { image_digest: string | null };
    expect(record.image_digest).toBe(layout.digest);
    const receipt = await home.json<{ image_digest: string; observations: { image_digest: string | null }[] }>([
      "receipts",
      "show",
      exec.doc.receipt_id,
      "--json",
    ]);
    expect(receipt.doc.image_digest).toBe(layout.digest);
    expect(receipt.doc.observations.some((o) => o.image_digest === layout.digest)).toBe(true);
    expect((await home.sbx(["receipts", "show", exec.doc.receipt_id])).stdout).toMatch(
      new RegExp(`Image\\s+${layout.digest}`),
    );
    // A host-root sandbox's execution names no image.
    const plain = await home.json<{ image_digest: string | null; execution_id: string }>([
      "exec",
      "-s",
      "ev-host",
      "--json",
      "--",
      "true",
    ]);
    expect(plain.doc.image_digest).toBeNull();
    const plainRecord = (await getJson(
      home.backend.socketPath!,
      routePath("executions.get", { id: "ev-host", eid: plain.doc.execution_id }),
    )) as { image_digest: string | null };
    expect(plainRecord.image_digest).toBeNull();
    // The bundle carries the observation rows as stored, and still verifies.
    const bundle = path.join(home.home, "evidence.sbx");
    expect((await home.sbx(["receipts", "export", "--bundle", bundle])).code).toBe(0);
    expect(fs.readFileSync(bundle, "utf8")).toContain(`"image_digest":"${layout.digest}"`);
    const verified = await home.sbx(["receipts", "verify", "--bundle", bundle]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect((await home.sbx(["receipts", "verify"])).code).toBe(0);
  });

  it("without --image, the root stays the host's, and show says so", async () => {
    expect((await home.sbx(["sandbox", "create", "plain"])).code).toBe(0);
    const show = await home.json<{ image: unknown }>(["sandbox", "show", "plain", "--json"]);
    expect(show.doc.image).toBeNull();
    expect((await home.sbx(["sandbox", "show", "plain"])).stdout).toContain(
      "root\tthe host's system directories, read-only",
    );
    expect((await home.sbx(["exec", "-s", "plain", "--", "test", "-x", "/usr/bin/python3"])).code).toBe(0);
  });

  it("refuses an image that cannot be pulled, creating nothing", async () => {
    const r = await home.sbx(["sandbox", "create", "bad", "--image", "oci:/nonexistent/layout:1"]);
    expect(r.code).toBe(125);
    expect(r.stderr).toContain("cannot read oci-layout");
    expect((await home.sbx(["sandbox", "show", "bad"])).code).not.toBe(0);
  });
});
