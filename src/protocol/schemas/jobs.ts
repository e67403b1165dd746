// Wire schemas of jobs (docs/protocol.md, "Jobs"), each declared once (see base.ts);
// jobs.ts re-exports their types beside the checks of a submission.

import {
  Base64,
  Command,
  Count,
  CommandUsage,
  EndReason,
  described,
  Env,
  named,
  Nullable,
  type Static,
  StringEnum,
  Timestamp,
  Type,
} from "./base.js";
import {
  DEPENDENCY_POLICIES,
  JOB_ID_MAX_LENGTH,
  JOB_STATUSES_ALL,
  JOB_TIMEOUT_DEFAULT_MS,
  JOB_TIMEOUT_MAX_MS,
  JOBS_PER_REQUEST_MAX,
} from "../jobs.js";
import { IDEMPOTENCY_KEY_PATTERN, NAME_PATTERN } from "../types.js";

export const JobStatus = named("JobStatus", StringEnum(JOB_STATUSES_ALL));

const JobId = Type.String({ pattern: `^[A-Za-z0-9_:.-]{1,${JOB_ID_MAX_LENGTH}}$` });

export const JobSpec = named(
  "JobSpec",
  Type.Object(
    {
      job_id: Type.Optional(
        described(JobId, "Chosen by the client; otherwise derived from the request id and the job's index."),
      ),
      name: Type.String({ pattern: NAME_PATTERN }),
      command: Command,
      working_dir: Type.Optional(Type.String()),
      env: Type.Optional(Env),
      stdin: Type.Optional(Base64({ description: "Written once to stdin; otherwise stdin is /dev/null." })),
      timeout_ms: Type.Optional(
        Type.Integer({ minimum: 1, maximum: JOB_TIMEOUT_MAX_MS, default: JOB_TIMEOUT_DEFAULT_MS }),
      ),
      depends_on: Type.Optional(
        Type.Array(Type.String(), { uniqueItems: true, description: "Names of jobs of the same request." }),
      ),
      dependency_policy: Type.Optional(StringEnum(DEPENDENCY_POLICIES, { default: "all_succeeded" })),
      queue_key: Type.Optional(
        Type.String({
          pattern: IDEMPOTENCY_KEY_PATTERN,
          description: "Jobs of a sandbox sharing a key run one at a time, in acceptance order.",
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type JobSpec = Static<typeof JobSpec>;

export const JobSubmitRequest = named(
  "JobSubmitRequest",
  Type.Object(
    {
      request_id: Type.String({
        pattern: IDEMPOTENCY_KEY_PATTERN,
        description: "The submission's idempotency identity.",
      }),
      jobs: Type.Array(JobSpec, { minItems: 1, maxItems: JOBS_PER_REQUEST_MAX }),
    },
    { additionalProperties: false },
  ),
);
export type JobSubmitRequest = Static<typeof JobSubmitRequest>;

export const JobSubmitItem = named(
  "JobSubmitItem",
  Type.Object({ job_id: Type.String(), name: Type.String(), status: JobStatus }),
);
export type JobSubmitItem = Static<typeof JobSubmitItem>;

/** POST …/jobs → 201 */
export const JobSubmitAnswer = named(
  "JobSubmitAnswer",
  Type.Object({ request_id: Type.String(), sandbox_id: Type.String(), jobs: Type.Array(JobSubmitItem) }),
);
export type JobSubmitAnswer = Static<typeof JobSubmitAnswer>;

const jobSummaryFields = {
  job_id: Type.String(),
  request_id: Type.String(),
  sandbox_id: Type.String(),
  name: Type.String(),
  status: JobStatus,
  command: Command,
  working_dir: Type.String(),
  timeout_ms: Type.Integer(),
  depends_on: Type.Array(Type.String()),
  dependency_policy: StringEnum(DEPENDENCY_POLICIES),
  queue_key: Nullable(Type.String()),
  exit_code: Nullable(Type.Integer()),
  signal: Nullable(Type.String()),
  error: Nullable(Type.String(), {
    description: "Why it ended as it did, when its exit status does not say (dependency_failed, interrupted, lost, …).",
  }),
  end_reason: Type.Optional(
    Nullable(EndReason, { description: "out_of_memory: the kernel killed it at its sandbox's memory limit (sbx)." }),
  ),
  usage: Type.Optional(
    Nullable(CommandUsage, {
      description:
        'What it used, measured for it alone (docs/operations.md, "Per-command usage"); null until it ended, when it never started, or for a record from before usage was measured (sbx).',
    }),
  ),
  leftover_processes: Type.Array(Type.String(), {
    description: "Processes its main process left behind, killed when the run was wrapped up (command names).",
  }),
  created_at: Timestamp(),
  started_at: Nullable(Timestamp()),
  finished_at: Nullable(Timestamp()),
  output_bytes: Count({ description: "Output bytes the job produced (both streams)." }),
  output_omitted_bytes: Count({
    description: "Bytes omitted from the middle of the kept output (past the per-job budget).",
  }),
};

/** A job without its output: list items, and the head of a job record. */
export const JobSummary = named("JobSummary", Type.Object(jobSummaryFields));
export type JobSummary = Static<typeof JobSummary>;

export type JobStream = "stdout" | "stderr";

export const JobOutputChunk = named(
  "JobOutputChunk",
  Type.Object({
    seq: Type.Integer({
      minimum: 1,
      description: "Strictly increasing per job; chunks of the omitted middle are missing.",
    }),
    stream: StringEnum(["stdout", "stderr"]),
    offset: Count({ description: "Byte position of this chunk in the job's whole output (both streams, in order)." }),
    data: Base64(),
  }),
);
export type JobOutputChunk = Static<typeof JobOutputChunk>;

/** GET …/jobs/{job_id}?after_seq=N */
export const JobRecord = named(
  "JobRecord",
  Type.Object({
    ...jobSummaryFields,
    output: Type.Array(JobOutputChunk, { description: "Chunks after `after_seq`, oldest first, up to the page size." }),
    output_next_seq: Count({ description: "Pass as `after_seq` to read on." }),
    wait_timeout: Type.Optional(Type.Boolean({ description: "A server-side wait ran out before the job ended." })),
  }),
);
export type JobRecord = Static<typeof JobRecord>;

/** GET …/jobs */
export const JobList = named(
  "JobList",
  Type.Object({ jobs: Type.Array(JobSummary), wait_timeout: Type.Optional(Type.Boolean()) }),
);
export type JobList = Static<typeof JobList>;

export const JobCancelRequest = named(
  "JobCancelRequest",
  Type.Object(
    {
      dependents: Type.Optional(
        Type.Boolean({ description: "Also cancel every job that depends on it, directly or not." }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type JobCancelRequest = Static<typeof JobCancelRequest>;

/** POST …/jobs/{job_id}/cancel → 202 */
export const JobCancelAnswer = named(
  "JobCancelAnswer",
  Type.Object({
    job_id: Type.String(),
    status: described(
      JobStatus,
      "`cancel_requested` while its processes are being ended; `cancelled` when it had not started.",
    ),
    dependents: Type.Array(JobSubmitItem, { description: "The dependents cancelled with it (`dependents: true`)." }),
  }),
);
export type JobCancelAnswer = Static<typeof JobCancelAnswer>;
