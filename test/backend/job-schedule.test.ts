// Dependency resolution and scheduling of jobs, as pure functions: both policies,
// chains, diamonds, failures upstream, the concurrency limit, queue keys, cycles and
// unknown names refused, and the status a run's end gives.

import { describe, expect, it } from "vitest";
import { checkJobGraph, checkJobSubmitRequest, type JobStatus } from "../../src/protocol/jobs.js";
import {
  type PlanJob,
  planJobs,
  resolveDependencies,
  statusOfRun,
  transitiveDependents,
} from "../../src/backend/jobs/schedule.js";

describe("resolveDependencies", () => {
  it.each<[string, JobStatus[], string, string]>([
    ["all_succeeded", [], "ready", "no dependencies"],
    ["all_succeeded", ["succeeded", "succeeded"], "ready", "all succeeded"],
    ["all_succeeded", ["succeeded", "running"], "wait", "one still running"],
    ["all_succeeded", ["queued", "waiting"], "wait", "none started"],
    ["all_succeeded", ["succeeded", "failed"], "dependency_failed", "one failed"],
    ["all_succeeded", ["running", "failed"], "dependency_failed", "one failed while another runs"],
    ["all_succeeded", ["cancelled"], "dependency_failed", "cancelled"],
    ["all_succeeded", ["timed_out"], "dependency_failed", "timed out"],
    ["all_succeeded", ["dependency_failed"], "dependency_failed", "failed further up"],
    ["all_succeeded", ["interrupted"], "dependency_failed", "interrupted by a restart"],
    ["all_succeeded", ["lost"], "dependency_failed", "lost"],
    ["all_succeeded", ["cancel_requested"], "wait", "being cancelled"],
    ["all_terminal", [], "ready", "no dependencies"],
    ["all_terminal", ["succeeded", "failed"], "ready", "all ended, one failed"],
    ["all_terminal", ["dependency_failed", "cancelled", "lost"], "ready", "all ended badly"],
    ["all_terminal", ["failed", "running"], "wait", "one still running"],
    ["all_terminal", ["cancel_requested"], "wait", "being cancelled"],
  ])("%s %j → %s (%s)", (policy, deps, verdict) => {
    expect(resolveDependencies(policy as "all_succeeded", deps)).toBe(verdict);
  });
});

let seq = 0;
function job(
  id: string,
  status: JobStatus,
  deps: string[] = [],
  more: Partial<Omit<PlanJob, "id" | "status" | "dependencyIds">> = {},
): PlanJob {
  return {
    id,
    seq: ++seq,
    sandboxId: "s1",
    status,
    dependencyIds: deps,
    policy: "all_succeeded",
    queueKey: null,
    ...more,
  };
}

const changesOf = (jobs: PlanJob[], limit = 4) =>
  Object.fromEntries(planJobs(jobs, limit).changes.map((c) => [c.id, c.status]));

describe("planJobs: dependencies", () => {
  it("a chain moves one step at a time", () => {
    const chain = [job("a", "running"), job("b", "waiting", ["a"]), job("c", "waiting", ["b"])];
    expect(planJobs(chain, 4)).toEqual({ changes: [], start: [] });
    chain[0]!.status = "succeeded";
    expect(planJobs(chain, 4)).toEqual({
      changes: [{ id: "b", status: "queued", failedDependencies: [] }],
      start: ["b"],
    });
  });

  it("a failure upstream fails the whole chain under all_succeeded, and an all_terminal step after it runs", () => {
    const jobs = [
      job("build", "failed"),
      job("test", "waiting", ["build"]),
      job("deploy", "waiting", ["test"]),
      job("cleanup", "waiting", ["deploy"], { policy: "all_terminal" }),
    ];
    const plan = planJobs(jobs, 4);
    expect(plan.changes).toEqual([
      { id: "test", status: "dependency_failed", failedDependencies: ["build"] },
      { id: "deploy", status: "dependency_failed", failedDependencies: ["test"] },
      { id: "cleanup", status: "queued", failedDependencies: [] },
    ]);
    expect(plan.start).toEqual(["cleanup"]);
  });

  it("a diamond runs its join only once both sides succeeded", () => {
    const diamond = [
      job("top", "succeeded"),
      job("left", "running", ["top"]),
      job("right", "succeeded", ["top"]),
      job("join", "waiting", ["left", "right"]),
    ];
    expect(changesOf(diamond)).toEqual({});
    diamond[1]!.status = "succeeded";
    expect(changesOf(diamond)).toEqual({ join: "queued" });
    diamond[1]!.status = "timed_out";
    expect(planJobs(diamond, 4).changes).toEqual([
      { id: "join", status: "dependency_failed", failedDependencies: ["left"] },
    ]);
  });

  it("a diamond with all_terminal at the join runs once both sides ended, however", () => {
    const diamond = [
      job("top", "succeeded"),
      job("left", "failed", ["top"]),
      job("right", "running", ["top"]),
      job("join", "waiting", ["left", "right"], { policy: "all_terminal" }),
    ];
    expect(changesOf(diamond)).toEqual({});
    diamond[2]!.status = "cancelled";
    expect(changesOf(diamond)).toEqual({ join: "queued" });
  });

  it("an unknown dependency id cannot have succeeded", () => {
    expect(planJobs([job("x", "waiting", ["gone"])], 4).changes).toEqual([
      { id: "x", status: "dependency_failed", failedDependencies: ["gone"] },
    ]);
  });
});

describe("planJobs: slots and queue keys", () => {
  it("starts queued jobs in acceptance order up to the per-sandbox limit", () => {
    const jobs = [job("a", "queued"), job("b", "queued"), job("c", "queued"), job("d", "running")];
    expect(planJobs(jobs, 3).start).toEqual(["a", "b"]);
    expect(planJobs(jobs, 1).start).toEqual([]);
  });

  it("counts the limit per sandbox", () => {
    const jobs = [
      job("a", "running"),
      job("b", "queued"),
      job("c", "queued", [], { sandboxId: "s2" }),
      job("d", "cancel_requested", [], { sandboxId: "s2" }),
    ];
    expect(planJobs(jobs, 1).start).toEqual([]);
    expect(planJobs(jobs, 2).start).toEqual(["b", "c"]);
  });

  it("runs jobs sharing a queue key one at a time, in acceptance order", () => {
    const jobs = [
      job("first", "queued", [], { queueKey: "deploy" }),
      job("second", "queued", [], { queueKey: "deploy" }),
      job("other", "queued", [], { queueKey: "lint" }),
      job("free", "queued"),
    ];
    expect(planJobs(jobs, 4).start).toEqual(["first", "other", "free"]);
    jobs[0]!.status = "running";
    expect(planJobs(jobs, 4).start).toEqual(["other", "free"]);
    jobs[0]!.status = "succeeded";
    expect(planJobs(jobs, 4).start).toEqual(["second", "other", "free"]);
  });

  it("a key held in one sandbox does not hold another's", () => {
    const jobs = [
      job("a", "running", [], { queueKey: "k" }),
      job("b", "queued", [], { queueKey: "k", sandboxId: "s2" }),
    ];
    expect(planJobs(jobs, 4).start).toEqual(["b"]);
  });

  it("a later job never overtakes an earlier one with its key that waits for a slot", () => {
    const jobs = [
      job("busy", "running"),
      job("early", "queued", [], { queueKey: "k" }),
      job("late", "queued", [], { queueKey: "k", sandboxId: "s1" }),
    ];
    expect(planJobs(jobs, 1).start).toEqual([]);
    expect(planJobs(jobs, 2).start).toEqual(["early"]);
  });

  it("a job waiting for its dependencies does not hold its queue key", () => {
    const jobs = [
      job("build", "running"),
      job("deploy", "waiting", ["build"], { queueKey: "k" }),
      job("other", "queued", [], { queueKey: "k" }),
    ];
    expect(planJobs(jobs, 4).start).toEqual(["other"]);
  });

  it("a dependency ending frees its dependent before a later job with the same key", () => {
    const jobs = [
      job("build", "succeeded"),
      job("deploy", "waiting", ["build"], { queueKey: "k" }),
      job("next", "queued", [], { queueKey: "k" }),
    ];
    expect(planJobs(jobs, 4)).toEqual({
      changes: [{ id: "deploy", status: "queued", failedDependencies: [] }],
      start: ["deploy"],
    });
  });
});

describe("transitiveDependents", () => {
  it("finds dependents through chains and diamonds, in acceptance order, once each", () => {
    const jobs = [
      job("a", "running"),
      job("b", "waiting", ["a"]),
      job("c", "waiting", ["a"]),
      job("d", "waiting", ["b", "c"]),
      job("e", "queued"),
      job("f", "waiting", ["d"]),
    ];
    expect(transitiveDependents("a", jobs)).toEqual(["b", "c", "d", "f"]);
    expect(transitiveDependents("c", jobs)).toEqual(["d", "f"]);
    expect(transitiveDependents("e", jobs)).toEqual([]);
  });

  it("lists them in acceptance order whatever order they are given in", () => {
    const jobs = [job("a", "running"), job("b", "waiting", ["a"]), job("c", "waiting", ["b"])].reverse();
    expect(transitiveDependents("a", jobs)).toEqual(["b", "c"]);
  });

  it("ends on a cycle (refused at admission: never looped on), never naming the job itself", () => {
    const jobs = [job("a", "waiting", ["c"]), job("b", "waiting", ["a"]), job("c", "waiting", ["b"])];
    expect(transitiveDependents("a", jobs)).toEqual(["b", "c"]);
  });
});

describe("planJobs: order", () => {
  it("starts jobs in acceptance order whatever order they are given in", () => {
    const jobs = [job("a", "queued"), job("b", "queued"), job("c", "queued")].reverse();
    expect(planJobs(jobs, 2).start).toEqual(["a", "b"]);
  });

  it("settles a chain whose dependent was accepted before its dependency (one submission, any order)", () => {
    // x waits on y, accepted after it; y's dependency failed: y fails first, then x.
    const x = job("x", "waiting", ["y"]);
    const y = job("y", "waiting", ["z"]);
    const z = job("z", "failed");
    expect(planJobs([x, y, z], 4).changes).toEqual([
      { id: "y", status: "dependency_failed", failedDependencies: ["z"] },
      { id: "x", status: "dependency_failed", failedDependencies: ["y"] },
    ]);
  });
});

describe("statusOfRun", () => {
  it.each([
    [{ exitCode: 0, signal: null, ending: null }, "succeeded", null],
    [{ exitCode: 3, signal: null, ending: null }, "failed", null],
    [{ exitCode: null, signal: "SIGKILL", ending: null }, "failed", null],
    [{ exitCode: null, signal: "SIGTERM", ending: "timed_out" }, "timed_out", "killed at its timeout (500 ms)"],
    [{ exitCode: 0, signal: null, ending: "cancelled" }, "cancelled", null],
    [
      { exitCode: null, signal: "SIGTERM", ending: "shutdown" },
      "interrupted",
      "the backend shut down while it ran; it was not resumed",
    ],
    [{ exitCode: null, signal: null, ending: null }, "lost", "it ended without an exit status"],
  ] as const)("%j → %s", (end, status, error) => {
    expect(statusOfRun(end, 500)).toEqual({ status, error });
  });
});

describe("submissions are refused with the jobs and names concerned", () => {
  const sub = (jobs: unknown[]) => checkJobSubmitRequest({ request_id: "r1", jobs });

  it("refuses a dependency on an unknown name, naming both", () => {
    expect(
      sub([
        { name: "build", command: "make" },
        { name: "test", command: "make test", depends_on: ["buld"] },
      ]),
    ).toEqual({
      field: "jobs[1].depends_on",
      message: 'unknown dependency: "test" depends on "buld", which is not a job of this request',
      details: { unknown: [{ job: "test", dependency: "buld" }] },
    });
  });

  it.each([
    [[{ name: "a", depends_on: ["a"] }], ["a", "a"]],
    [
      [
        { name: "a", depends_on: ["b"] },
        { name: "b", depends_on: ["a"] },
      ],
      ["a", "b", "a"],
    ],
    [
      [
        { name: "root" },
        { name: "a", depends_on: ["root", "c"] },
        { name: "b", depends_on: ["a"] },
        { name: "c", depends_on: ["b"] },
      ],
      ["a", "c", "b", "a"],
    ],
  ])("refuses the cycle %#", (graph, cycle) => {
    expect(checkJobGraph(graph)).toEqual({
      field: "jobs",
      message: `dependency cycle: ${cycle.map((n) => JSON.stringify(n)).join(" → ")}`,
      details: { cycle },
    });
  });

  it("accepts chains and diamonds", () => {
    expect(
      checkJobGraph([
        { name: "top" },
        { name: "l", depends_on: ["top"] },
        { name: "r", depends_on: ["top"] },
        { name: "join", depends_on: ["l", "r"] },
        { name: "after", depends_on: ["join"] },
      ]),
    ).toBeNull();
  });

  it.each([
    [
      [
        { name: "a", command: "x" },
        { name: "a", command: "y" },
      ],
      "jobs[1].name",
      "is used twice",
    ],
    [[{ name: "a", command: "x", depend_on: ["b"] }], "jobs[0].depend_on", 'unknown field "depend_on"'],
    [[{ name: "a", command: "x", timeout_ms: 3_600_001 }], "jobs[0].timeout_ms", "from 1 to 3600000"],
    [[{ name: "a", command: [] }], "jobs[0].command", "must not be empty"],
    [[{ name: "a b", command: "x" }], "jobs[0].name", "1-63 characters"],
    [[{ name: "a", command: "x", dependency_policy: "any" }], "jobs[0].dependency_policy", "all_succeeded"],
    [
      [
        { name: "a", command: "x", job_id: "j1" },
        { name: "b", command: "x", job_id: "j1" },
      ],
      "jobs[1].job_id",
      "used twice",
    ],
    [[{ name: "a", command: "x", working_dir: "/etc" }], "jobs[0].working_dir", "inside /workspace"],
  ])("refuses %j at %s", (jobs, field, words) => {
    const problem = sub(jobs);
    expect(problem?.field).toBe(field);
    expect(problem?.message).toContain(words);
  });

  it("refuses a missing request_id and an empty job list", () => {
    expect(checkJobSubmitRequest({ jobs: [{ name: "a", command: "x" }] })?.field).toBe("request_id");
    expect(checkJobSubmitRequest({ request_id: "r", jobs: [] })?.field).toBe("jobs");
  });
});
