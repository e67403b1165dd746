// API calls for jobs (docs/protocol.md, "Jobs"). A submission is a receipt and goes
// through src/cli/dispatch.ts (sent once); these are the reads and the cancel.

import type { JobCancelAnswer, JobList, JobRecord, JobStatus } from "../protocol/jobs.js";
import { routePath } from "../protocol/routes.js";
import type { HttpObserved } from "./observed.js";
import { answerOrThrow } from "./api.js";
import type { Requests, SendRequest } from "./http.js";

export interface JobReadOptions {
  /** Output chunks after this seq (a follower's cursor); the wait also ends when some arrive. */
  afterSeq?: number;
  /** Raw output bytes at most; 0: none. */
  outputLimit?: number;
  /** Server-side wait (≤ 25 s) for the job to end. */
  waitMs?: number;
}

export class JobsApi {
  constructor(readonly http: Requests) {}

  private async call<T>(what: string, req: SendRequest): Promise<T> {
    return answerOrThrow(await this.http.send({ deadlineMs: 30_000, ...req }), what, req.method).body as T;
  }

  list(
    sandbox: string,
    filter: { requestId?: string; status?: JobStatus; idPrefix?: string; waitMs?: number } = {},
  ): Promise<JobList> {
    return this.call("list jobs", {
      method: "GET",
      path: routePath(
        "jobs.list",
        { id: sandbox },
        { request_id: filter.requestId, status: filter.status, id_prefix: filter.idPrefix, wait_ms: filter.waitMs },
      ),
      deadlineMs: (filter.waitMs ?? 0) + 30_000,
    });
  }

  get(sandbox: string, id: string, opts: JobReadOptions = {}): Promise<JobRecord> {
    return this.call(`job ${id}`, {
      method: "GET",
      path: routePath(
        "jobs.get",
        { id: sandbox, jid: id },
        { after_seq: opts.afterSeq, output_limit: opts.outputLimit, wait_ms: opts.waitMs },
      ),
      deadlineMs: (opts.waitMs ?? 0) + 30_000,
    });
  }

  /** Asks for a cancel, sent once with a key. The answer is not proof of the end: read until terminal. */
  cancel(sandbox: string, id: string, dependents: boolean, idempotencyKey: string): Promise<JobCancelAnswer> {
    return this.call(`cancel ${id}`, {
      method: "POST",
      path: routePath("jobs.cancel", { id: sandbox, jid: id }),
      body: Buffer.from(JSON.stringify(dependents ? { dependents: true } : {})),
      idempotencyKey,
    });
  }

  /** The jobs a request id admitted: the raw observation of the list answer, for a receipt. */
  observeRequest(sandbox: string, requestId: string, deadlineMs: number): Promise<HttpObserved> {
    return this.http.send({
      method: "GET",
      path: routePath("jobs.list", { id: sandbox }, { request_id: requestId }),
      deadlineMs,
    });
  }
}
