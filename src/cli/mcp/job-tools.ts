// job_submit / job_run / job_read / await / cancel: `sbx jobs` for a model. A
// submission is a receipt whose request_id is its identity (as `sbx jobs submit`); an
// await whose timeout passes only stops waiting; a cancel says cancel_requested until
// the job's processes are gone.

import { type Static, Type } from "@sinclair/typebox";
import { JobsApi } from "../../client/jobs.js";
import { ProcessesApi } from "../../client/processes.js";
import { UsageError } from "../../common/errors.js";
import {
  checkJobSubmitRequest,
  isTerminalJobStatus,
  JOB_TIMEOUT_MAX_MS,
  JOB_WAIT_MAX_MS,
  JOBS_PER_REQUEST_MAX,
  type JobRecord,
  type JobSpec,
  type JobSubmitRequest,
} from "../../protocol/jobs.js";
import { PROCESS_LOG_WAIT_MAX_MS } from "../../protocol/types.js";
import { recordJobEnds } from "../commands/jobs/submission.js";
import { jobIdFor } from "../commands/jobs/target.js";
import { summaryOf } from "../commands/jobs/waiting.js";
import { dispatchNew } from "../dispatch.js";
import { CommandArgs, commandOf, cwdOf, sandboxOf } from "./command-tools.js";
import { ReceiptIdsField, receipted } from "./evidence.js";
import { ReceiptFields, receiptFields, unrecordedText, unsettledText } from "./outcome.js";
import { bound, defineTool, IdempotencyKeyArg, Nullable, type ToolCall, toolKey, receiptTag } from "./tool.js";

const AWAIT_MAX_MS = 600_000;

const RequestIdArg = Type.Optional(
  Type.String({
    pattern: "^[A-Za-z0-9_:.-]{1,255}$",
    description:
      "The submission's identity. Reuse it when you retry the SAME submission after a lost or unclear answer: a request id never admits twice. Omitted: a fresh one.",
  }),
);

const JobInput = Type.Object(
  {
    name: Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$", description: "Unique in its submission." }),
    job_id: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9_:.-]{1,128}$", description: "Your id for it." })),
    argv: CommandArgs.argv,
    shell: CommandArgs.shell,
    cwd: CommandArgs.cwd,
    env: CommandArgs.env,
    stdin: Type.Optional(Type.String({ description: "Text written once to its stdin." })),
    timeout_ms: Type.Optional(
      Type.Integer({ minimum: 1, maximum: JOB_TIMEOUT_MAX_MS, description: "Default 30 min." }),
    ),
    depends_on: Type.Optional(
      Type.Array(Type.Union([Type.String(), Type.Object({ name: Type.String() })]), {
        description: 'Jobs of the same submission it waits for: [{"name": "build"}] (or ["build"]).',
      }),
    ),
    dependency_policy: Type.Optional(
      Type.Union([Type.Literal("all_succeeded"), Type.Literal("all_terminal")], {
        description: "all_succeeded (default: a failed dependency fails it) or all_terminal (runs anyway).",
      }),
    ),
    queue_key: Type.Optional(
      Type.String({
        pattern: "^[A-Za-z0-9_:.-]{1,255}$",
        description: "Jobs of a sandbox sharing a key run one at a time, in acceptance order.",
      }),
    ),
  },
  { additionalProperties: false },
);

function specOf(job: Static<typeof JobInput>): JobSpec {
  const cwd = cwdOf(job.cwd);
  return {
    name: job.name,
    command: commandOf(job),
    ...(job.job_id === undefined ? {} : { job_id: job.job_id }),
    ...(cwd === undefined ? {} : { working_dir: cwd }),
    ...(job.env === undefined ? {} : { env: job.env }),
    ...(job.stdin === undefined ? {} : { stdin: Buffer.from(job.stdin, "utf8").toString("base64") }),
    ...(job.timeout_ms === undefined ? {} : { timeout_ms: job.timeout_ms }),
    ...(job.depends_on === undefined
      ? {}
      : { depends_on: job.depends_on.map((d) => (typeof d === "string" ? d : d.name)) }),
    ...(job.dependency_policy === undefined ? {} : { dependency_policy: job.dependency_policy }),
    ...(job.queue_key === undefined ? {} : { queue_key: job.queue_key }),
  };
}

const JobState = Type.Object({
  job_id: Type.String(),
  name: Type.String(),
  status: Type.String({
    description:
      "queued, waiting, running, cancel_requested (not ended), or succeeded, failed, cancelled, timed_out, dependency_failed, interrupted, lost.",
  }),
  exit_code: Nullable(Type.Integer()),
  signal: Nullable(Type.String()),
  error: Nullable(Type.String()),
});

const jobState = (j: Static<typeof JobState>) => ({
  job_id: j.job_id,
  name: j.name,
  status: j.status,
  exit_code: j.exit_code,
  signal: j.signal,
  error: j.error,
});

const jobsApi = async (call: ToolCall) => new JobsApi((await call.api()).http);

/** Sends the submission once, its receipt committed first; then reads what it admitted. */
async function submitJobs(
  call: ToolCall,
  sandbox: string,
  request: JobSubmitRequest,
  kind: "jobs_submit" | "jobs_run" = "jobs_submit",
) {
  const problem = checkJobSubmitRequest(request);
  if (problem) throw new UsageError(problem.message, "nothing was sent");
  const outcome = await dispatchNew(call.ctx, call.endpoint, await call.api(), {
    kind,
    sandbox,
    body: Buffer.from(JSON.stringify(request)),
    key: request.request_id,
    clientTimeoutMs: 30_000,
    mcp: receiptTag(call),
  });
  // Admitted: the answer named the request's jobs (whatever they did since).
  const admitted =
    outcome.document.request_id !== null
      ? (await (await jobsApi(call)).list(sandbox, { requestId: request.request_id })).jobs
      : null;
  return { outcome, admitted };
}

/** The structured and text answer of a submission that admitted nothing known. */
function notAdmitted(outcome: Awaited<ReturnType<typeof submitJobs>>["outcome"], requestId: string) {
  return {
    structured: { ...receiptFields(outcome), request_id: requestId, jobs: [] },
    text: unsettledText(outcome.document) + unrecordedText(outcome),
    isError: true,
  };
}

const SubmitInput = Type.Object(
  {
    sandbox: CommandArgs.sandbox,
    jobs: Type.Array(JobInput, { minItems: 1, maxItems: JOBS_PER_REQUEST_MAX }),
    request_id: RequestIdArg,
  },
  { additionalProperties: false },
);

const SubmittedOutput = Type.Object({
  ...ReceiptFields,
  request_id: Type.String(),
  jobs: Type.Array(JobState),
});

export const jobSubmit = defineTool({
  name: "job_submit",
  title: "Submit jobs",
  description:
    "Submits one or more jobs (one-shot commands, up to 1 h each) with dependencies (depends_on, dependency_policy) and queue keys, and returns at once with their job ids. " +
    "A durable receipt is written before it is sent; its request_id is its identity, so sending the same request_id again never admits twice. " +
    "Follow them with await and job_read; stop one with cancel.",
  input: SubmitInput,
  output: SubmittedOutput,
  mutating: true,
  async run(args: Static<typeof SubmitInput>, call) {
    const sandbox = sandboxOf(args, call);
    const request = { request_id: toolKey("job_submit", args.request_id), jobs: args.jobs.map(specOf) };
    const { outcome, admitted } = await submitJobs(call, sandbox, request);
    if (admitted === null) return notAdmitted(outcome, request.request_id);
    return {
      structured: { ...receiptFields(outcome), request_id: request.request_id, jobs: admitted.map(jobState) },
      text:
        [
          `${outcome.replayed ? "already admitted, nothing new" : "admitted"}: request ${request.request_id} (${outcome.document.receipt_id})`,
          ...admitted.map((j) => `${j.job_id}\t${j.name}\t${j.status}`),
        ].join("\n") + unrecordedText(outcome),
    };
  },
});

/** A job's output page split by stream, bounded, with the cursor to read on. */
function outputOf(record: JobRecord, maxBytes: number) {
  const of = (stream: "stdout" | "stderr") =>
    Buffer.concat(record.output.filter((c) => c.stream === stream).map((c) => Buffer.from(c.data, "base64"))).toString(
      "utf8",
    );
  const last = record.output.at(-1);
  const reached = last === undefined ? null : last.offset + Buffer.from(last.data, "base64").length;
  return {
    stdout: bound(of("stdout"), maxBytes).text,
    stderr: bound(of("stderr"), maxBytes).text,
    output_next_seq: record.output_next_seq,
    more_output: reached !== null && reached < record.output_bytes,
    output_omitted_bytes: record.output_omitted_bytes,
  };
}

const OutputFields = {
  stdout: Type.String(),
  stderr: Type.String(),
  output_next_seq: Type.Integer({ minimum: 0, description: "Pass as after_seq to job_read to read on." }),
  more_output: Type.Boolean({ description: "More output is there past this page: read on with job_read." }),
  output_omitted_bytes: Type.Integer({
    minimum: 0,
    description: "Bytes the backend left out of the middle (each job keeps its first and last 4 MiB).",
  }),
};

/** Waits until every handle (job or process) ended or the timeout passed; nothing is cancelled. */
async function awaitAll(call: ToolCall, sandbox: string, handles: string[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  const jobs = await jobsApi(call);
  const processes = new ProcessesApi(jobs.http);
  const states = new Map<string, { handle: string; kind: string; status: string; exit_code: number | null }>();
  const remaining = () => Math.max(0, deadline - Date.now());
  for (;;) {
    for (const handle of handles) {
      if (states.get(handle)?.status === "ended") continue;
      if (handle.startsWith("prc_")) {
        const r = await processes.result(sandbox, handle, Math.min(remaining(), PROCESS_LOG_WAIT_MAX_MS));
        states.set(handle, {
          handle,
          kind: "process",
          status: r.complete ? r.outcome : "running",
          exit_code: r.exit_code,
        });
      } else {
        const id = await jobIdFor(jobs, sandbox, handle);
        const j = await jobs.get(sandbox, id, { waitMs: Math.min(remaining(), JOB_WAIT_MAX_MS), outputLimit: 0 });
        states.set(handle, { handle: j.job_id, kind: "job", status: j.status, exit_code: j.exit_code });
      }
    }
    const items = handles.map((h) => states.get(h)!);
    const ended = items.every((s) =>
      s.kind === "job" ? isTerminalJobStatus(s.status as never) : s.status !== "running",
    );
    if (ended || remaining() === 0 || call.ctx.interrupt.aborted) return { ended, items };
  }
}

const AwaitInput = Type.Object(
  {
    handles: Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      maxItems: 64,
      description: "Job ids (job_…) and process handles (prc_…) to wait for.",
    }),
    sandbox: CommandArgs.sandbox,
    timeout_ms: Type.Integer({
      minimum: 0,
      maximum: AWAIT_MAX_MS,
      description: "How long to wait. When it passes, the waiting stops: nothing is cancelled.",
    }),
  },
  { additionalProperties: false },
);

export const awaitTool = defineTool({
  name: "await",
  title: "Wait for jobs and processes",
  description:
    "Waits until every job and process named has ended, or timeout_ms passed. A timeout only stops the waiting: nothing is cancelled, and `ended: false` says some still run. Safe to repeat.",
  input: AwaitInput,
  output: Type.Object({
    ended: Type.Boolean({ description: "Every one has ended." }),
    items: Type.Array(
      Type.Object({
        handle: Type.String(),
        kind: Type.String(),
        status: Type.String(),
        exit_code: Nullable(Type.Integer()),
      }),
    ),
  }),
  mutating: false,
  async run(args: Static<typeof AwaitInput>, call) {
    const result = await awaitAll(call, sandboxOf(args, call), args.handles, args.timeout_ms);
    const lines = result.items.map(
      (s) => `${s.handle}\t${s.status}${s.exit_code === null ? "" : `\texit ${s.exit_code}`}`,
    );
    const head = result.ended ? "all ended" : "not all ended when the wait stopped (nothing was cancelled)";
    return { structured: result, text: [head, ...lines].join("\n") };
  },
});

const RunInput = Type.Object(
  {
    ...CommandArgs,
    name: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$", description: "Default `run`." })),
    stdin: Type.Optional(Type.String({ description: "Text written once to its stdin." })),
    timeout_ms: Type.Optional(
      Type.Integer({ minimum: 1, maximum: JOB_TIMEOUT_MAX_MS, description: "Its kill deadline; default 30 min." }),
    ),
    queue_key: JobInput.properties.queue_key,
    yield_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: AWAIT_MAX_MS,
        description: "How long to wait for its end before returning (default 60000); it keeps running past it.",
      }),
    ),
    request_id: RequestIdArg,
  },
  { additionalProperties: false },
);

export const jobRun = defineTool({
  name: "job_run",
  title: "Run one job",
  description:
    "Runs one command as a job (up to 1 h, longer than run_command allows), waits up to yield_ms for its end, and returns its status and output. " +
    "A status that has not ended (queued, running) is not a result: follow it with await / job_read. A receipt is written before it is sent; to retry after a lost answer, send the same request_id.",
  input: RunInput,
  output: Type.Object({
    ...ReceiptFields,
    request_id: Type.String(),
    job: Nullable(JobState),
    ended: Type.Boolean(),
    ...OutputFields,
  }),
  mutating: true,
  async run(args: Static<typeof RunInput>, call) {
    const sandbox = sandboxOf(args, call);
    const { yield_ms: yieldMs, request_id: requestId, sandbox: _s, ...job } = args;
    const request = { request_id: toolKey("job_run", requestId), jobs: [specOf({ ...job, name: job.name ?? "run" })] };
    const { outcome, admitted } = await submitJobs(call, sandbox, request, "jobs_run");
    const id = admitted?.[0]?.job_id;
    if (id === undefined) {
      const failed = notAdmitted(outcome, request.request_id);
      const empty = { job: null, ended: false, stdout: "", stderr: "", output_next_seq: 0, more_output: false };
      return { ...failed, structured: { ...failed.structured, ...empty, output_omitted_bytes: 0 } };
    }
    const { ended } = await awaitAll(call, sandbox, [id], yieldMs ?? 60_000);
    const record = await (await jobsApi(call)).get(sandbox, id, { outputLimit: call.settings.maxOutputBytes });
    const output = outputOf(record, call.settings.maxOutputBytes);
    const state = jobState(record);
    // The receipt settles to the job's outcome once it ended, as `sbx jobs run`'s does.
    const settled = ended ? await recordJobEnds(call.ctx, outcome.document.receipt_id, [summaryOf(record)]) : null;
    const receipt = receiptFields(settled === null ? outcome : { ...outcome, document: settled });
    return {
      structured: { ...receipt, request_id: request.request_id, job: state, ended, ...output },
      text: [
        `${state.job_id} ${state.status}${state.exit_code === null ? "" : ` (exit ${state.exit_code})`}${ended ? "" : ": not ended; follow it with await or job_read"}`,
        output.stdout === "" ? "" : `--- stdout ---\n${output.stdout}`,
        output.stderr === "" ? "" : `--- stderr ---\n${output.stderr}`,
      ]
        .filter((l) => l !== "")
        .join("\n"),
    };
  },
});

const ReadInput = Type.Object(
  {
    job_id: Type.String({ minLength: 1, description: "A job id (job_…), or a unique prefix of one." }),
    sandbox: CommandArgs.sandbox,
    after_seq: Type.Optional(Type.Integer({ minimum: 0, description: "Read output after this seq (default 0)." })),
  },
  { additionalProperties: false },
);

export const jobRead = defineTool({
  name: "job_read",
  title: "Read a job",
  description:
    "Reads a job: its status, exit code and output from after_seq on (bounded; read on with output_next_seq). Reads only.",
  input: ReadInput,
  output: Type.Object({ ...JobState.properties, ...OutputFields }),
  mutating: false,
  async run(args: Static<typeof ReadInput>, call) {
    const sandbox = sandboxOf(args, call);
    const jobs = await jobsApi(call);
    const record = await jobs.get(sandbox, await jobIdFor(jobs, sandbox, args.job_id), {
      afterSeq: args.after_seq ?? 0,
      outputLimit: call.settings.maxOutputBytes,
    });
    const output = outputOf(record, call.settings.maxOutputBytes);
    return {
      structured: { ...jobState(record), ...output },
      text: [
        `${record.job_id} ${record.status}${record.exit_code === null ? "" : ` (exit ${record.exit_code})`}${record.error ? `: ${record.error}` : ""}`,
        output.stdout === "" ? "" : `--- stdout ---\n${output.stdout}`,
        output.stderr === "" ? "" : `--- stderr ---\n${output.stderr}`,
      ]
        .filter((l) => l !== "")
        .join("\n"),
    };
  },
});

const CancelInput = Type.Object(
  {
    job_id: Type.String({ minLength: 1, description: "A job id (job_…), or a unique prefix of one." }),
    sandbox: CommandArgs.sandbox,
    dependents: Type.Optional(Type.Boolean({ description: "Also cancel every job that depends on it." })),
    idempotency_key: IdempotencyKeyArg,
  },
  { additionalProperties: false },
);

export const cancelTool = defineTool({
  name: "cancel",
  title: "Cancel a job",
  description:
    "Asks the backend to cancel a job (and, with dependents, what depends on it). status cancel_requested means its processes are being ended: it is not cancelled until await or job_read says cancelled. Safe to repeat.",
  input: CancelInput,
  output: Type.Object({
    job_id: Type.String(),
    status: Type.String(),
    dependents: Type.Array(Type.Object({ job_id: Type.String(), name: Type.String(), status: Type.String() })),
    ...ReceiptIdsField,
  }),
  mutating: true,
  async run(args: Static<typeof CancelInput>, call) {
    const sandbox = sandboxOf(args, call);
    const jobs = new JobsApi(receipted(call, sandbox, (await call.api()).http));
    const id = await jobIdFor(jobs, sandbox, args.job_id);
    const answer = await jobs.cancel(sandbox, id, args.dependents === true, toolKey("cancel", args.idempotency_key));
    const note =
      answer.status === "cancel_requested"
        ? `; its processes are being ended: not cancelled until await {"handles": ["${id}"], "timeout_ms": 30000} says so`
        : "";
    return { structured: { ...answer, receipt_ids: call.receipts }, text: `${answer.job_id} ${answer.status}${note}` };
  },
});
