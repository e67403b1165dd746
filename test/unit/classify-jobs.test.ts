// What a look at a request's jobs means for its receipt (src/receipts/classify-jobs.ts):
// a `jobs run` receipt settles to its job's outcome as an exec's does; a submission is
// `admitted`, settled once every job ended, in doubt when the backend lost one.

import { describe, expect, it } from "vitest";
import { type JobSeen, jobsObservations, jobsVerdict } from "../../src/receipts/classify-jobs.js";
import { exitCodeFor, mayHaveRun } from "../../src/receipts/classify.js";
import { IN_DOUBT } from "../../src/receipts/classifications.js";

const job = (status: string, more: Partial<JobSeen> = {}): JobSeen => ({
  job_id: `job_${status}`,
  name: status,
  status,
  exit_code: null,
  signal: null,
  error: null,
  ...more,
});

describe("a `jobs run` receipt: its one job's outcome", () => {
  it.each<[string, JobSeen, string, number | null, boolean]>([
    ["queued", job("queued"), "running", null, false],
    ["running", job("running"), "running", null, false],
    ["succeeded", job("succeeded", { exit_code: 0 }), "succeeded", 0, true],
    ["failed with exit 7", job("failed", { exit_code: 7 }), "failed", 7, true],
    ["killed by SIGKILL", job("failed", { signal: "SIGKILL" }), "failed", 137, true],
    ["timed out", job("timed_out", { signal: "SIGKILL" }), "timed_out", 124, true],
    ["cancelled", job("cancelled", { signal: "SIGTERM" }), "cancelled", 130, true],
    ["interrupted (the backend stopped)", job("interrupted"), "outcome_unknown", 255, false],
    ["lost", job("lost"), "outcome_unknown", 255, false],
    [
      "its sandbox could not be set up",
      job("failed", { error: "sandbox_start_failed: no bwrap" }),
      "rejected",
      125,
      true,
    ],
  ])("%s → %s", (_name, seen, classification, exit, definitive) => {
    const c = jobsVerdict("jobs_run", "req-1", [seen], 200);
    expect(c.classification).toBe(classification);
    expect(c.definitive).toBe(definitive);
    expect(c.job_id).toBe(seen.job_id);
    if (exit !== null) expect(exitCodeFor(c)).toBe(exit);
  });

  it("an interrupted job is in doubt, says which job and why, and may have run", () => {
    const c = jobsVerdict("jobs_run", "req-1", [job("interrupted")], 200);
    expect(IN_DOUBT).toContain(c.classification);
    expect(mayHaveRun(c.classification!)).toBe(true);
    expect(c.error).toEqual({
      code: "job_interrupted",
      message:
        "job interrupted (job_interrupted) was interrupted (the backend stopped while it ran): it may have done part of its work",
    });
  });
});

describe("a `jobs submit` receipt: admitted, with each job's end observed", () => {
  it("is admitted, never succeeded, whatever its jobs did; settled once all ended", () => {
    const ended = [job("succeeded", { exit_code: 0 }), job("failed", { exit_code: 7 })];
    expect(jobsVerdict("jobs_submit", "r", ended, 200)).toMatchObject({ classification: "admitted", definitive: true });
    expect(exitCodeFor(jobsVerdict("jobs_submit", "r", ended, 200))).toBe(0);
    const going = [job("succeeded", { exit_code: 0 }), job("running")];
    expect(jobsVerdict("jobs_submit", "r", going, 200)).toMatchObject({
      classification: "admitted",
      definitive: false,
      outcome: "pending",
    });
  });

  it("is in doubt when the backend lost any of its jobs", () => {
    for (const lost of ["interrupted", "lost"]) {
      const c = jobsVerdict("jobs_submit", "r", [job("succeeded", { exit_code: 0 }), job(lost)], 200);
      expect(c.classification).toBe("outcome_unknown");
      expect(c.error?.code).toBe(`job_${lost}`);
    }
  });

  it("records each job's end once, then the verdict last (it decides the receipt)", () => {
    const jobs = [job("succeeded", { exit_code: 0 }), job("failed", { exit_code: 3 }), job("running")];
    const rows = jobsObservations("jobs_submit", "r", jobs, 200);
    expect(rows.map((r) => [r.job_id, r.outcome, r.exit_code, r.classification])).toEqual([
      ["job_succeeded", "succeeded", 0, "admitted"],
      ["job_failed", "failed", 3, "admitted"],
      [null, "pending", null, "admitted"],
    ]);
    const again = jobsObservations(
      "jobs_submit",
      "r",
      jobs,
      200,
      new Set(["job_succeeded:succeeded", "job_failed:failed"]),
    );
    expect(again.map((r) => r.job_id)).toEqual([null]);
  });
});
