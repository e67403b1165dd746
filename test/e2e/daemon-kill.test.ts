// kill -9 of the daemon during a run: the receipt is in doubt; the next command
// starts a fresh daemon, whose recovery marks the lost execution and ends its group.

import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeHome, removeHome, runSbxJson, SBX_BIN, TEST_BINARY } from "../support/cli.js";
import { daemonPids, stopDaemon } from "../support/daemon.js";
import { processesWithArg, uniqueSleep } from "../support/processes.js";
import { until } from "../support/wait.js";

interface Receipt {
  receipt_id: string;
  classification: string;
  system_error: string | null;
}

describe("kill -9 of the daemon during a run", () => {
  let home: string;
  beforeAll(() => {
    home = makeHome("sbx-crash-");
  });
  afterAll(async () => {
    await stopDaemon(home);
    removeHome(home);
  });

  it("leaves a receipt in doubt; after the restart wait reports outcome_unknown and the process is gone", async () => {
    const marker = `sbx-crash-marker-${process.pid}-${Date.now()}`;
    const sleep = uniqueSleep(60);
    const running = runSbxJson<Receipt>(["exec", "--json", "--", "sh", "-c", `sleep ${sleep}; echo ${marker}`], {
      home,
    });
    // The command itself runs (its sandbox is set up), not only the sbx asking for it.
    await until(() => processesWithArg(sleep).length > 0, 15_000, "the daemon to run the command");
    const [daemon] = daemonPids(home);
    expect(daemon).toBeDefined();
    process.kill(daemon!, "SIGKILL");
    const { result, doc } = await running;
    expect(result.code).toBe(255);
    expect(doc.classification).toBe("outcome_unknown");
    // The next command starts a fresh daemon, which marks the lost execution and ends its group.
    const waited = await runSbxJson<Receipt>(["receipts", "wait", doc.receipt_id, "--json", "--timeout", "20s"], {
      home,
    });
    expect(waited.result.code).toBe(255);
    expect(waited.doc).toMatchObject({ classification: "outcome_unknown", system_error: "exec_stream_lost" });
    expect(processesNamed(marker)).toEqual([]);
  });
});

/** Sandboxed processes whose command line mentions name. */
function processesNamed(name: string): number[] {
  return fs
    .readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const cmdline = fs.readFileSync(`/proc/${e}/cmdline`, "utf8");
        return cmdline.includes(name) && !cmdline.includes(TEST_BINARY ?? SBX_BIN); // the sandboxed process, not sbx itself
      } catch {
        return false;
      }
    })
    .map(Number);
}
