// `COLUMNS=80 sbx receipts list` on a wider terminal fits 80 columns: COLUMNS is
// honoured as most CLIs honour it, and the table gives way by showing ids in their
// short form before it cuts the command. In-process against the embedded backend.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shortId } from "../../src/common/ids.js";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { type LocalHome, localHome } from "../support/in-process.js";

let local: LocalHome;
let receiptId: string;

beforeAll(async () => {
  local = await localHome("sbx-width-");
  const { result, doc } = await local.json<ReceiptDocument>([
    "exec",
    "--json",
    "--",
    "echo",
    "a",
    "command",
    "that",
    "needs",
    "cutting",
  ]);
  expect(result.code, result.stderr).toBe(0);
  receiptId = doc.receipt_id;
});
afterAll(() => local.close());

const list = (env: Record<string, string>, columns: number) =>
  local.sbx(["receipts", "list"], { tty: true, columns, env });

describe("receipts list on a terminal", () => {
  it("is as wide as it needs on a wide terminal: ids whole", async () => {
    const r = await list({}, 200);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(receiptId);
    expect(r.stdout).toContain("echo a command that needs cutting");
    expect(Math.max(...r.stdout.split("\n").map((l) => l.length))).toBeGreaterThan(80);
  });

  it("fits COLUMNS=80: the id in its short form, then the command cut", async () => {
    const r = await list({ COLUMNS: "80" }, 200);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(r.stdout).toContain(`${shortId(receiptId)} `);
    expect(r.stdout).not.toContain(receiptId);
    expect(r.stdout).toContain("…");
  });

  it("the short form it shows works as the id", async () => {
    const shown = await local.sbx(["receipts", "show", shortId(receiptId), "--json"]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).receipt_id).toBe(receiptId);
  });
});
