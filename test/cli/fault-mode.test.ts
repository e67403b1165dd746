// Every non-happy row of the classification table, produced by the real embedded
// backend in fault mode (what `sbx daemon run --faults` serves), and what a person
// does next; in-process through main(). (kill -9 of the daemon: test/e2e/daemon-kill.)

import { randomUUID } from "node:crypto";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { BackendOptions } from "../../src/backend/backend.js";
import { socketClient } from "../backend/support.js";
import { onRequestWithKey, useClientDeadlines } from "../support/client-deadline.js";
import { startHomeBackend } from "../support/home-backend.js";
import { type LocalHome, localHome, runMain, runMainJson } from "../support/in-process.js";
import { until } from "../support/wait.js";

interface Receipt {
  receipt_id: string;
  classification: string;
  exit: number | null;
  may_have_run: boolean;
  execution_id: string | null;
  process_id: string | null;
  system_error: string | null;
  retry_after_ms: number | null;
  stdout: string | null;
  next: string | null;
  attempts?: unknown[];
}

/** One backend per fault spec, each in its own SBX_HOME. */
function withFaults(spec: string, body: (home: string) => Promise<void>, opts: Partial<BackendOptions> = {}) {
  return async () => {
    const local: LocalHome = await localHome("sbx-fault-", { faults: spec, ...opts });
    try {
      await body(local.home);
    } finally {
      await local.close();
    }
  };
}

const exec = (home: string, args: string[]) => runMainJson<Receipt>(["exec", "--json", ...args], { home });

const deadline = useClientDeadlines();

describe.concurrent("the embedded backend's fault mode, as sbx classifies it", () => {
  it(
    "not_started: 75, nothing ran, and resubmit with the same key then runs it once",
    withFaults("execute:not_started:once", async (home) => {
      const { result, doc } = await exec(home, ["--", "sh", "-c", "echo ran >> log; cat log"]);
      expect(result.code).toBe(75);
      expect(doc).toMatchObject({ classification: "not_started", may_have_run: false, retry_after_ms: 2000 });
      expect(doc.next).toBe(`sbx receipts resubmit ${doc.receipt_id}`);
      const again = await runMain(["receipts", "resubmit", doc.receipt_id], { home });
      expect(again).toMatchObject({ code: 0, stdout: "ran\n" });
      const shown = await runMainJson<Receipt>(["receipts", "show", doc.receipt_id, "--json"], { home });
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
      const waited = await runMain(["receipts", "wait", doc.receipt_id], { home });
      expect(waited).toMatchObject({ code: 0, stdout: "hi\n" });
    }),
  );

  it(
    "record_pending: 255 and 'do not resubmit'; wait sees it published",
    withFaults(
      "execute:record_pending",
      async (home) => {
        const { result, doc } = await exec(home, ["--", "echo", "kept"]);
        expect(result.code).toBe(255);
        expect(doc.classification).toBe("record_pending");
        expect(result.stderr).toContain("do not resubmit");
        const waited = await runMain(["receipts", "wait", doc.receipt_id, "--timeout", "20s"], { home });
        expect(waited).toMatchObject({ code: 0, stdout: "kept\n" });
      },
      // Published sooner than the daemon's 3 s: what is waited for is the same.
      { recordPendingPublishMs: 300 },
    ),
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
      const waited = await runMainJson<Receipt>(["receipts", "wait", doc.receipt_id, "--json"], { home });
      expect(waited.result.code).toBe(0);
      expect(waited.doc).toMatchObject({ classification: "succeeded", stdout: "dropped\n" });
      expect(waited.doc.execution_id).toMatch(/^exe_/);
    }),
  );

  it(
    "a dropped process start is in doubt (255); recover finds the process by its idempotency key",
    withFaults("process.start:drop:once", async (home) => {
      const { result, doc } = await runMainJson<Receipt>(["process", "start", "--json", "--", "sleep", "30"], { home });
      expect(result.code).toBe(255);
      expect(doc).toMatchObject({ classification: "outcome_unknown", execution_id: null });
      const recovered = await runMainJson<{ resolved: Array<{ receipt_id: string; now: string }> }>(
        ["recover", "--json"],
        {
          home,
        },
      );
      expect(recovered.doc.resolved).toEqual([
        expect.objectContaining({ receipt_id: doc.receipt_id, now: "succeeded" }),
      ]);
      const shown = await runMainJson<Receipt>(["receipts", "show", doc.receipt_id, "--json"], { home });
      expect(shown.doc.process_id).toMatch(/^prc_/);
      const listed = await runMainJson<{ processes: unknown[] }>(["ps", "--json"], { home });
      expect(listed.doc.processes).toHaveLength(1); // started once, never twice
    }),
  );

  // The client's deadline passes when the test says, not after wall-clock time: on a
  // loaded machine a second can pass between making the request and connecting (the
  // event loop stalled), and a deadline then rightly ends it as never sent (75).
  it(
    "a slow answer past --client-timeout: local_timeout 255, then wait settles it",
    withFaults("execute:delay=3s", async (home) => {
      // It passes once the backend has the request, long before the delayed answer.
      const passes = deadline(1234);
      const key = `slow-${randomUUID()}`;
      const seen = onRequestWithKey("http.server.request.start", key, () => passes.abort());
      let receiptId: string;
      try {
        const { result, doc } = await exec(home, [
          "--client-timeout",
          "1234ms",
          "--idempotency-key",
          key,
          "--",
          "echo",
          "late",
        ]);
        expect(passes.signal.aborted).toBe(true);
        expect(result.code).toBe(255);
        expect(doc).toMatchObject({ classification: "local_timeout", may_have_run: true });
        receiptId = doc.receipt_id;
      } finally {
        seen();
      }
      const waited = await runMain(["receipts", "wait", receiptId, "--timeout", "20s"], { home });
      expect(waited).toMatchObject({ code: 0, stdout: "late\n" });
    }),
  );

  it(
    "a deadline that passes before the request was written (a stalled client): not_started 75, nothing reached the backend, resubmit runs it once",
    withFaults("execute:delay=100ms", async (home) => {
      // It passes where load made it pass: the request made, its connection not yet made.
      const passes = deadline(1235);
      const key = `stalled-${randomUUID()}`;
      const made = onRequestWithKey("http.client.request.start", key, () => passes.abort());
      let reachedBackend = 0;
      const reached = onRequestWithKey("http.server.request.start", key, () => reachedBackend++);
      let receipt: Receipt;
      try {
        const { result, doc } = await exec(home, [
          "--client-timeout",
          "1235ms",
          "--idempotency-key",
          key,
          "--",
          "sh",
          "-c",
          "echo ran >> log; cat log",
        ]);
        expect(passes.signal.aborted).toBe(true);
        expect(result.code).toBe(75);
        expect(doc).toMatchObject({ classification: "not_started", may_have_run: false });
        expect(result.stderr).toContain("nothing had been sent");
        expect(reachedBackend).toBe(0);
        receipt = doc;
      } finally {
        made();
        reached();
      }
      const backend = socketClient(path.join(home, "daemon", "daemon.sock"));
      try {
        expect((await backend.api("GET", "/api/v1/sandbox/default/executions")).json.executions).toEqual([]);
      } finally {
        await backend.close();
      }
      const again = await runMain(["receipts", "resubmit", receipt.receipt_id], { home });
      expect(again).toMatchObject({ code: 0, stdout: "ran\n" });
    }),
  );

  it(
    "a streamed exec whose stream is cut after 3 frames resumes by reading, with no duplicate and no lost output",
    withFaults("execute:cut_after=3:once", async (home) => {
      const script = "for i in 1 2 3 4 5 6; do echo line $i; sleep 0.1; done";
      const r = await runMain(["exec", "--stream", "--shell", script], { home });
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

describe("sbx recover", () => {
  it("observes every receipt in doubt once, resolves what it can, and never re-sends", async () => {
    const local = await localHome("sbx-recover-", { faults: "execute:drop:times=2" });
    const home = local.home;
    try {
      const dropped = await exec(home, ["--", "sh", "-c", "echo ran >> runs.log"]);
      expect(dropped.doc.classification).toBe("outcome_unknown");
      const dropped2 = await exec(home, ["--", "true"]);
      expect(dropped2.doc.classification).toBe("outcome_unknown");
      // A receipt sent to a backend that is gone stays in doubt.
      const gone = await exec(home, ["--api-url", "http://127.0.0.1:9", "--", "true"]);
      expect(gone.doc.classification).toBe("not_started");
      // Both dropped executions have ended at the backend (recover then finds them settled).
      const backend = socketClient(path.join(home, "daemon", "daemon.sock"));
      try {
        await until(
          async () => {
            const listed = await backend.api("GET", "/api/v1/sandbox/default/executions");
            const executions = listed.json.executions as Array<{ outcome: string }>;
            return executions.length === 2 && executions.every((e) => e.outcome === "succeeded");
          },
          20_000,
          "the dropped executions to end",
        );
      } finally {
        await backend.close();
      }
      const { result, doc } = await runMainJson<{
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
      expect((await runMain(["exec", "--", "cat", "runs.log"], { home })).stdout).toBe("ran\n");
      const again = await runMain(["recover"], { home });
      expect(again.code).toBe(0);
      expect(again.stderr).toContain("no receipts in doubt");
    } finally {
      await local.close();
    }
  });

  it("reports what it could not resolve, with the next step, and exits 255", async (t) => {
    const local = await localHome("sbx-recover-", { faults: "execute:stream_lost" });
    const home = local.home;
    try {
      const lost = await exec(home, ["--", "true"]);
      expect(lost.doc.classification).toBe("outcome_unknown");
      // The backend started again still answers every read of it lost: what stays in doubt is reported.
      await local.backend.close();
      const restarted = await startHomeBackend(home, { faults: "executions.get:stream_lost" });
      t.onTestFinished(() => restarted.close());
      const { result, doc } = await runMainJson<{
        in_doubt: Array<{ receipt_id: string; next: string; observed: string }>;
      }>(["recover", "--json"], { home, env: { SBX_API_URL: "http://127.0.0.1:9" } });
      expect(result.code).toBe(255);
      expect(doc.in_doubt.map((r) => r.receipt_id)).toEqual([lost.doc.receipt_id]);
      expect(doc.in_doubt[0]!.next).toContain(`sbx receipts wait ${lost.doc.receipt_id}`);
    } finally {
      await local.close();
    }
  });
});
