// Waiting for jobs and following a job's output: server-side waits of at most 25 s,
// repeated. A local deadline only stops the waiting, never the jobs. A read that
// fails to reach the backend is tried again a few times (reads may be repeated;
// nothing is ever submitted again).

import type { JobsApi } from "../../../client/jobs.js";
import {
  isTerminalJobStatus,
  JOB_OUTPUT_PAGE_DEFAULT,
  JOB_WAIT_MAX_MS,
  type JobOutputChunk,
  type JobRecord,
  type JobSummary,
} from "../../../protocol/jobs.js";
import type { Context } from "../../context.js";
import { BackendError, SbxError } from "../../../common/errors.js";
import type { JobsWaitEnd } from "./outcome.js";
import { formatDuration } from "../../../common/duration.js";
import { JOBS_WAIT_DEFAULT_MS } from "../../wait-bounds.js";

/** How long a jobs wait waits: --timeout, or the default bound (wait-bounds.ts). */
export interface JobsWaitBound {
  timeoutMs: number;
  /** No --timeout was given: the bound is the default one. */
  defaulted: boolean;
}

export function jobsWaitBound(timeoutMs: number | null): JobsWaitBound {
  return timeoutMs === null ? { timeoutMs: JOBS_WAIT_DEFAULT_MS, defaulted: true } : { timeoutMs, defaulted: false };
}

function boundText(bound: JobsWaitBound): string {
  return `${formatDuration(bound.timeoutMs)} (${bound.defaulted ? "the default bound; " : ""}--timeout to change)`;
}

/** On a terminal, before waiting: what is waited for, and for how long at most. */
export function sayWaiting(ctx: Context, what: string, bound: JobsWaitBound): void {
  if (ctx.io.stderrIsTTY) ctx.io.info(`sbx: waiting up to ${boundText(bound)} for ${what}`);
}

/** The bound passed (exit 124): said, with how to wait again. Nothing is cancelled. */
export function sayBoundPassed(ctx: Context, bound: JobsWaitBound, again: string): void {
  ctx.io.err(
    `sbx: stopped waiting after ${boundText(bound)}; nothing was cancelled, the jobs keep running. Wait again: ${again}`,
  );
}

/** How long reads go on failing to reach the backend (e.g. while it restarts) before giving up. */
const UNREACHABLE_FOR_MS = 30_000;
const READ_RETRY_PAUSE_MS = 1000;

export class Interrupted extends Error {}

/**
 * One read, tried again while the backend cannot be reached (it answered this command
 * before and may be restarting). Only for a backend that has answered: each caller has
 * had its answer first (the submission, the lookup of the jobs), so a wrong profile
 * fails there at once (75) and never waits here. Throws Interrupted on Ctrl-C.
 */
export async function read<T>(ctx: Context, fn: () => Promise<T>): Promise<T> {
  let giveUpAt: number | null = null;
  for (;;) {
    if (ctx.interrupt.aborted) throw new Interrupted();
    try {
      return await fn();
    } catch (err) {
      if (err instanceof SbxError && err.code === "interrupted") throw new Interrupted();
      const unreachable = err instanceof BackendError && err.status === null;
      giveUpAt ??= Date.now() + UNREACHABLE_FOR_MS;
      if (!unreachable || Date.now() >= giveUpAt) throw err;
      ctx.io.info(`sbx: ${(err as Error).message}; reading again`);
      await new Promise((r) => setTimeout(r, READ_RETRY_PAUSE_MS));
    }
  }
}

/** A job record without its output page: what lists and documents of several jobs carry. */
export function summaryOf(record: JobRecord): JobSummary {
  const { output: _output, output_next_seq: _next, wait_timeout: _wait, ...summary } = record;
  return summary;
}

/**
 * Waits until every job has ended, the deadline (ms since the epoch) passed, or the
 * user interrupted. `onProgress` sees the jobs as last read. The backend has answered
 * the caller about these jobs, so a restart is read through from the first read on.
 */
export async function waitForJobs(
  ctx: Context,
  api: JobsApi,
  sandbox: string,
  ids: readonly string[],
  deadlineAt: number | null,
  onProgress?: (jobs: JobSummary[]) => void,
): Promise<{ jobs: JobSummary[]; end: JobsWaitEnd }> {
  const latest = new Map<string, JobSummary>();
  const snapshot = () => ids.map((id) => latest.get(id)!);
  try {
    const get = async (id: string, waitMs?: number) =>
      summaryOf(
        await read(ctx, () => api.get(sandbox, id, { outputLimit: 0, ...(waitMs !== undefined && { waitMs }) })),
      );
    for (const id of ids) latest.set(id, await get(id));
    for (;;) {
      onProgress?.(snapshot());
      const pending = ids.filter((id) => !isTerminalJobStatus(latest.get(id)!.status));
      if (pending.length === 0) return { jobs: snapshot(), end: "done" };
      const left = deadlineAt === null ? JOB_WAIT_MAX_MS : deadlineAt - Date.now();
      if (left <= 0) return { jobs: snapshot(), end: "deadline" };
      const [first, ...rest] = pending;
      const waitMs = Math.max(1, Math.min(JOB_WAIT_MAX_MS, left));
      latest.set(first!, await get(first!, waitMs));
      // The others may have ended meanwhile: one quick read each.
      for (const id of rest) latest.set(id, await get(id));
    }
  } catch (err) {
    if (err instanceof Interrupted)
      return { jobs: ids.filter((id) => latest.has(id)).map((id) => latest.get(id)!), end: "interrupted" };
    throw err;
  }
}

export interface OutputSinks {
  chunk(chunk: JobOutputChunk, data: Buffer): void;
  /** Bytes of the job's output not kept (the middle past its budget), before the next chunk. */
  omitted(bytes: number): void;
}

/**
 * Reads a job's kept output from the start, in order; with `follow`, until the job
 * ended and everything was read. Returns the job as last read, or null when interrupted.
 * The backend has answered the caller about this job (see waitForJobs).
 */
export async function readJobOutput(
  ctx: Context,
  api: JobsApi,
  sandbox: string,
  jobId: string,
  follow: boolean,
  sinks: OutputSinks,
): Promise<JobRecord | null> {
  let after = 0;
  let expectedOffset = 0;
  try {
    for (;;) {
      const job = await read(ctx, () =>
        api.get(sandbox, jobId, {
          afterSeq: after,
          outputLimit: JOB_OUTPUT_PAGE_DEFAULT,
          ...(follow && { waitMs: JOB_WAIT_MAX_MS }),
        }),
      );
      for (const c of job.output) {
        if (c.offset > expectedOffset) sinks.omitted(c.offset - expectedOffset);
        const data = Buffer.from(c.data, "base64");
        sinks.chunk(c, data);
        expectedOffset = c.offset + data.length;
      }
      after = job.output_next_seq;
      if (job.output.length > 0) continue;
      if (!follow || isTerminalJobStatus(job.status)) return job;
    }
  } catch (err) {
    if (err instanceof Interrupted) return null;
    throw err;
  }
}
