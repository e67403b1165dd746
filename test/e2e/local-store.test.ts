// The receipt store when another process holds it, or when the disk is full, with
// real processes: a `sqlite3` session holding the write lock, a small tmpfs as
// SBX_HOME. Exit codes never lie: 75 "nothing was sent" for a store that stays busy,
// 74 for one that is unusable, and after sending 255 with nothing received lost.

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { collect, makeHome, receiptsDbOf, removeHome, runSbx, runSbxJson, spawnSbx } from "../support/cli.js";
import { stopDaemon } from "../support/daemon.js";
import { behaviours, startMisbehavingServer } from "../support/misbehaving-server.js";
import { holdStoreLock } from "../support/store-holder.js";
import { canMountTmpfs, fillUntilFree, smallTmpfs } from "../support/tmpfs.js";

const STACK = /^\s+at /m;
/** Past Node's keep-alive timeout (5 s): a pooled connection from before the wait is closed by then. */
const KEEP_ALIVE_GONE_MS = 7000;

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a receipt store another process holds", () => {
  let home: string;
  beforeAll(async () => {
    home = makeHome("sbx-e2e-busy-");
    expect((await runSbx(["exec", "--", "true"], { home })).code).toBe(0);
  });
  afterAll(async () => {
    await stopDaemon(home);
    removeHome(home);
  });

  it("sbx waits (and says so), then sends once it is free, on a connection of its own", async () => {
    const holder = await holdStoreLock(receiptsDbOf(home));
    const child = spawnSbx(["exec", "--", "echo", "after the wait"], { home });
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const done = collect(child, 60_000);
    try {
      await until(() => stderr.includes("is busy (another process holds it); waiting up to 2m"), "sbx to say it waits");
      // Long enough for the daemon to close the connection sbx's health check left in its pool.
      await new Promise((r) => setTimeout(r, KEEP_ALIVE_GONE_MS));
    } finally {
      await holder.release();
    }
    const r = await done;
    expect(r.code, stderr).toBe(0);
    expect(r.stdout).toBe("after the wait\n");
    expect(stderr).not.toMatch(/EPIPE|may have run|database is locked/);
    const list = await runSbxJson<ReceiptDocument[]>(["receipts", "list", "--json"], { home });
    expect(list.doc[0]).toMatchObject({ classification: "succeeded", stdout: "after the wait\n" });
  });

  it("gives up after SBX_STORE_WAIT: exit 75, nothing was sent, no receipt, no stack trace", async (t) => {
    const server = await startMisbehavingServer(behaviours.succeeded());
    t.onTestFinished(() => server.close());
    const holder = await holdStoreLock(receiptsDbOf(home));
    let r: Awaited<ReturnType<typeof runSbx>>;
    try {
      r = await runSbx(["exec", "--api-url", server.url, "--", "echo", "never"], {
        home,
        env: { SBX_STORE_WAIT: "2s" },
      });
    } finally {
      await holder.release();
    }
    expect(r.code).toBe(75);
    expect(r.stderr).toContain(`the receipt store ${receiptsDbOf(home)} stayed busy for 2s`);
    expect(r.stderr).toContain("nothing was sent");
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stdout).toBe("");
    expect(server.requests).toHaveLength(0);
    const list = await runSbxJson<ReceiptDocument[]>(["receipts", "list", "--json"], { home });
    expect(list.doc.map((d) => d.api_url)).not.toContain(server.url);
  });
});

describe.skipIf(!canMountTmpfs)("a full disk under SBX_HOME (a small tmpfs, as root)", () => {
  // The backend lives elsewhere: only the receipt store is short of space.
  let daemonHome: string;
  let apiUrl: string;
  beforeAll(async () => {
    daemonHome = makeHome("sbx-e2e-full-daemon-");
    expect((await runSbx(["daemon", "start"], { home: daemonHome })).code).toBe(0);
    apiUrl = `unix:${path.join(daemonHome, "daemon", "daemon.sock")}`;
  });
  afterAll(async () => {
    await stopDaemon(daemonHome);
    removeHome(daemonHome);
  });

  it("before sending: exit 74 naming the file and the cause; nothing was sent", async (t) => {
    const fsys = smallTmpfs("1m");
    t.onTestFinished(() => fsys.cleanup());
    const home = fsys.dir;
    expect((await runSbx(["receipts", "list"], { home })).code).toBe(0);
    fillUntilFree(home, 0);
    const marker = `never-${Date.now()}`;
    const r = await runSbx(["exec", "--", "echo", marker], { home, env: { SBX_API_URL: apiUrl } });
    expect(r.code, r.stderr).toBe(74);
    expect(r.stderr).toContain(`the receipt store ${receiptsDbOf(home)} is unusable`);
    expect(r.stderr).toMatch(/disk is full|I\/O error|cannot be opened/);
    expect(r.stderr).toContain("nothing was sent");
    expect(r.stderr).not.toMatch(STACK);
    const sent = await runSbxJson<ReceiptDocument[]>(["receipts", "list", "--json", "--limit", "100"], {
      home: daemonHome,
    });
    expect(JSON.stringify(sent.doc)).not.toContain(marker);
  });

  it("after sending: the output is printed byte for byte, the answer goes to stderr as JSON, exit 255", async (t) => {
    const fsys = smallTmpfs("2m");
    t.onTestFinished(() => fsys.cleanup());
    const home = fsys.dir;
    expect((await runSbx(["receipts", "list"], { home })).code).toBe(0);
    // Room for the receipt written before sending, not for an answer carrying a 1 MiB tail.
    fillUntilFree(home, 256 * 1024);
    const size = 3_000_000;
    const r = await runSbx(["exec", "--shell", `head -c ${size} /dev/zero | tr '\\0' x; echo done >&2`], {
      home,
      env: { SBX_API_URL: apiUrl },
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr.slice(-2000)).toBe(255);
    expect(createHash("sha256").update(r.stdout).digest("hex")).toBe(
      createHash("sha256").update("x".repeat(size)).digest("hex"),
    );
    expect(r.stderr).toContain("could not be recorded");
    expect(r.stderr).toContain("disk is full");
    const json = r.stderr.split("\n").find((l) => l.startsWith("{"));
    expect(json, r.stderr.slice(-2000)).toBeDefined();
    const answer = JSON.parse(json!) as ReceiptDocument;
    expect(answer).toMatchObject({ classification: "succeeded", exit: 0, stdout_truncated: true });
    expect(answer.execution_id).toMatch(/^exe_/);
    // The receipt written before sending is still there, saying it may have run.
    fs.rmSync(path.join(home, "filler"));
    const shown = await runSbxJson<ReceiptDocument>(["receipts", "show", answer.receipt_id, "--json"], { home });
    expect(shown.doc).toMatchObject({ classification: "dispatched", may_have_run: true });
    const waited = await runSbx(["receipts", "wait", answer.receipt_id], { home, env: { SBX_API_URL: apiUrl } });
    expect(waited.code).toBe(0);
  });
});
