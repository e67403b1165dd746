// A thread of `sbx receipts verify` (verify-threads.ts starts it through
// src/platform/threads.ts): its own read-only connection to the store, a read
// transaction begun when asked (while the main thread holds the write lock, so that
// every thread reads the same snapshot), then tasks of verify-fast.ts one at a time.
//
// Messages in: {type: "begin"}, {type: "task", id, task}, {type: "end"}.
// Messages out: {type: "open"}, {type: "ready", head}, {type: "result", id, result},
// {type: "failed", message} (the main thread then verifies on its own).

import { parentPort, workerData } from "node:worker_threads";
import { type Database, openDatabase, preloadSqliteDriver, preparingOnce } from "../platform/sqlite.js";
import type { ChainHead } from "./chain-log.js";
import { runTask, type Task } from "./verify-fast.js";

export interface VerifyWorkerData {
  file: string;
  busyTimeoutMs: number;
}

export type ToWorker = { type: "begin" } | { type: "task"; id: number; task: Task } | { type: "end" };

export type FromWorker =
  | { type: "open" }
  | { type: "ready"; head: ChainHead | null }
  | { type: "result"; id: number; result: ReturnType<typeof runTask> }
  | { type: "failed"; message: string };

async function serve(port: NonNullable<typeof parentPort>, data: VerifyWorkerData): Promise<void> {
  const post = (msg: FromWorker) => port.postMessage(msg);
  let db: Database;
  try {
    await preloadSqliteDriver();
    db = preparingOnce(openDatabase(data.file, { readOnly: true, busyTimeoutMs: data.busyTimeoutMs }));
  } catch (err) {
    post({ type: "failed", message: (err as Error).message });
    port.close();
    return;
  }
  let inTransaction = false;
  port.on("message", (msg: ToWorker) => {
    try {
      switch (msg.type) {
        case "begin": {
          db.exec("BEGIN");
          inTransaction = true;
          // The first read takes the snapshot.
          const head = db.prepare<ChainHead>("SELECT seq, link FROM chain_head WHERE one = 1").get() ?? null;
          post({ type: "ready", head: head && { seq: head.seq, link: head.link } });
          break;
        }
        case "task":
          post({ type: "result", id: msg.id, result: runTask(db, msg.task) });
          break;
        case "end":
          if (inTransaction) db.exec("COMMIT");
          db.close();
          port.close();
          break;
      }
    } catch (err) {
      post({ type: "failed", message: (err as Error).message });
    }
  });
  post({ type: "open" });
}

if (parentPort !== null) void serve(parentPort, workerData as VerifyWorkerData);
