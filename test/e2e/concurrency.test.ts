// Many sbx processes at once (parallel CI jobs) on one fresh receipts.db: every
// receipt is kept, each with its own key, each matching exactly one POST.

import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { makeHome, removeHome, runSbx } from "../support/cli.js";
import { runMainJson } from "../support/in-process.js";
import { behaviours, startMisbehavingServer } from "../support/misbehaving-server.js";

const N = 16;

describe("16 concurrent sbx exec processes", () => {
  it("all succeed, none lost, distinct keys, one POST each, no lock errors", async (t) => {
    const home = makeHome("sbx-e2e-conc-");
    t.onTestFinished(() => removeHome(home));
    const server = await startMisbehavingServer(behaviours.succeeded());
    t.onTestFinished(() => server.close());

    // A fresh SBX_HOME: the processes also race to create and migrate receipts.db.
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => runSbx(["exec", "--api-url", server.url, "--", "echo", String(i)], { home })),
    );
    // The one thing a process may say: that it waits for the store, once its wait is long
    // enough to be worth saying (src/cli/store-access.ts; how long depends on the machine's load).
    const waitNotice = /^sbx: the receipt store \S+ is busy \(another process holds it\); waiting up to 2m…\n$/;
    results.forEach((r, i) => {
      expect(r.stderr).not.toMatch(/SQLITE_BUSY|database is locked/i);
      expect({ i, code: r.code, stdout: r.stdout }).toEqual({ i, code: 0, stdout: `${i}\n` });
      if (r.stderr !== "") expect(r.stderr).toMatch(waitNotice);
    });

    const posts = server.posts();
    expect(posts).toHaveLength(N);
    const postedKeys = posts.map((p) => p.headers["idempotency-key"] as string);
    expect(new Set(postedKeys).size).toBe(N);

    const { result, doc: receipts } = await runMainJson<ReceiptDocument[]>(
      ["receipts", "list", "--json", "--limit", "100"],
      { home },
    );
    expect(result.code).toBe(0);
    expect(receipts).toHaveLength(N);
    expect(new Set(receipts.map((r) => r.idempotency_key)).size).toBe(N);
    expect(new Set(receipts.map((r) => r.receipt_id)).size).toBe(N);
    for (const r of receipts) {
      const matching = posts.filter((p) => p.headers["idempotency-key"] === r.idempotency_key);
      expect(matching).toHaveLength(1);
      const post = matching[0]!;
      expect(createHash("sha256").update(post.body).digest("hex")).toBe(r.request.body_sha256);
      const n = (r.request.body as { command: string[] }).command[1];
      expect(r).toMatchObject({ classification: "succeeded", exit: 0, stdout: `${n}\n` });
    }
    expect(receipts.map((r) => (r.request.body as { command: string[] }).command[1]).sort()).toEqual(
      Array.from({ length: N }, (_, i) => String(i)).sort(),
    );
    // The processes raced to start the chain too: one genesis, every entry linked.
    const verified = await runSbx(["receipts", "verify", "--json"], { home });
    expect(verified.code, verified.stdout).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ intact: true, receipts: N, entries: 1 + 4 * N });
  });
});
