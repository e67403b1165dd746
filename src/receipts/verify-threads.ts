// Proving a store intact on several threads (verify-fast.ts's tasks, shared out): each
// thread (verify-worker.ts) has a connection of its own, and all of them must read one
// snapshot. SQLite cannot hand a snapshot to another connection, so this connection
// takes the write lock (BEGIN IMMEDIATE) before it reads, the threads begin their read
// transactions while it is held (no writer can commit in between), and it is released
// as soon as they have: writers wait for the few milliseconds that takes, never for the
// verification itself. A store this process cannot write (no lock to take) is verified
// on one thread.

import type { Worker } from "node:worker_threads";
import type { Database } from "../platform/sqlite.js";
import { startThread } from "../platform/threads.js";
import type { ChainHead } from "./chain-log.js";
import { fastReport, planFast, type TaskResult } from "./verify-fast.js";
import type { FromWorker, ToWorker, VerifyWorkerData } from "./verify-worker.js";
import type { VerifyReport } from "./verify.js";

/** One thread's messages, awaited one at a time. */
class Thread {
  private readonly inbox: FromWorker[] = [];
  private waiting: ((msg: FromWorker) => void) | null = null;

  constructor(private readonly worker: Worker) {
    worker.on("message", (msg: FromWorker) => this.deliver(msg));
    worker.on("error", (err) => this.deliver({ type: "failed", message: err.message }));
    worker.on("exit", () => this.deliver({ type: "failed", message: "the thread ended" }));
  }

  private deliver(msg: FromWorker): void {
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting) waiting(msg);
    else this.inbox.push(msg);
  }

  next(): Promise<FromWorker> {
    const msg = this.inbox.shift();
    return msg ? Promise.resolve(msg) : new Promise((resolve) => (this.waiting = resolve));
  }

  post(msg: ToWorker): void {
    this.worker.postMessage(msg);
  }
}

const sameHead = (a: ChainHead | null, b: ChainHead | null) => a?.seq === b?.seq && a?.link === b?.link;

/**
 * The store proved intact on `threads` threads: its report; null when the tasks do not
 * prove it (verify entry by entry); "unavailable" when threads could not be used here
 * (no thread script in this layout, a store this process cannot lock, a thread that
 * failed): verify on this thread.
 */
export async function verifyOnThreads(
  db: Database,
  data: VerifyWorkerData,
  threads: number,
): Promise<VerifyReport | null | "unavailable"> {
  const pool: Thread[] = [];
  try {
    for (let i = 0; i < threads; i++) {
      const worker = startThread("verify-worker", data);
      if (worker === null) return "unavailable";
      pool.push(new Thread(worker));
    }
    for (const t of pool) if ((await t.next()).type !== "open") return "unavailable";
    try {
      db.exec("BEGIN IMMEDIATE");
    } catch {
      return "unavailable";
    }
    let plan: ReturnType<typeof planFast>;
    try {
      plan = planFast(db);
      if (plan === null) return null;
      for (const t of pool) t.post({ type: "begin" });
      for (const t of pool) {
        const msg = await t.next();
        if (msg.type !== "ready" || !sameHead(msg.head, plan.report.head)) return "unavailable";
      }
    } finally {
      db.exec("ROLLBACK");
    }
    const { tasks } = plan;
    const results: TaskResult[] = [];
    let next = 0;
    let proved = true;
    let failed = false;
    await Promise.all(
      pool.map(async (t) => {
        while (proved && !failed && next < tasks.length) {
          const id = next++;
          t.post({ type: "task", id, task: tasks[id]! });
          const msg = await t.next();
          if (msg.type !== "result") failed = true;
          else if (!msg.result.ok) proved = false;
          else results[id] = msg.result;
        }
      }),
    );
    if (failed) return "unavailable";
    return proved ? fastReport(plan, results) : null;
  } finally {
    for (const t of pool) t.post({ type: "end" });
  }
}
