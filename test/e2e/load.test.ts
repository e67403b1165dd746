// 64 sbx exec processes at once against one local daemon, on Node and on the release
// binary, while a second process holds the receipt store for a while: every one waits
// its turn, sends its request on a connection of its own (never one the daemon closed
// while it waited), and exits 0 with a correct receipt.

import path from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { socketClient } from "../backend/support.js";
import { BUILD_HOOK_TIMEOUT_MS, buildReleaseBinary } from "../support/binary.js";
import { collect, makeHome, receiptsDbOf, removeHome, runSbx, spawnSbx } from "../support/cli.js";
import { stopDaemon } from "../support/daemon.js";
import { runMainJson } from "../support/in-process.js";
import { connectionsTo } from "../support/sockets.js";
import { itNeeding, meets, type Need } from "../support/requirements.js";
import { holdStoreLock } from "../support/store-holder.js";
import { until } from "../support/wait.js";

const N = 64;

const runtimes: Array<[string, Need[]]> = [
  ["node bin/sbx", []],
  ["the release binary", ["binary"]],
];

describe.each(runtimes)(`${N} concurrent sbx exec against one daemon: %s`, (name, needs) => {
  const available = meets(...needs);
  let home: string;
  let bin: string | undefined;
  beforeAll(async () => {
    home = makeHome("sbx-e2e-load-");
    if (name === "the release binary" && available) {
      bin = path.join(home, "sbx-release");
      buildReleaseBinary(bin);
    }
    const warm = await runSbx(["exec", "--", "true"], { home, ...(bin ? { bin } : {}) });
    expect(warm.code, warm.stderr).toBe(0);
  }, BUILD_HOOK_TIMEOUT_MS + 120_000);
  afterAll(async () => {
    await stopDaemon(home);
    removeHome(home);
  });

  itNeeding(
    needs,
    `${N} at once, the store held meanwhile: ${N}/${N} exit 0 with correct receipts`,
    async () => {
      const holder = await holdStoreLock(receiptsDbOf(home));
      const stderrs: string[] = Array.from({ length: N }, () => "");
      const exited: boolean[] = [];
      let results: Awaited<ReturnType<typeof collect>>[];
      try {
        // How long 64 processes take to start and reach the store is the machine's load:
        // the waits below are the test's own time, not a guess of how fast that is.
        const children = Array.from({ length: N }, (_, i) => {
          const child = spawnSbx(["exec", "--", "echo", `n${i}`], { home, ...(bin ? { bin } : {}) });
          child.stderr?.on("data", (c: Buffer) => {
            stderrs[i] += c.toString();
          });
          child.once("exit", () => {
            exited[i] = true;
          });
          return collect(child, 230_000, `sbx exec #${i}`);
        });
        // Every one of them is waiting for the store (each says so once); one that ended
        // instead is reported with its output below.
        await until(
          () => stderrs.every((s) => s.includes("is busy (another process holds it)")) || exited.some(Boolean),
          200_000,
          `all ${N} to reach the store`,
        ).catch((err: Error) => {
          throw new Error(`${err.message}:\n${stderrs.join("\n")}`);
        });
        // Connections pooled before the wait (health checks) are closed meanwhile: each
        // request must go on a connection of its own.
        const socket = path.join(home, "daemon", "daemon.sock");
        await until(() => connectionsTo(socket) === 0, 60_000, "the daemon's idle connections to be closed");
        await holder.release();
        results = await Promise.all(children);
      } finally {
        await holder.release();
      }
      results.forEach((r, i) => {
        expect({ i, code: r.code, stdout: r.stdout, stderr: stderrs[i] }).toMatchObject({
          i,
          code: 0,
          stdout: `n${i}\n`,
        });
        expect(stderrs[i]).not.toMatch(/EPIPE|database is locked|may have run|internal error/);
      });

      const list = await runMainJson<ReceiptDocument[]>(["receipts", "list", "--json", "--limit", "1000"], { home });
      const mine = list.doc.filter((d) => /^n\d+$/.test(String((d.request.body as { command: string[] }).command[1])));
      expect(mine).toHaveLength(N);
      expect(new Set(mine.map((d) => d.idempotency_key)).size).toBe(N);
      for (const d of mine) {
        const word = (d.request.body as { command: string[] }).command[1];
        expect(d).toMatchObject({ classification: "succeeded", exit: 0, stdout: `${word}\n`, profile: "local" });
      }
      // The store-wide chain held under that contention: intact when verified by the
      // runtime that wrote it, and by the other one (better-sqlite3 / bun:sqlite).
      const verified = await runSbx(["receipts", "verify", "--json"], { home, ...(bin ? { bin } : {}) });
      expect(verified.code, verified.stdout).toBe(0);
      const again = await runMainJson<{ intact: boolean; receipts: number }>(["receipts", "verify", "--json"], {
        home,
      });
      expect(again.doc).toMatchObject({ intact: true, receipts: list.doc.length });
      // The daemon ran each exactly once.
      const backend = socketClient(path.join(home, "daemon", "daemon.sock"));
      try {
        const listed = await backend.api("GET", "/api/v1/sandbox/default/executions?limit=200");
        const keys = (listed.json.executions as Array<{ idempotency_key: string }>).map((e) => e.idempotency_key);
        for (const d of mine) expect(keys.filter((k) => k === d.idempotency_key)).toHaveLength(1);
      } finally {
        await backend.close();
      }
    },
    240_000,
  );
});
