// A command's durable writes to the receipt store: the receipt before the request and
// the answer after it, and nothing when it exits. Closing SQLite's last connection
// would checkpoint the WAL into the database (a durable write of its own), so
// `node bin/sbx` leaves the store to its exit: the WAL stays, with the two commits in
// it, and the next command reads them there. (Bun's runtime closes databases at exit
// itself, so this is about the Node entry; test/cli/exec-path.test.ts counts the
// writes of either.)

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeHome, receiptsDbOf, removeHome, SBX_BIN, sbxEnv } from "../support/cli.js";
import { stopDaemon } from "../support/daemon.js";

let home: string;
beforeAll(() => {
  home = makeHome("sbx-e2e-writes-");
});
afterAll(async () => {
  await stopDaemon(home);
  removeHome(home);
});

const nodeSbx = (args: string[]) =>
  spawnSync(process.execPath, ["--", SBX_BIN, ...args], { env: sbxEnv(home), encoding: "utf8", timeout: 30_000 });

describe("node bin/sbx exec and the receipt store", () => {
  it("exits without checkpointing the WAL; the next command reads what it committed", () => {
    expect(nodeSbx(["exec", "--", "echo", "one"]).stdout).toBe("one\n");
    const wal = `${receiptsDbOf(home)}-wal`;
    const size = fs.statSync(wal).size;
    expect(size).toBeGreaterThan(0);
    expect(nodeSbx(["exec", "--", "echo", "two"]).stdout).toBe("two\n");
    // Appended to, not merged into the database and emptied.
    expect(fs.statSync(wal).size).toBeGreaterThan(size);
    const list = JSON.parse(nodeSbx(["receipts", "list", "--json"]).stdout) as Array<{ classification: string }>;
    expect(list.map((d) => d.classification)).toEqual(["succeeded", "succeeded"]);
  });
});
