// What sbx says when its backend's disk is full (the data directory on a small tmpfs,
// as root; the receipts stay in the home): exec, process start and jobs submit were
// not started — exit 75, "nothing ran", a receipt classified not_started that may be
// resubmitted — and a resubmit once there is room runs the command once.

import fs from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { type LocalHome, localHome } from "../support/in-process.js";
import { fillUntilFree, smallTmpfs } from "../support/tmpfs.js";
import { until } from "../support/wait.js";
import { describeNeeding } from "../support/requirements.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function homeOnFullDisk(): Promise<{ local: LocalHome; workspace: string; filler: string }> {
  const fsys = smallTmpfs("16m");
  cleanups.push(() => fsys.cleanup());
  const local = await localHome("sbx-full-", { dataDir: path.join(fsys.dir, "data") });
  cleanups.push(() => local.close());
  // The sandbox exists before the disk fills: only the admission is refused.
  const shown = await local.json<{ host_workspace: string }>(["sandbox", "show", "default", "--json"]);
  return { local, workspace: shown.doc.host_workspace, filler: fillUntilFree(fsys.dir) };
}

describeNeeding("tmpfs", "a backend whose disk is full (a small tmpfs, as root)", () => {
  it.for([
    { verb: "exec", args: (m: string) => ["exec", "--json", "--", "touch", m] },
    { verb: "process start", args: (m: string) => ["process", "start", "--json", "--", "touch", m] },
    { verb: "jobs submit", args: () => ["jobs", "submit", "-", "--json"], jobs: true },
  ])("sbx $verb: not started, exit 75, and a resubmit runs it once there is room", async ({ args, jobs }) => {
    const { local, workspace, filler } = await homeOnFullDisk();
    const input = jobs ? JSON.stringify({ jobs: [{ name: "touch", command: "touch ran" }] }) : undefined;
    const more = input === undefined ? {} : { input };

    const refused = await local.sbx(args("ran"), more);
    expect(refused.code, refused.stderr).toBe(75);
    expect(refused.stderr).toContain("nothing ran");
    expect(refused.stderr).not.toContain("may have run");
    const receiptId = /rcp_[a-z0-9]+/.exec(refused.stderr)?.[0] ?? JSON.parse(refused.stdout).receipt_id;
    const shown = await local.json<ReceiptDocument>(["receipts", "show", receiptId, "--json"]);
    expect(shown.doc).toMatchObject({ classification: "not_started", may_have_run: false, exit: 75 });
    expect(shown.doc.error?.code).toBe("not_started");
    expect(fs.existsSync(path.join(workspace, "ran"))).toBe(false);

    fs.rmSync(filler);
    const resent = await local.sbx(["receipts", "resubmit", receiptId, "--json"]);
    expect(resent.code, resent.stderr).toBe(0);
    await until(() => fs.existsSync(path.join(workspace, "ran")), 10_000, "the resubmitted command to run");
  });
});

describeNeeding("tmpfs", "sbx cp into a workspace whose disk is nearly full (a small tmpfs, as root)", () => {
  it("refuses before writing anything: 125, workspace_full, the room left said; a file that fits is copied", async () => {
    const fsys = smallTmpfs("16m");
    cleanups.push(() => fsys.cleanup());
    const local = await localHome("sbx-cpfull-", { dataDir: path.join(fsys.dir, "data") });
    cleanups.push(() => local.close());
    const shown = await local.json<{ host_workspace: string }>(["sandbox", "show", "default", "--json"]);
    fillUntilFree(fsys.dir, 2 * 1024 * 1024);
    const src = path.join(local.home, "big.bin");
    fs.writeFileSync(src, Buffer.alloc(4 * 1024 * 1024, 7));
    const tree = path.join(local.home, "tree");
    fs.mkdirSync(tree);
    fs.writeFileSync(path.join(tree, "a.bin"), Buffer.alloc(3 * 1024 * 1024, 1));

    for (const [from, name] of [
      [src, "big.bin"],
      [tree, "tree"],
    ] as const) {
      const refused = await local.sbx(["cp", from, `default:/workspace/${name}`]);
      expect(refused.code, refused.stderr).toBe(125);
      expect(refused.stderr).toMatch(
        /bytes do not fit in sandbox default's workspace: \d+ bytes left on its disk; nothing was written/,
      );
      expect(fs.existsSync(path.join(shown.doc.host_workspace, name))).toBe(false);
    }
    // Nothing was staged either.
    const incoming = path.join(path.dirname(shown.doc.host_workspace), "incoming");
    expect(fs.existsSync(incoming) ? fs.readdirSync(incoming) : []).toEqual([]);
    const small = path.join(local.home, "small.bin");
    fs.writeFileSync(small, "fits");
    const copied = await local.sbx(["cp", small, "default:/workspace/small.bin"]);
    expect(copied.code, copied.stderr).toBe(0);
    expect(fs.readFileSync(path.join(shown.doc.host_workspace, "small.bin"), "utf8")).toBe("fits");
  });
});
