// sbx receipts verify, in-process through main(): exit 0 and a summary when intact;
// exit 200 with one line per problem (receipt, kind, where) when not; a scope of ids.

import fs from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it, type TestContext } from "vitest";
import { resolvePaths } from "../../src/config/paths.js";
import { ExitCodes } from "../../src/common/exit-codes.js";
import { ReceiptStore } from "../../src/receipts/store.js";
import { makeHome, removeHome } from "../support/cli.js";
import { runMain, runMainJson } from "../support/in-process.js";
import { deadlineAnswer, newReceipt, succeededAnswer } from "../support/receipt-store.js";

function setup(t: TestContext) {
  const home = makeHome("sbx-verify-");
  t.onTestFinished(() => removeHome(home));
  const file = resolvePaths({ SBX_HOME: home }).receiptsDb;
  const store = ReceiptStore.open(file);
  const ids: string[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const at = new Date(Date.UTC(2026, 2, 1, 10, i));
      const id = store.createForDispatch(newReceipt(), at).receipt_id;
      store.recordObservation(id, "answer", i === 2 ? deadlineAnswer() : succeededAnswer(`exe_${i}`), {
        attempt: 1,
        now: new Date(at.getTime() + 500),
      });
      ids.push(id);
    }
  } finally {
    store.close();
  }
  const sql = (text: string, ...params: unknown[]) => {
    const db = new Database(file);
    try {
      db.prepare(text).run(...params);
    } finally {
      db.close();
    }
  };
  return { home, file, ids, sql };
}

describe.concurrent("sbx receipts verify", () => {
  it("a home without a store: 74, saying so, and no store made there", async (t) => {
    const home = makeHome("sbx-verify-none-");
    t.onTestFinished(() => removeHome(home));
    const r = await runMain(["receipts", "verify"], { home });
    expect(r.code).toBe(ExitCodes.storeUnusable);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`no receipt store at ${resolvePaths({ SBX_HOME: home }).receiptsDb}`);
    expect(r.stderr).toContain("SBX_HOME");
    expect(fs.existsSync(resolvePaths({ SBX_HOME: home }).receiptsDb)).toBe(false);
  });

  it("intact: exit 0, what was checked and where the chain ends", async (t) => {
    const { home, file } = setup(t);
    const r = await runMain(["receipts", "verify"], { home });
    expect(r.code).toBe(ExitCodes.ok);
    expect(r.stdout.replace(/[0-9a-f]{64}/, "LINK")).toBe(
      `${file}: intact\n  3 receipts, 13 chain entries; the chain ends at position 13, link:\n  LINK\n`,
    );
    expect(r.stderr).toBe("");
  });

  it("not intact: exit 200, each problem named by receipt, kind and position", async (t) => {
    const { home, file, ids, sql } = setup(t);
    sql("UPDATE observations SET stdout = 'all fine' WHERE receipt_id = ? AND source = 'answer'", ids[1]);
    sql("DELETE FROM receipts WHERE receipt_id = ?", ids[2]);
    const r = await runMain(["receipts", "verify"], { home });
    expect(r.code).toBe(ExitCodes.notIntact);
    expect(r.code).toBe(200);
    const out = r.stdout.replace(/[0-9a-f]{64}/, "LINK");
    expect(out).toBe(
      [
        `${file}: NOT INTACT, 2 problems`,
        "  3 receipts, 13 chain entries; the chain ends at position 13, link:",
        "  LINK",
        "",
        `${ids[1]}  changed    observation 2 (answer) (position 9) was changed: it no longer matches what was recorded`,
        `${ids[2]}  deleted    the receipt was deleted: its request (position 10) is gone`,
        "",
      ].join("\n"),
    );
  });

  it("with ids: only those receipts, by any reference (a deleted one by its id); the rest mentioned on stderr", async (t) => {
    const { home, ids, sql } = setup(t);
    sql("DELETE FROM receipts WHERE receipt_id = ?", ids[2]);
    const one = await runMain(["receipts", "verify", ids[0]!.slice(0, 20)], { home });
    expect(one.code).toBe(ExitCodes.ok);
    expect(one.stdout).toBe(`${ids[0]}: intact\n`);
    expect(one.stderr).toBe("sbx: the store has 1 other problem: sbx receipts verify lists them\n");
    const gone = await runMain(["receipts", "verify", ids[2]!], { home });
    expect(gone.code).toBe(ExitCodes.notIntact);
    expect(gone.stdout).toContain(`${ids[2]}  deleted    the receipt was deleted`);
  });

  it("--json: the report with every problem", async (t) => {
    const { home, file, ids, sql } = setup(t);
    sql("UPDATE receipts SET classification = 'succeeded' WHERE receipt_id = ?", ids[2]);
    const { result, doc } = await runMainJson<Record<string, unknown>>(["receipts", "verify", "--json"], { home });
    expect(result.code).toBe(ExitCodes.notIntact);
    expect(doc).toMatchObject({
      store: file,
      intact: false,
      receipts: 3,
      entries: 13,
      head: { position: 13 },
      pre_chain: { receipts: 0 },
      pruned: [],
      scope: null,
      problems: [
        {
          kind: "changed",
          receipt_id: ids[2],
          entry: "classification",
          position: null,
          detail: "the receipt says succeeded but its recorded observations say local_timeout",
        },
      ],
    });
  });

  it("after receipts prune: intact, and the prune is said", async (t) => {
    const { home } = setup(t);
    const pruned = await runMain(["receipts", "prune", "--before", "2026-03-01T10:01:30Z", "--include-in-doubt"], {
      home,
    });
    expect(pruned.code).toBe(ExitCodes.ok);
    const r = await runMain(["receipts", "verify"], { home });
    expect(r.code).toBe(ExitCodes.ok);
    expect(r.stdout).toMatch(
      /\n {2}pruned \S+: 2 receipts \(8 entries\) created before 2026-03-01T10:01:30.000Z, positions 2–9\n$/,
    );
  });

  it("help exit-codes names 200", async () => {
    const r = await runMain(["help", "exit-codes"], { home: "/nonexistent" });
    expect(r.stdout).toMatch(/receipts verify exits 0 when the receipt history is intact and 200/);
  });
});
