// Per-command usage as a user meets it (docs/operations.md, "Per-command usage"): two
// commands run side by side in one sandbox — a CPU spinner and a 200 MB allocation —
// and each receipt carries its own CPU time and memory peak, not its neighbour's; the
// receipt bundle carries them too, and the chain still verifies. A command killed at
// its sandbox's memory limit says which limit on its receipt. Wide bounds, nothing timed.

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { type LocalHome, localHome } from "../support/in-process.js";
import { describeNeeding } from "../support/requirements.js";

const MB = 1000 * 1000;
const MiB = 1024 * 1024;

interface Usage {
  cpu_user_us: number | null;
  cpu_system_us: number | null;
  memory_peak_bytes: number | null;
  oom_kills: number | null;
  limits_hit: string[];
  unavailable: Record<string, string>;
}

describeNeeding(["bwrap", "cgroupMemory", "cgroupPids", "cgroupCpuTime"], "usage on receipts", () => {
  let local: LocalHome;
  beforeAll(async () => {
    local = await localHome("sbx-usage-");
    expect((await local.sbx(["sandbox", "create", "pair"])).code).toBe(0);
    expect((await local.sbx(["sandbox", "create", "small", "--memory", "64MiB"])).code).toBe(0);
  });
  afterAll(async () => {
    await local.close();
  });

  it("a spinner's receipt and a 200 MB allocation's, side by side: each its own CPU time and peak", async () => {
    const [spin, alloc] = await Promise.all([
      local.sbx([
        "exec",
        "-s",
        "pair",
        "--json",
        "--shell",
        "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; echo spun",
      ]),
      local.sbx([
        "exec",
        "-s",
        "pair",
        "--json",
        "--",
        "python3",
        "-c",
        'import time; b = b"x" * (200 * 1000 * 1000); time.sleep(0.5); print(len(b))',
      ]),
    ]);
    expect(spin.code, spin.stderr).toBe(0);
    expect(alloc.code, alloc.stderr).toBe(0);
    const s = (JSON.parse(spin.stdout) as ReceiptDocument).usage as unknown as Usage;
    const a = (JSON.parse(alloc.stdout) as ReceiptDocument).usage as unknown as Usage;
    expect(s.cpu_user_us! + s.cpu_system_us!).toBeGreaterThan(100_000);
    expect(s.memory_peak_bytes!, JSON.stringify({ s, a })).toBeLessThan(50 * MiB);
    expect(a.memory_peak_bytes!, JSON.stringify({ s, a })).toBeGreaterThan(190 * MB);
    expect(s.unavailable, JSON.stringify({ s, a })).toEqual({});
    // receipts show says it in words; the stored receipt is the one exec printed.
    const receiptId = (JSON.parse(alloc.stdout) as ReceiptDocument).receipt_id;
    const shown = await local.json<ReceiptDocument>(["receipts", "show", receiptId, "--json"]);
    expect(shown.doc.usage).toEqual(a);
    const words = await local.sbx(["receipts", "show", receiptId]);
    expect(words.stdout).toMatch(
      /Used\s+cpu [0-9.]+ (s|µs) user, [0-9.]+ (s|µs) system; memory peak [0-9.]+ MiB; no limit hit/,
    );
    // The signed bundle holds each observation's usage as stored, and verifies.
    const file = path.join(local.home, "usage.sbx");
    const made = await local.sbx(["receipts", "export", "--bundle", file]);
    expect(made.code, made.stderr).toBe(0);
    const lines = fs
      .readFileSync(file, "utf8")
      .split("\n")
      .slice(1)
      .filter((l) => l.includes('"type":"receipt"'))
      .map((l) => JSON.parse(l) as { receipt: { receipt_id: string }; observations: Array<{ usage: string | null }> });
    const bundled = lines.find((l) => l.receipt.receipt_id === receiptId)!;
    const withUsage = bundled.observations.filter((o) => o.usage !== null);
    expect(withUsage.length).toBeGreaterThan(0);
    expect(JSON.parse(withUsage[withUsage.length - 1]!.usage!)).toEqual(a);
    const verified = await local.sbx(["receipts", "verify"]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it("an OOM-killed command's receipt says the limit it hit: memory", async () => {
    const res = await local.sbx([
      "exec",
      "-s",
      "small",
      "--json",
      "--",
      "python3",
      "-c",
      'b = b"x" * (300 * 1024 * 1024)',
    ]);
    expect(res.code).toBe(137);
    const doc = JSON.parse(res.stdout) as ReceiptDocument;
    expect(doc.end_reason).toBe("out_of_memory");
    const usage = doc.usage as unknown as Usage;
    expect(usage.limits_hit, JSON.stringify(usage)).toEqual(["memory"]);
    expect(usage.oom_kills).toBeGreaterThanOrEqual(1);
  });
});
