// A damaged backend.db (4 KiB overwritten in its middle while the daemon was stopped)
// is found when the daemon starts: it refuses to serve, naming the file; the sbx that
// started it exits 74 at once (nothing ran, nothing was sent) instead of 500s and "may
// have run"; `sbx daemon status` says why. Real processes: the daemon is spawned by sbx.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeHome, removeHome, runSbx, runSbxJson } from "../support/cli.js";
import { stopDaemon } from "../support/daemon.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON documents
type Json = any;

const PAGE = 4096;

describe("a damaged backend.db", () => {
  it("is refused at the daemon's start: exit 74 naming the file, nothing sent; daemon status says why", async (t) => {
    const home = makeHome("sbx-e2e-damaged-");
    t.onTestFinished(async () => {
      await stopDaemon(home);
      removeHome(home);
    });
    // Enough rows that the middle of the file is table pages (no deletes: no free pages).
    for (let i = 0; i < 3; i++) {
      const r = await runSbx(["exec", "--", "sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x"], { home });
      expect(r.code, r.stderr).toBe(0);
    }
    expect((await runSbx(["daemon", "stop"], { home })).code).toBe(0);
    const db = path.join(home, "daemon", "backend.db");
    const pages = Math.floor(fs.statSync(db).size / PAGE);
    expect(pages).toBeGreaterThan(100);
    const fd = fs.openSync(db, "r+");
    fs.writeSync(fd, Buffer.alloc(PAGE, 0xff), 0, PAGE, Math.floor(pages / 2) * PAGE);
    fs.closeSync(fd);

    const refused = await runSbx(["exec", "--", "echo", "never"], { home });
    expect(refused.code, refused.stderr).toBe(74);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain(`the local backend refused to start: the backend's database ${db} is damaged (`);
    expect(refused.stderr).toContain(`mv ${db} ${db}.damaged`);
    expect(refused.stderr).not.toMatch(/may have run|receipts wait/);
    // Nothing was sent: no receipt beyond the three that ran.
    const listed = await runSbxJson<Json[]>(["receipts", "list", "--json"], { home });
    expect(listed.doc).toHaveLength(3);

    const status = await runSbxJson<Json>(["daemon", "status", "--json"], { home });
    expect(status.result.code).toBe(74);
    expect(status.doc).toMatchObject({ running: false, start_failure: { code: "database_damaged", exit: 74 } });
    expect(status.doc.start_failure.message).toContain(db);
    const human = await runSbx(["daemon", "status"], { home });
    expect(human.code).toBe(74);
    expect(human.stdout).toMatch(
      /^not running\t.*\tits last start \(.*\) was refused: the backend's database .* is damaged/,
    );

    // Moved aside, as the hint says: the backend starts afresh, and status forgets the refusal.
    fs.renameSync(db, `${db}.damaged`);
    const again = await runSbx(["exec", "--", "echo", "afresh"], { home });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe("afresh\n");
    const ok = await runSbxJson<Json>(["daemon", "status", "--json"], { home });
    expect(ok.doc).toMatchObject({ running: true, start_failure: null });
  });
});
