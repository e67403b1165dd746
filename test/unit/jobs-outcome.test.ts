// What jobs' statuses mean for sbx's exit code (submit --wait, wait, run).

import { describe, expect, it } from "vitest";
import { exitCodeForJob, exitCodeForJobs } from "../../src/cli/commands/jobs/outcome.js";
import type { JobStatus } from "../../src/protocol/jobs.js";

describe("exitCodeForJobs", () => {
  it.each<[JobStatus[], "done" | "deadline" | "interrupted", number]>([
    [["succeeded"], "done", 0],
    [["succeeded", "succeeded"], "done", 0],
    [["succeeded", "failed"], "done", 1],
    [["cancelled"], "done", 1],
    [["timed_out"], "done", 1],
    [["dependency_failed", "succeeded"], "done", 1],
    [["interrupted"], "done", 255],
    [["lost", "succeeded"], "done", 255],
    [["failed", "interrupted"], "done", 255],
    [["running", "succeeded"], "deadline", 124],
    [["failed", "queued"], "deadline", 124],
    [["running"], "interrupted", 130],
  ])("%j, %s → %i", (statuses, end, code) => {
    expect(exitCodeForJobs(statuses, end)).toBe(code);
  });
});

describe("exitCodeForJob (jobs run, like exec)", () => {
  it.each<[JobStatus, number | null, string | null, number]>([
    ["succeeded", 0, null, 0],
    ["failed", 3, null, 3],
    ["failed", null, "SIGKILL", 137],
    ["failed", null, "SIGTERM", 143],
    ["failed", null, null, 1],
    ["timed_out", null, "SIGTERM", 124],
    ["cancelled", 143, null, 130],
    ["dependency_failed", null, null, 1],
    ["interrupted", null, null, 255],
    ["lost", null, null, 255],
  ])("%s exit %s signal %s → %i", (status, exit_code, signal, code) => {
    expect(exitCodeForJob({ status, exit_code, signal, error: null })).toBe(code);
  });

  it("is 125, never 1–123, for a job whose sandbox could not be set up (its command never ran)", () => {
    const error = "sandbox_start_failed: the sandbox could not be set up: Can't mount proc on /proc";
    expect(exitCodeForJob({ status: "failed", exit_code: null, signal: null, error })).toBe(125);
  });
});
