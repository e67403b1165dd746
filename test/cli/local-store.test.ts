// The receipt store when another process holds it, or when the disk is full: a
// `sqlite3` session holding the write lock, a small tmpfs as SBX_HOME; sbx in-process
// through main() against the embedded backend. Exit codes never lie: 75 "nothing was
// sent" for a store that stays busy, 74 for one that is unusable, and after sending
// 255 with nothing received lost. (Many sbx processes waiting their turn: test/e2e/load.)

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { receiptsDbOf, type SbxResult } from "../support/cli.js";
import { type LocalHome, localHome, runMain, runMainJson, startMain } from "../support/in-process.js";
import { behaviours, startMisbehavingServer } from "../support/misbehaving-server.js";
import { connectionsTo } from "../support/sockets.js";
import { holdStoreLock } from "../support/store-holder.js";
import { fillUntilFree, smallTmpfs } from "../support/tmpfs.js";
import { until } from "../support/wait.js";
import { describeNeeding } from "../support/requirements.js";

const STACK = /^\s+at /m;

describe("a receipt store another process holds", () => {
  let local: LocalHome;
  let home: string;
  beforeAll(async () => {
    local = await localHome("sbx-busy-");
    home = local.home;
    expect((await local.sbx(["exec", "--", "true"])).code).toBe(0);
  });
  afterAll(() => local.close());

  it("sbx waits (and says so), then sends once it is free, on a connection of its own", async () => {
    const holder = await holdStoreLock(receiptsDbOf(home));
    const running = startMain(["exec", "--", "echo", "after the wait"], { home });
    try {
      await until(
        () => running.io.stderrText().includes("is busy (another process holds it); waiting up to 2m"),
        30_000,
        "sbx to say it waits",
      );
      // Every connection opened before the wait (a health check's, kept in sbx's pool) is
      // closed by the backend meanwhile: the request must go on a connection of its own.
      await until(() => connectionsTo(local.backend.socketPath!) === 0, 30_000, "idle connections to be closed");
    } finally {
      await holder.release();
    }
    const r = await running.done;
    const stderr = r.stderr;
    expect(r.code, stderr).toBe(0);
    expect(r.stdout).toBe("after the wait\n");
    expect(stderr).not.toMatch(/EPIPE|may have run|database is locked/);
    const list = await runMainJson<ReceiptDocument[]>(["receipts", "list", "--json"], { home });
    expect(list.doc[0]).toMatchObject({ classification: "succeeded", stdout: "after the wait\n" });
  });

  it("gives up after SBX_STORE_WAIT: exit 75, nothing was sent, no receipt, no stack trace", async (t) => {
    const server = await startMisbehavingServer(behaviours.succeeded());
    t.onTestFinished(() => server.close());
    const holder = await holdStoreLock(receiptsDbOf(home));
    let r: SbxResult;
    try {
      r = await runMain(["exec", "--api-url", server.url, "--", "echo", "never"], {
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
    const list = await runMainJson<ReceiptDocument[]>(["receipts", "list", "--json"], { home });
    expect(list.doc.map((d) => d.api_url)).not.toContain(server.url);
  });
});

describeNeeding("tmpfs", "a full disk under SBX_HOME (a small tmpfs, as root)", () => {
  // The backend lives elsewhere: only the receipt store is short of space.
  let daemon: LocalHome;
  let daemonHome: string;
  let apiUrl: string;
  beforeAll(async () => {
    daemon = await localHome("sbx-full-daemon-");
    daemonHome = daemon.home;
    apiUrl = `unix:${path.join(daemonHome, "daemon", "daemon.sock")}`;
  });
  afterAll(() => daemon.close());

  it("before sending: exit 74 naming the file and the cause; nothing was sent", async (t) => {
    const fsys = smallTmpfs("1m");
    t.onTestFinished(() => fsys.cleanup());
    const home = fsys.dir;
    expect((await runMain(["receipts", "list"], { home })).code).toBe(0);
    fillUntilFree(home, 0);
    const marker = `never-${Date.now()}`;
    const r = await runMain(["exec", "--", "echo", marker], { home, env: { SBX_API_URL: apiUrl } });
    expect(r.code, r.stderr).toBe(74);
    expect(r.stderr).toContain(`the receipt store ${receiptsDbOf(home)} is unusable`);
    expect(r.stderr).toMatch(/disk is full|I\/O error|cannot be opened/);
    expect(r.stderr).toContain("nothing was sent");
    expect(r.stderr).not.toMatch(STACK);
    const sent = await runMainJson<ReceiptDocument[]>(["receipts", "list", "--json", "--limit", "100"], {
      home: daemonHome,
    });
    expect(JSON.stringify(sent.doc)).not.toContain(marker);
  });

  it("after sending: the output is printed byte for byte, the answer goes to stderr as JSON, exit 255", async (t) => {
    const fsys = smallTmpfs("2m");
    t.onTestFinished(() => fsys.cleanup());
    const home = fsys.dir;
    expect((await runMain(["receipts", "list"], { home })).code).toBe(0);
    // Room for the receipt written before sending, not for an answer carrying a 1 MiB tail.
    fillUntilFree(home, 256 * 1024);
    const size = 3_000_000;
    const r = await runMain(["exec", "--shell", `head -c ${size} /dev/zero | tr '\\0' x; echo done >&2`], {
      home,
      env: { SBX_API_URL: apiUrl },
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
    const shown = await runMainJson<ReceiptDocument>(["receipts", "show", answer.receipt_id, "--json"], { home });
    expect(shown.doc).toMatchObject({ classification: "dispatched", may_have_run: true });
    const waited = await runMain(["receipts", "wait", answer.receipt_id], { home, env: { SBX_API_URL: apiUrl } });
    expect(waited.code).toBe(0);
  });
});
