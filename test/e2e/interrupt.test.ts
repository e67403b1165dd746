// Ctrl-C and a daemon that dies, with real processes and real signals: the first
// SIGINT cancels the execution and sbx waits for it (130, `cancelled`); a second stops
// waiting (255, and how to follow it); a stream whose local daemon was killed starts
// it again and reports the outcome. (`cancel --wait` itself: test/cli/stream-local.)

import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceiptDocument } from "../../src/receipts/document.js";
import { socketClient } from "../backend/support.js";
import { collect, makeHome, removeHome, runSbx, spawnSbx } from "../support/cli.js";
import { daemonPids, stopDaemon } from "../support/daemon.js";
import { runMain, runMainJson } from "../support/in-process.js";
import { processesWithArg, uniqueSleep } from "../support/processes.js";
import { until } from "../support/wait.js";

interface Execution {
  execution_id: string;
  outcome: string;
  started_at: string | null;
  cancel_requested: boolean;
}

describe("Ctrl-C during sbx exec", () => {
  let home: string;
  let backend: ReturnType<typeof socketClient>;
  const byKey = async (key: string): Promise<Execution | undefined> => {
    const r = await backend.api("GET", `/api/v1/sandbox/default/executions?idempotency_key=${key}`);
    return r.json?.executions?.[0];
  };
  const execution = async (id: string): Promise<Execution> =>
    (await backend.api("GET", `/api/v1/sandbox/default/executions/${id}`)).json;
  const started = (key: string): Promise<Execution> =>
    until(
      async () => {
        const e = await byKey(key);
        return e?.started_at ? e : undefined;
      },
      30_000,
      "the execution to start",
    );

  beforeAll(async () => {
    home = makeHome("sbx-e2e-int-");
    expect((await runSbx(["daemon", "start"], { home })).code).toBe(0);
    backend = socketClient(path.join(home, "daemon", "daemon.sock"));
  });
  afterAll(async () => {
    await backend.close();
    await stopDaemon(home);
    removeHome(home);
  });

  it.each([
    ["blocking", []],
    ["--stream", ["--stream"]],
  ])("%s: the first Ctrl-C cancels the execution, says so, and exits 130 once it is cancelled", async (_m, flags) => {
    const key = `int-first-${flags.length}-${Date.now()}`;
    const child = spawnSbx(["exec", ...flags, "--idempotency-key", key, "--", "sleep", "30"], { home });
    const done = collect(child);
    const running = await started(key);
    child.kill("SIGINT");
    const r = await done;
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toContain("Ctrl-C: cancelling");
    expect(r.stderr).toContain(`cancel requested for ${running.execution_id}`);
    expect(r.stderr).toContain("was cancelled");
    expect(r.stderr).not.toContain("deadline");
    expect((await execution(running.execution_id)).outcome).toBe("cancelled");
    const shown = await runMainJson<ReceiptDocument>(["receipts", "show", key, "--json"], { home });
    expect(shown.doc).toMatchObject({ classification: "cancelled", exit: 130, execution_id: running.execution_id });
  });

  it("a second Ctrl-C stops waiting: 255, it may still be running, and how to follow it", async () => {
    const key = `int-second-${Date.now()}`;
    // TERM is ignored: the backend needs its kill grace (SIGKILL) to end it.
    const sleep = uniqueSleep(30);
    const child = spawnSbx(["exec", "--idempotency-key", key, "--shell", `trap '' TERM; sleep ${sleep}`], { home });
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const done = collect(child);
    const running = await started(key);
    // The trap is set once the shell has started sleep: a TERM before it would end it at once.
    await until(() => processesWithArg(sleep).length > 0, 30_000, "sleep to run (TERM ignored)");
    child.kill("SIGINT");
    await until(() => stderr.includes("cancel requested"), 30_000, "the cancel to be requested");
    child.kill("SIGINT");
    const r = await done;
    expect(r.code, stderr).toBe(255);
    expect(stderr).toContain("you stopped waiting before an answer; it may still be running");
    const shown = await runMainJson<ReceiptDocument>(["receipts", "show", key, "--json"], { home });
    expect(stderr).toContain(`sbx receipts wait ${shown.doc.receipt_id}`);
    expect(shown.doc).toMatchObject({ classification: "local_timeout", may_have_run: true });
    // The cancel still goes through at the backend; waiting shows it.
    const waited = await runMain(["receipts", "wait", key], { home });
    expect(waited.code).toBe(130);
    expect((await execution(running.execution_id)).outcome).toBe("cancelled");
  });
});

describe("exec --stream when the local daemon is killed", () => {
  let home: string;
  beforeAll(() => {
    home = makeHome("sbx-e2e-revive-");
  });
  afterAll(async () => {
    await stopDaemon(home);
    removeHome(home);
  });

  it("starts it again (its recovery marks the execution) and reports the outcome", async () => {
    const child = spawnSbx(["exec", "--stream", "--timeout", "5m", "--shell", "echo started; sleep 60"], { home });
    let stdout = "";
    child.stdout?.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    const done = collect(child, 60_000);
    await until(() => stdout.includes("started"), 30_000, "the command's first output");
    const [killed] = daemonPids(home);
    expect(killed).toBeDefined();
    process.kill(killed!, "SIGKILL");
    const r = await done;
    expect(r.code, r.stderr).toBe(255);
    expect(r.stderr).toContain("starting it again");
    const receipts = await runMainJson<ReceiptDocument[]>(["receipts", "list", "--json"], { home });
    expect(receipts.doc[0]).toMatchObject({
      classification: "outcome_unknown",
      system_error: "exec_stream_lost",
      may_have_run: true,
    });
    const now = daemonPids(home);
    expect(now.length).toBe(1);
    expect(now[0]).not.toBe(killed);
  });
});
