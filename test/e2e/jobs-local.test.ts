// Jobs across a real crash of the daemon: kill -9 while a job runs. The job is
// interrupted afterwards (never resumed), its processes are gone, and a
// `sbx jobs submit --wait` that was waiting reads on through the restart and exits 255.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { collect, makeHome, removeHome, runSbxJson, spawnSbx } from "../support/cli.js";
import { startForegroundDaemon, stopDaemon } from "../support/daemon.js";
import { runMainJson } from "../support/in-process.js";
import { processesWithArg, uniqueSleep } from "../support/processes.js";
import { until } from "../support/wait.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON documents
type Json = any;

describe("kill -9 of the daemon while a job runs", () => {
  it("leaves the job interrupted; a waiting submit --wait exits 255", async (t) => {
    const home = makeHome("sbx-e2e-jobs-");
    t.onTestFinished(async () => {
      await stopDaemon(home);
      removeHome(home);
    });
    const daemon = await startForegroundDaemon(home, []);
    const sleep = uniqueSleep(60);
    const file = path.join(home, "jobs.json");
    fs.writeFileSync(
      file,
      JSON.stringify({
        request_id: "kill-9",
        jobs: [
          { name: "long", command: ["sleep", sleep] },
          { name: "after", command: "echo after", depends_on: ["long"] },
        ],
      }),
    );
    const waiter = spawnSbx(["jobs", "submit", file, "--wait", "--json"], { home });
    const waited = collect(waiter, 90_000, "sbx jobs submit --wait");

    const long = await until<Json>(
      async () => {
        const { doc } = await runMainJson<Json>(["jobs", "list", "--request", "kill-9", "--json"], { home });
        const found = doc.jobs.find((j: Json) => j.name === "long");
        return found?.status === "running" ? found : undefined;
      },
      30_000,
      "the job to run",
    );
    await until(() => processesWithArg(sleep).length === 1, 10_000, "the job's command to run");
    const sandbox = await runMainJson<Json>(["sandbox", "show", "default", "--json"], { home });
    const endsWithDaemon = sandbox.doc.isolation === "bwrap";

    // The waiter is held still while the backend is away: how long the restart takes is
    // the machine's (under load it passed the 30 s a waiter reads through an unreachable
    // backend, and it gave up with 75); held, the waiter finds the backend gone only once
    // it is back, at whatever point of its reads it was held (any of them is read again).
    waiter.kill("SIGSTOP");
    t.onTestFinished(() => {
      waiter.kill("SIGCONT");
    });
    const exited = new Promise((resolve) => daemon.once("exit", resolve));
    daemon.kill("SIGKILL");
    await exited;
    if (endsWithDaemon) {
      // A bwrap sandbox dies with its daemon (--die-with-parent).
      await until(() => processesWithArg(sleep).length === 0, 10_000, "the sandbox to end with the daemon");
    } else {
      // Without isolation the group lives on until a backend recovers it.
      expect(processesWithArg(sleep)).toHaveLength(1);
    }

    // Any command of the local profile starts the backend again (a process of its own:
    // in-process sbx cannot start one); its recovery ends the job.
    const shown = await runSbxJson<Json>(["jobs", "show", long.job_id, "--json"], { home });
    expect(shown.result.code, shown.result.stderr).toBe(0);
    expect(shown.doc).toMatchObject({
      status: "interrupted",
      error: endsWithDaemon
        ? "the backend stopped while it ran; its sandbox ended with it"
        : "the backend stopped while it ran; its processes were killed when the backend started again",
    });
    expect(processesWithArg(sleep)).toEqual([]);

    waiter.kill("SIGCONT");
    const result = await waited;
    expect(result.code, result.stderr).toBe(255);
    const doc = JSON.parse(result.stdout);
    expect(doc.jobs.map((j: Json) => [j.name, j.status])).toEqual([
      ["long", "interrupted"],
      ["after", "dependency_failed"],
    ]);
    // Its receipt is in doubt (a job was lost), not a success; it carries the jobs' ends.
    expect(doc).toMatchObject({ classification: "outcome_unknown", error: { code: "job_interrupted" } });
    const shownReceipt = await runMainJson<Json>(["receipts", "show", doc.receipt_id, "--json"], { home });
    expect(shownReceipt.doc).toMatchObject({ classification: "outcome_unknown", may_have_run: true, exit: 255 });
    expect(
      shownReceipt.doc.observations
        .filter((o: Json) => o.job_id !== null)
        .map((o: Json) => [o.job_id === long.job_id ? "long" : "after", o.outcome]),
    ).toEqual([
      ["long", "unknown"],
      ["after", "failed"],
    ]);
  });

  it("a `jobs run` receipt whose job was interrupted is in doubt, and `sbx recover` says so (255)", async (t) => {
    const home = makeHome("sbx-e2e-jobs-");
    t.onTestFinished(async () => {
      await stopDaemon(home);
      removeHome(home);
    });
    const daemon = await startForegroundDaemon(home, []);
    const sleep = uniqueSleep(60);
    const runner = spawnSbx(["jobs", "run", "--", "sleep", sleep], { home });
    const ran = collect(runner, 90_000, "sbx jobs run");
    await until(() => processesWithArg(sleep).length === 1, 30_000, "the job's command to run");
    // The admission is on the receipt once sbx recorded its answer (the job may start first).
    const receipt = await until<Json>(
      async () => {
        const { doc } = await runMainJson<Json>(["receipts", "list", "--json"], { home });
        return doc[0]?.classification === "running" ? doc[0] : undefined;
      },
      30_000,
      "the receipt to say running",
    );
    expect(receipt).toMatchObject({ kind: "jobs_run", classification: "running" });
    const receiptId = receipt.receipt_id;

    // Both die: the daemon, and the sbx that followed the job (nothing it could record).
    const exited = new Promise((resolve) => daemon.once("exit", resolve));
    daemon.kill("SIGKILL");
    runner.kill("SIGKILL");
    await exited;
    expect((await ran).signal).toBe("SIGKILL");

    // recover starts the backend again (a process of its own); its recovery ends the job.
    const recovered = await runSbxJson<Json>(["recover", "--json"], { home });
    expect(recovered.result.code, recovered.result.stderr).toBe(255);
    expect(recovered.doc.resolved).toEqual([]);
    expect(recovered.doc.in_doubt).toHaveLength(1);
    expect(recovered.doc.in_doubt[0]).toMatchObject({
      receipt_id: receiptId,
      was: "running",
      now: "outcome_unknown",
      exit: 255,
    });
    expect(recovered.doc.in_doubt[0].next).toMatch(
      /was interrupted .* submit it again only if running it twice is safe/,
    );
    const after = await runMainJson<Json>(["receipts", "show", receiptId, "--json"], { home });
    expect(after.doc).toMatchObject({ classification: "outcome_unknown", error: { code: "job_interrupted" } });
  });
});
