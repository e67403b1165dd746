// sbx run in-process against the embedded backend (docs/images.md, "sbx run"): a
// sandbox made for one command, the command run as exec runs it (receipt, exit code,
// classification), the sandbox removed afterwards unless --keep, said; a create that
// is refused leaves nothing and exits as create's refusal.

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildLayout, busyboxEntries, type LayoutImage } from "../support/images.js";
import { type LocalHome, localHome } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";

interface Listed {
  sandboxes: Array<{ name: string }>;
}

describeNeeding(["bwrap", "busyboxStatic"], "sbx run", () => {
  let home: LocalHome;
  let layout: LayoutImage;
  beforeAll(async () => {
    home = await localHome("sbx-run-");
    layout = await buildLayout([busyboxEntries()], { tag: "1" });
  });
  afterAll(async () => {
    await home?.close();
  });

  const names = async () =>
    (await home.json<Listed>(["sandbox", "list", "--json"])).doc.sandboxes.map((s) => s.name).sort();
  const sandboxDirs = () => {
    const dir = path.join(home.home, "daemon", "sandboxes");
    return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
  };
  const receiptCount = async () => (await home.json<unknown[]>(["receipts", "list", "--json"])).doc.length;

  it("runs the command in a sandbox from the image, keeps its receipt and removes the sandbox, saying so", async () => {
    const before = await names();
    const dirsBefore = sandboxDirs();
    const r = await home.sbx(["run", "--image", `oci:${layout.dir}:1`, "--", "cat", "/etc/image-release"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("sbx-test-image\n");
    const said =
      /sbx: removed sandbox (run-[a-z0-9]{8}) \((sbx_[^)]+)\), its workspace and its root \(a writable copy of oci:/.exec(
        r.stderr,
      );
    expect(said, r.stderr).not.toBeNull();
    expect(await names()).toEqual(before);
    expect(sandboxDirs()).toEqual(dirsBefore);
    // The receipt stays, naming the sandbox it ran in and the image digest.
    const receipts = await home.json<Array<{ receipt_id: string; sandbox_id: string }>>(["receipts", "list", "--json"]);
    const mine = receipts.doc.find((x) => x.sandbox_id === said![1]);
    expect(mine).toBeDefined();
    const shown = await home.json<{ image_digest: string; classification: string; exit: number }>([
      "receipts",
      "show",
      mine!.receipt_id,
      "--json",
    ]);
    expect(shown.doc.image_digest).toBe(layout.digest);
    expect(shown.doc.classification).toBe("succeeded");
  });

  it("exits with the command's exit code, --json gives exec's receipt, and the sandbox still goes", async () => {
    const before = await names();
    const r = await home.json<{ exit: number; classification: string; image_digest: string }>([
      "run",
      "--image",
      `oci:${layout.dir}:1`,
      "--json",
      "--shell",
      "echo out; exit 3",
    ]);
    expect(r.result.code).toBe(3);
    expect(r.doc.exit).toBe(3);
    expect(r.doc.classification).toBe("failed");
    expect(r.doc.image_digest).toBe(layout.digest);
    expect(r.result.stderr).toMatch(/removed sandbox run-/);
    expect(await names()).toEqual(before);
    // A command the image does not have: 127, as exec says it.
    const missing = await home.sbx(["run", "--image", `oci:${layout.dir}:1`, "--", "python3", "--version"]);
    expect(missing.code).toBe(127);
    expect(await names()).toEqual(before);
  });

  it("with --keep, keeps the sandbox under the name given and says how to remove it", async () => {
    const r = await home.sbx([
      "run",
      "--keep",
      "--name",
      "kept1",
      "--image",
      `oci:${layout.dir}:1`,
      "--",
      "touch",
      "/srv/mark",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("sbx: kept sandbox kept1 from image oci:");
    expect(r.stderr).toContain("sbx sandbox rm kept1 --force");
    expect(await names()).toContain("kept1");
    // Its root kept the write.
    expect((await home.sbx(["exec", "-s", "kept1", "--", "ls", "/srv"])).stdout).toBe("mark\n");
  });

  it("without --image, runs on the host's root and removes the sandbox", async () => {
    const before = await names();
    const r = await home.sbx(["run", "--", "test", "-x", "/usr/bin/python3"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/removed sandbox run-[a-z0-9]{8} \(sbx_[^)]+\), its workspace\n/);
    expect(await names()).toEqual(before);
  });

  it("a refused create exits as create's refusal and leaves no sandbox, no receipt", async () => {
    const before = await names();
    const dirsBefore = sandboxDirs();
    const receiptsBefore = await receiptCount();
    const r = await home.sbx(["run", "--name", "bad1", "--image", "oci:/nonexistent/layout:1", "--", "true"]);
    expect(r.code).toBe(125);
    expect(r.stderr).toContain("cannot read oci-layout");
    expect(r.stderr).toContain("no sandbox was created");
    expect(r.stderr).not.toContain("removed sandbox");
    expect(await names()).toEqual(before);
    expect(sandboxDirs()).toEqual(dirsBefore);
    expect(await receiptCount()).toBe(receiptsBefore);
    // A name already taken: refused by create, the other sandbox untouched.
    expect((await home.sbx(["sandbox", "create", "taken"])).code).toBe(0);
    const dup = await home.sbx(["run", "--name", "taken", "--", "true"]);
    expect(dup.code).toBe(125);
    expect(await names()).toContain("taken");
  });

  it("needs a command", async () => {
    const r = await home.sbx(["run", "--image", `oci:${layout.dir}:1`]);
    expect(r.code).toBe(125);
    expect(r.stderr).toContain("usage: sbx run [options] -- COMMAND");
  });
});
