#!/usr/bin/env node
// What chaining costs an exec: the two writes an exec makes to the receipt store (the
// receipt before sending, the answer after), each a committed transaction on a real
// file, timed whole and for the part spent in the chain (hashing, the head, the chain
// rows; every ChainAppender method, outermost calls only). Runs under Node
// (better-sqlite3) or Bun (bun:sqlite): `node bench/chain-cost.mjs N` / `bun …`.
// Prints one JSON line: per exec, median and mean milliseconds.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { ReceiptStore } = await import(path.join(root, "dist", "receipts", "store.js"));
const { ChainAppender } = await import(path.join(root, "dist", "receipts", "chain-log.js"));
const { classifyObservation } = await import(path.join(root, "dist", "receipts", "classify.js"));

const n = Number(process.argv[2]) || 200;
const now = () => Number(process.hrtime.bigint()) / 1e6;

let depth = 0;
let inChain = 0;
for (const name of Object.getOwnPropertyNames(ChainAppender.prototype)) {
  const fn = ChainAppender.prototype[name];
  if (name === "constructor" || typeof fn !== "function") continue;
  ChainAppender.prototype[name] = function (...args) {
    if (depth++ > 0) {
      try {
        return fn.apply(this, args);
      } finally {
        depth--;
      }
    }
    const t0 = now();
    try {
      return fn.apply(this, args);
    } finally {
      inChain += now() - t0;
      depth--;
    }
  };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-bench-chain-"));
try {
  const store = ReceiptStore.open(path.join(dir, "receipts.db"));
  const answer = (i) =>
    classifyObservation(
      {
        kind: "answer",
        status: 200,
        headers: {},
        body: JSON.stringify({
          execution_id: `exe_${i}`,
          sandbox_id: "default",
          status: "succeeded",
          outcome: "succeeded",
          exit_code: 0,
          signal: null,
          system_error: null,
          record_pending: false,
          stdout: `n${i}\n`,
          stderr: "",
          stdout_truncated: false,
          stderr_truncated: false,
          created_at: new Date().toISOString(),
          started_at: new Date().toISOString(),
          finished_at: new Date().toISOString(),
          duration_ms: 1,
        }),
      },
      "dispatch",
    );
  const totals = [];
  const chains = [];
  for (let i = 0; i < n + 20; i++) {
    const body = Buffer.from(JSON.stringify({ command: ["echo", `n${i}`], stream: false, timeout: 120000 }));
    inChain = 0;
    const t0 = now();
    const row = store.createForDispatch({
      kind: "execute",
      profile: "local",
      apiUrl: "unix:/tmp/sbx.sock",
      sandbox: "default",
      idempotencyKey: `key-${i}-${Math.random()}`,
      method: "POST",
      path: "/api/v1/sandbox/default/execute",
      body,
    });
    store.recordObservation(row.receipt_id, "answer", answer(i), { attempt: 1 });
    // The first 20 warm the statements and the file.
    if (i >= 20) {
      totals.push(now() - t0);
      chains.push(inChain);
    }
  }
  const report = await store.verify();
  store.close();
  if (!report.intact) throw new Error("the store did not verify");
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
  };
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    JSON.stringify({
      execs: n,
      writes_median_ms: median(totals),
      chain_median_ms: median(chains),
      chain_mean_ms: mean(chains),
      chain_max_ms: Math.max(...chains),
    }),
  );
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
