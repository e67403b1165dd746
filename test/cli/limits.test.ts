// Limits as a user meets them (docs/drivers.md, "Limits"): flags on sandbox create and
// update, sandbox show and daemon status saying how each is enforced, and a command
// killed at its memory limit said as such — on stderr, in the receipt, and in a chain
// that still verifies.

import { afterAll, beforeAll, expect, it } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { type LocalHome, localHome } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";

describeNeeding(["bwrap", "cgroupMemory", "cgroupPids"], "sbx with limits", () => {
  let local: LocalHome;
  beforeAll(async () => {
    local = await localHome("sbx-limits-");
  });
  afterAll(async () => {
    await local.close();
  });

  it("sandbox create --memory --pids --tmp-size, show says each and how; update changes it", async () => {
    const made = await local.sbx([
      "sandbox",
      "create",
      "small",
      "--memory",
      "64m",
      "--pids",
      "100",
      "--tmp-size",
      "8m",
    ]);
    expect(made.code, made.stderr).toBe(0);
    const shown = await local.sbx(["sandbox", "show", "small"]);
    expect(shown.stdout).toMatch(/^limit_memory\t64 MiB, enforced: cgroup v[12] memory controller/m);
    expect(shown.stdout).toMatch(/^limit_pids\t100 processes, enforced: cgroup v[12] pids controller/m);
    expect(shown.stdout).toMatch(/^limit_tmp\t8 MiB, enforced: tmpfs size \(bwrap --size\)/m);
    expect(shown.stdout).toMatch(/^limit_workspace\tno limit \(when set: a file system of its own/m);
    const updated = await local.sbx(["sandbox", "update", "small", "--cpus", "0.5", "--pids", "none"]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toMatch(/^limit_cpu\t0.5 CPUs, enforced: cgroup v[12] cpu controller/m);
    expect(updated.stdout).toMatch(/^limit_pids\tno limit/m);
    const status = await local.sbx(["daemon", "status"]);
    expect(status.stdout).toMatch(/^limit_memory\t2 GiB by default, enforced: cgroup/m);
  });

  it("refuses what it cannot enforce or read, saying why: 125, nothing created", async () => {
    const disk = await local.sbx(["sandbox", "create", "big", "--isolation", "none", "--disk", "1g"]);
    expect(disk.code).toBe(125);
    expect(disk.stderr).toMatch(
      /the workspace limit cannot be enforced here: isolation none .*; no sandbox was created/,
    );
    const bad = await local.sbx(["sandbox", "create", "bad", "--memory", "lots"]);
    expect(bad.code).toBe(125);
    expect(bad.stderr).toContain('--memory "lots" is not a size (e.g. 512m, 2GiB, or none)');
    const tiny = await local.sbx(["sandbox", "create", "tiny", "--pids", "2"]);
    expect(tiny.code).toBe(125);
    expect(tiny.stderr).toContain("--pids 2 is below the smallest that runs a sandbox (8 processes)");
    const nothing = await local.sbx(["sandbox", "update", "small"]);
    expect(nothing.code).toBe(125);
    expect((await local.sbx(["sandbox", "show", "big"])).code).toBe(125);
  });

  it("exec past the memory limit: killed, said out of memory, 137; the receipt keeps it and verifies", async () => {
    const res = await local.sbx(["exec", "-s", "small", "--", "python3", "-c", 'b = b"x" * (300 * 1024 * 1024)']);
    expect(res.code).toBe(137);
    expect(res.stderr).toMatch(
      /sbx: exe_[0-9a-z]+ was killed: out of memory \(the memory limit of sandbox small: sbx sandbox show small; raise it with sbx sandbox update small --memory SIZE\)/,
    );
    const list = await local.json<ReceiptDocument[]>(["receipts", "list", "--json", "--limit", "1"]);
    const receipt = list.doc[0]!;
    expect(receipt).toMatchObject({
      classification: "failed",
      signal: "SIGKILL",
      end_reason: "out_of_memory",
      exit: 137,
    });
    const shown = await local.sbx(["receipts", "show", receipt.receipt_id]);
    expect(shown.stdout).toContain("end_reason out_of_memory");
    const verified = await local.sbx(["receipts", "verify"]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });
});
