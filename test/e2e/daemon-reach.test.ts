// Reaching the local daemon: requests go straight to its socket, and it is started
// only when nobody listens there. A socket file left by a killed daemon refuses the
// connection, which proves nothing was sent: sbx starts the daemon and sends the
// request once, for the first time. The receipt says one attempt, and it succeeded.

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { resolvePaths } from "../../src/config/paths.js";
import type { DetailedReceiptDocument } from "../../src/receipts/document.js";
import { makeHome, removeHome, runSbx, runSbxJson } from "../support/cli.js";
import { stopDaemon } from "../support/daemon.js";

const homes: string[] = [];
afterEach(async () => {
  for (const home of homes.splice(0)) {
    await stopDaemon(home);
    removeHome(home);
  }
});

/** A socket file at `file` that nobody listens on: its listener was SIGKILLed (no cleanup). */
async function staleSocket(file: string): Promise<void> {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const child = spawn(process.execPath, ["-e", `require("node:net").createServer().listen(${JSON.stringify(file)})`], {
    stdio: "ignore",
  });
  await vi.waitFor(() => expect(fs.existsSync(file)).toBe(true), { timeout: 10_000, interval: 20 });
  const gone = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await gone;
}

describe("a local daemon socket that refuses the connection", () => {
  it("starts the daemon and sends once: one attempt, succeeded", async () => {
    const home = makeHome("sbx-e2e-reach-");
    homes.push(home);
    const paths = resolvePaths({ SBX_HOME: home });
    await staleSocket(paths.socketPath);
    expect(fs.existsSync(paths.socketPath)).toBe(true);

    const r = await runSbx(["exec", "--", "echo", "hello"], { home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("hello\n");

    const list = await runSbxJson<Array<{ receipt_id: string }>>(["receipts", "list", "--json"], { home });
    expect(list.doc).toHaveLength(1);
    const shown = await runSbxJson<DetailedReceiptDocument>(["receipts", "show", list.doc[0]!.receipt_id, "--json"], {
      home,
    });
    expect(shown.doc.classification).toBe("succeeded");
    expect(shown.doc.attempts).toHaveLength(1);
    // The dispatch marker and the one answer: no refused attempt is recorded, as none was sent.
    expect(shown.doc.observations.map((o) => o.source)).toEqual(["dispatch", "answer"]);
    // The daemon logs a request once answered: wait for the line, then count.
    const posts = () => fs.readFileSync(paths.daemonLog, "utf8").match(/POST \/api\/v1\/sandbox\/default\/execute/g);
    await vi.waitFor(() => expect(posts()).not.toBeNull(), { timeout: 10_000 });
    expect(posts()).toHaveLength(1);
  });
});
