// A receipt store on a real temp SQLite file, with receipts written the way sbx writes
// them, and a second connection that edits the file behind the store's back (SQLite
// directly, as someone with access to the file would).

import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { openDatabase } from "../../src/platform/sqlite.js";
import { type Classified, classifyObservation } from "../../src/receipts/classify.js";
import { verifyFast } from "../../src/receipts/verify-fast.js";
import { verifyEntries } from "../../src/receipts/verify-store.js";
import type { VerifyReport } from "../../src/receipts/verify.js";
import { type NewReceipt, ReceiptStore } from "../../src/receipts/store.js";
import { executionRecord } from "./misbehaving-server.js";
import { tempDir } from "./temp.js";

let keyCounter = 0;

export function newReceipt(over: Partial<NewReceipt> = {}): NewReceipt {
  return {
    kind: "execute",
    profile: "remote",
    apiUrl: "http://127.0.0.1:9",
    sandbox: "default",
    idempotencyKey: `key-${++keyCounter}-${Math.random().toString(36).slice(2)}`,
    method: "POST",
    path: "/api/v1/sandbox/default/execute",
    body: Buffer.from('{"command":["echo","hi"],"stream":false,"timeout":120000}'),
    ...over,
  };
}

export const answerOf = (over: Record<string, unknown>, executionId = "exe_1"): Classified =>
  classifyObservation(
    {
      kind: "answer",
      status: 200,
      headers: {},
      body: JSON.stringify(executionRecord(null, { execution_id: executionId, ...over })),
    },
    "dispatch",
  );

export const succeededAnswer = (executionId = "exe_1", stdout = "hi\n") =>
  answerOf({ outcome: "succeeded", exit_code: 0, stdout }, executionId);

export const failedAnswer = (executionId = "exe_1", code = 3) =>
  answerOf({ outcome: "failed", exit_code: code, stdout: "", stderr: "no\n" }, executionId);

export const deadlineAnswer = (): Classified => classifyObservation({ kind: "deadline", sent: true }, "dispatch");

export interface TempStore {
  dir: string;
  file: string;
  open(): ReceiptStore;
  /** Runs SQL on the file through a connection of its own (not the store's). */
  sql(sql: string, ...params: unknown[]): void;
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[];
  remove(): void;
}

export function tempStore(prefix = "sbx-chain-"): TempStore {
  const dir = tempDir(prefix);
  const file = path.join(dir, "receipts.db");
  const opened: ReceiptStore[] = [];
  const direct = <T>(fn: (db: Database.Database) => T): T => {
    const db = new Database(file);
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  return {
    dir,
    file,
    open() {
      const s = ReceiptStore.open(file);
      opened.push(s);
      return s;
    },
    sql(sql, ...params) {
      direct((db) => (params.length ? db.prepare(sql).run(...params) : db.exec(sql)));
    },
    all<T>(sql: string, ...params: unknown[]) {
      return direct((db) => db.prepare(sql).all(...params) as T[]);
    },
    remove() {
      for (const s of opened.splice(0)) {
        try {
          s.close();
        } catch {
          // already closed
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Three receipts: a success, a failure read back twice, one left in doubt; plus a resubmitted one. */
export function populate(store: ReceiptStore, at = new Date("2026-03-01T10:00:00.000Z")): string[] {
  const later = (ms: number) => new Date(at.getTime() + ms);
  const a = store.createForDispatch(newReceipt(), later(0)).receipt_id;
  store.recordObservation(a, "answer", succeededAnswer("exe_a"), { attempt: 1, now: later(100) });
  const b = store.createForDispatch(newReceipt(), later(1000)).receipt_id;
  store.recordObservation(b, "answer", failedAnswer("exe_b"), { attempt: 1, now: later(1200) });
  store.recordObservation(b, "refresh", failedAnswer("exe_b"), { now: later(1300) });
  const c = store.createForDispatch(newReceipt(), later(2000)).receipt_id;
  store.recordObservation(c, "answer", deadlineAnswer(), { attempt: 1, now: later(2500) });
  const d = store.createForDispatch(newReceipt(), later(3000)).receipt_id;
  store.recordObservation(d, "answer", deadlineAnswer(), { attempt: 1, now: later(3100) });
  store.beginAttempt(d, later(3200));
  store.noteExecutionId(d, "exe_d");
  store.recordObservation(d, "answer", succeededAnswer("exe_d"), { attempt: 2, now: later(3300) });
  return [a, b, c, d];
}

/** Both verifiers of a store file, the fast path and entry by entry, in one read snapshot. */
export function bothWays(file: string): { fast: VerifyReport | null; entries: VerifyReport } {
  const db = openDatabase(file, { readOnly: true });
  try {
    db.exec("BEGIN");
    try {
      return { fast: verifyFast(db), entries: verifyEntries(db) };
    } finally {
      db.exec("COMMIT");
    }
  } finally {
    db.close();
  }
}
