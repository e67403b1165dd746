// Every non-happy row of the classification table, produced by the real embedded
// backend in fault mode (`sbx daemon run --faults`), and what a person does next.

import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeHome, removeHome, runSbx, runSbxJson, SBX_BIN, TEST_BINARY } from "../support/cli.js";
import { startForegroundDaemon, stopDaemon, stopForegroundDaemon } from "../support/daemon.js";

interface Receipt {
  receipt_id: string;
  classification: string;
  exit: number | null;
  may_have_run: boolean;
  execution_id: string | null;
  system_error: string | null;
  retry_after_ms: number | null;
  stdout: string | null;
  next: string | null;
  attempts?: unknown[];
}

/** One daemon per fault spec, each in its own SBX_HOME. */
function withFaults(spec: string, body: (home: string) => Promise<void>) {
  return async () => {
    const home = makeHome("sbx-fault-");
    let daemon: ChildProcess | undefined;
    try {
      daemon = await startForegroundDaemon(home, ["--faults", spec]);
      await body(home);
    } finally {
      if (daemon) await stopForegroundDaemon(daemon);
      removeHome(home);
    }
  };
}

const exec = (home: string, args: string[]) => runSbxJson<Receipt>(["exec", "--json", ...args], { home });

describe.concurrent("the embedded backend's fault mode, as sbx classifies it", () => {
  it(
    "not_started: 75, nothing ran, and resubmit with the same key then runs it once",
    withFaults("execute:not_started:once", async (home) => {
      const { result, doc } = await exec(home, ["--", "sh", "-c", "echo ran >> log; cat log"]);
      expect(result.code).toBe(75);
      expect(doc).toMatchObject({ classification: "not_started", may_have_run: false, retry_after_ms: 2000 });
      expect(doc.next).toBe(`sbx receipts resubmit ${doc.receipt_id}`);
      const again = await runSbx(["receipts", "resubmit", doc.receipt_id], { home });
      expect(again).toMatchObject({ code: 0, stdout: "ran\n" });
      const shown = await runSbxJson<Receipt>(["receipts", "show", doc.receipt_id, "--json"], { home });
      expect(shown.doc.attempts).toHaveLength(2);
    }),
  );

  it(
    "unconfirmed: 409 keeps the execution id, 255, and wait finds the real result",
    withFaults("execute:unconfirmed", async (home) => {
      const { result, doc } = await exec(home, ["--", "echo", "hi"]);
      expect(result.code).toBe(255);
      expect(doc.classification).toBe("result_unconfirmed");
      expect(doc.execution_id).toMatch(/^exe_/);
      expect(result.stderr).toContain(`sbx receipts wait ${doc.receipt_id}`);
      const waited = await runSbx(["receipts", "wait", doc.receipt_id], { home });
      expect(waited).toMatchObject({ code: 0, stdout: "hi\n" });
    }),
  );

  it(
    "record_pending: 255 and 'do not resubmit'; wait sees it published",
    withFaults("execute:record_pending", async (home) => {
      const { result, doc } = await exec(home, ["--", "echo", "kept"]);
      expect(result.code).toBe(255);
      expect(doc.classification).toBe("record_pending");
      expect(result.stderr).toContain("do not resubmit");
      const waited = await runSbx(["receipts", "wait", doc.receipt_id, "--timeout", "20s"], { home });
      expect(waited).toMatchObject({ code: 0, stdout: "kept\n" });
    }),
  );

  it(
    "stream_lost: outcome unknown with exec_stream_lost, 255",
    withFaults("execute:stream_lost", async (home) => {
      const { result, doc } = await exec(home, ["--", "true"]);
      expect(result.code).toBe(255);
      expect(doc).toMatchObject({
        classification: "outcome_unknown",
        system_error: "exec_stream_lost",
        may_have_run: true,
      });
      expect(result.stderr).toContain("exec_stream_lost");
    }),
  );

  it(
    "drop after admission: 255 with no execution id; wait finds it by idempotency key",
    withFaults("execute:drop", async (home) => {
      const { result, doc } = await exec(home, ["--", "echo", "dropped"]);
      expect(result.code).toBe(255);
      expect(doc.classification).toBe("outcome_unknown");
      expect(doc.execution_id).toBeNull();
      const waited = await runSbxJson<Receipt>(["receipts", "wait", doc.receipt_id, "--json"], { home });
      expect(waited.result.code).toBe(0);
      expect(waited.doc).toMatchObject({ classification: "succeeded", stdout: "dropped\n" });
      expect(waited.doc.execution_id).toMatch(/^exe_/);
    }),
  );

  it(
    "a dropped process start is in doubt (255); recover finds the process by its idempotency key",
    withFaults("process.start:drop:once", async (home) => {
      const { result, doc } = await runSbxJson<Receipt>(["process", "start", "--json", "--", "sleep", "30"], { home });
      expect(result.code).toBe(255);
      expect(doc).toMatchObject({ classification: "outcome_unknown", execution_id: null });
      const recovered = await runSbxJson<{ resolved: Array<{ receipt_id: string; now: string }> }>(
        ["recover", "--json"],
        {
          home,
        },
      );
      expect(recovered.doc.resolved).toEqual([
        expect.objectContaining({ receipt_id: doc.receipt_id, now: "succeeded" }),
      ]);
      const shown = await runSbxJson<Receipt>(["receipts", "show", doc.receipt_id, "--json"], { home });
      expect(shown.doc.execution_id).toMatch(/^prc_/);
      const listed = await runSbxJson<{ processes: unknown[] }>(["ps", "--json"], { home });
      expect(listed.doc.processes).toHaveLength(1); // started once, never twice
    }),
  );

  it(
    "a slow answer past --client-timeout: local_timeout 255, then wait settles it",
    withFaults("execute:delay=3s", async (home) => {
      const { result, doc } = await exec(home, ["--client-timeout", "1s", "--", "echo", "late"]);
      expect(result.code).toBe(255);
      expect(doc.classification).toBe("local_timeout");
      const waited = await runSbx(["receipts", "wait", doc.receipt_id, "--timeout", "20s"], { home });
      expect(waited).toMatchObject({ code: 0, stdout: "late\n" });
    }),
  );

  it(
    "a streamed exec whose stream is cut after 3 frames resumes by reading, with no duplicate and no lost output",
    withFaults("execute:cut_after=3:once", async (home) => {
      const script = "for i in 1 2 3 4 5 6; do echo line $i; sleep 0.1; done";
      const r = await runSbx(["exec", "--stream", "--shell", script], { home });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n");
      expect(r.stderr).toContain("reconnecting");
    }),
  );

  it(
    "a stream cut inside its final frame is resumed after the last complete event",
    withFaults("execute:cut_in_frame:once", async (home) => {
      const { result, doc } = await exec(home, ["--stream", "--shell", "echo a; echo b"]);
      expect(result.code).toBe(0);
      expect(doc).toMatchObject({ classification: "succeeded", stdout: "a\nb\n" });
    }),
  );

  it(
    "a reset on the stream replaces what the reader accumulated",
    withFaults("execute:reset:once", async (home) => {
      const { result, doc } = await exec(home, ["--stream", "--shell", "echo one; echo two"]);
      expect(result.code).toBe(0);
      expect(doc.stdout).toBe("one\ntwo\n");
    }),
  );

  it(
    "a streamed exit event without exit code or signal is outcome_unknown, never success",
    withFaults("execute:no_exit", async (home) => {
      const { result, doc } = await exec(home, ["--stream", "--", "echo", "x"]);
      expect(result.code).toBe(255);
      expect(doc).toMatchObject({ classification: "outcome_unknown", may_have_run: true, stdout: "x\n" });
    }),
  );

  it.each([
    ["bad_gateway", "outcome_unknown"],
    ["bare_503", "outcome_unknown"],
    ["malformed", "outcome_unknown"],
    ["no_exit", "outcome_unknown"],
    ["in_progress", "in_progress"],
  ])("%s: %s, 255, may have run", async (fault, classification) => {
    await withFaults(`execute:${fault}`, async (home) => {
      const { result, doc } = await exec(home, ["--", "true"]);
      expect(result.code).toBe(255);
      expect(doc).toMatchObject({ classification, may_have_run: true });
      expect(result.stderr).toContain(`sbx receipts wait ${doc.receipt_id}`);
    })();
  });

  it(
    "a 400 from the backend (a working directory that does not exist) is rejected, 125",
    withFaults("executions.get:delay=1ms", async (home) => {
      const { result, doc } = await exec(home, ["--cwd", "no/such/dir", "--", "true"]);
      expect(result.code).toBe(125);
      expect(doc).toMatchObject({ classification: "rejected", may_have_run: false });
    }),
  );
});

describe("kill -9 of the daemon during a run", () => {
  let home: string;
  beforeAll(() => {
    home = makeHome("sbx-crash-");
  });
  afterAll(async () => {
    await runSbx(["daemon", "stop"], { home }).catch(() => undefined);
    removeHome(home);
  });

  it("leaves a receipt in doubt; after the restart wait reports outcome_unknown and the process is gone", async () => {
    const marker = `sbx-crash-marker-${process.pid}-${Date.now()}`;
    const running = runSbxJson<Receipt>(["exec", "--json", "--", "sh", "-c", `sleep 60; echo ${marker}`], {
      home,
      timeoutMs: 30_000,
    });
    const status = await waitFor(async () => {
      const s = await runSbxJson<{ pid: number | null }>(["daemon", "status", "--json"], { home });
      return s.doc.pid !== null && processesNamed(marker).length > 0 ? s.doc.pid : null;
    });
    process.kill(status, "SIGKILL");
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

async function waitFor<T>(probe: () => Promise<T | null>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const v = await probe();
    if (v !== null) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("condition not met in time");
}

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

describe("sbx recover", () => {
  it("observes every receipt in doubt once, resolves what it can, and never re-sends", async () => {
    const home = makeHome("sbx-recover-");
    let daemon: ChildProcess | undefined;
    try {
      daemon = await startForegroundDaemon(home, ["--faults", "execute:drop:times=2"]);
      const dropped = await exec(home, ["--", "sh", "-c", "echo ran >> runs.log"]);
      expect(dropped.doc.classification).toBe("outcome_unknown");
      const dropped2 = await exec(home, ["--", "true"]);
      expect(dropped2.doc.classification).toBe("outcome_unknown");
      // A receipt sent to a backend that is gone stays in doubt.
      const gone = await exec(home, ["--api-url", "http://127.0.0.1:9", "--", "true"]);
      expect(gone.doc.classification).toBe("not_started");
      await new Promise((r) => setTimeout(r, 500));
      const { result, doc } = await runSbxJson<{
        resolved: Array<{ receipt_id: string; now: string }>;
        in_doubt: Array<{ receipt_id: string; next: string }>;
      }>(["recover", "--json"], { home });
      expect(doc.resolved.map((r) => r.receipt_id).sort()).toEqual(
        [dropped.doc.receipt_id, dropped2.doc.receipt_id].sort(),
      );
      expect(doc.resolved.every((r) => r.now === "succeeded")).toBe(true);
      expect(doc.in_doubt).toEqual([]);
      expect(result.code).toBe(0);
      // Nothing ran twice.
      expect((await runSbx(["exec", "--", "cat", "runs.log"], { home })).stdout).toBe("ran\n");
      const again = await runSbx(["recover"], { home });
      expect(again.code).toBe(0);
      expect(again.stderr).toContain("no receipts in doubt");
    } finally {
      if (daemon) await stopForegroundDaemon(daemon);
      removeHome(home);
    }
  });

  it("reports what it could not resolve, with the next step, and exits 255", async () => {
    const home = makeHome("sbx-recover-");
    let daemon: ChildProcess | undefined;
    try {
      daemon = await startForegroundDaemon(home, ["--faults", "execute:stream_lost"]);
      const lost = await exec(home, ["--", "true"]);
      expect(lost.doc.classification).toBe("outcome_unknown");
      await stopForegroundDaemon(daemon);
      daemon = undefined;
      const { result, doc } = await runSbxJson<{
        in_doubt: Array<{ receipt_id: string; next: string; observed: string }>;
      }>(["recover", "--json"], { home, env: { SBX_API_URL: "http://127.0.0.1:9" } });
      expect(result.code).toBe(255);
      expect(doc.in_doubt.map((r) => r.receipt_id)).toEqual([lost.doc.receipt_id]);
      expect(doc.in_doubt[0]!.next).toContain(`sbx receipts wait ${lost.doc.receipt_id}`);
    } finally {
      if (daemon) await stopForegroundDaemon(daemon);
      await stopDaemon(home); // recover may have started one on demand
      removeHome(home);
    }
  });
});
