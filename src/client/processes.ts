// API calls for supervised processes (docs/protocol.md, "Supervised processes").

import { BackendError } from "../common/errors.js";
import {
  type Handle,
  PROCESS_LOG_LIMIT_MAX,
  type ProcessList,
  type ProcessLogChunk,
  type ProcessRecord,
  type ProcessResult,
  type ProcessSignalAnswer,
  type ProcessStdinAnswer,
  type ProcessStream,
} from "../protocol/types.js";
import { routePath } from "../protocol/routes.js";
import { answerOrThrow } from "./api.js";
import type { Requests, SendRequest } from "./http.js";
import { openRawRead, type RawPiece } from "./raw-read.js";

/** One read of a process's log: where, from which offset, how much, and how long to wait for bytes. */
export interface LogRead {
  sandbox: string;
  id: string;
  stream: ProcessStream;
  offset: number;
  limit: number;
  waitMs: number;
}

function logsPath(r: LogRead): string {
  return routePath(
    "process.logs",
    { id: r.sandbox, pid: r.id },
    { stream: r.stream, offset: r.offset, limit: r.limit, wait_ms: r.waitMs },
  );
}

export class ProcessesApi {
  /** The backend refused a raw read past PROCESS_LOG_LIMIT_MAX (it predates larger raw reads). */
  private rawLimitRefused = false;

  constructor(readonly http: Requests) {}

  private async call<T>(what: string, req: SendRequest): Promise<T> {
    return answerOrThrow(await this.http.send({ deadlineMs: 30_000, ...req }), what, req.method).body as T;
  }

  async list(sandbox: string): Promise<ProcessRecord[]> {
    return (
      await this.call<ProcessList>("list processes", {
        method: "GET",
        path: routePath("processes.list", { id: sandbox }),
      })
    ).processes;
  }

  get(sandbox: string, id: string): Promise<ProcessRecord> {
    return this.call(`process ${id}`, { method: "GET", path: routePath("process.get", { id: sandbox, pid: id }) });
  }

  /** Its result, long-polling up to waitMs for its end; `signal` stops the wait (a read: nothing is sent to it). */
  result(sandbox: string, id: string, waitMs = 0, signal?: AbortSignal): Promise<ProcessResult> {
    return this.call(`result of ${id}`, {
      method: "GET",
      path: routePath("process.result", { id: sandbox, pid: id }, { wait_ms: waitMs > 0 ? waitMs : undefined }),
      deadlineMs: waitMs + 30_000,
      ...(signal === undefined ? {} : { signal }),
    });
  }

  /** One read of a stream from a logical offset; long-polls up to waitMs for new bytes. */
  readLogsFrom(read: LogRead): Promise<ProcessLogChunk> {
    return this.call(`logs of ${read.id}`, { method: "GET", path: logsPath(read), deadlineMs: read.waitMs + 30_000 });
  }

  /**
   * The same read answered raw (`Accept: application/octet-stream`): the bytes are
   * handed over unread, as they arrive, with the offsets from the answer's headers.
   */
  async openLogs(read: LogRead): Promise<RawPiece> {
    const open = (r: LogRead) => openRawRead(this.http, logsPath(r), `logs of ${r.id}`, r.waitMs + 30_000);
    if (read.limit <= PROCESS_LOG_LIMIT_MAX) return open(read);
    if (this.rawLimitRefused) return open({ ...read, limit: PROCESS_LOG_LIMIT_MAX });
    try {
      return await open(read);
    } catch (err) {
      // A backend before raw reads of up to PROCESS_LOG_RAW_LIMIT_MAX refuses the limit
      // (400 invalid_request): asked again within the JSON bound, as it always took.
      if (!(err instanceof BackendError && err.status === 400 && err.code === "invalid_request")) throw err;
      this.rawLimitRefused = true;
      return open({ ...read, limit: PROCESS_LOG_LIMIT_MAX });
    }
  }

  /** Sends bytes to the process's stdin, once, with a key. */
  writeStdin(
    sandbox: string,
    id: string,
    bytes: Buffer,
    eof: boolean,
    idempotencyKey: string,
    handle: Handle = {},
  ): Promise<ProcessStdinAnswer> {
    return this.call(`stdin of ${id}`, {
      method: "POST",
      path: routePath("process.stdin", { id: sandbox, pid: id }, { eof, ...handle }),
      body: bytes,
      contentType: "application/octet-stream",
      idempotencyKey,
    });
  }

  signal(
    sandbox: string,
    id: string,
    signal: string,
    idempotencyKey: string,
    handle: Handle = {},
  ): Promise<ProcessSignalAnswer> {
    return this.call(`signal ${id}`, {
      method: "POST",
      path: routePath("process.signal", { id: sandbox, pid: id }, { ...handle }),
      body: Buffer.from(JSON.stringify({ signal })),
      idempotencyKey,
    });
  }

  /**
   * TERM, the grace, KILL to the group, answered once it has ended (outcome
   * cancelled, end_reason stopped); the process is kept with its logs.
   */
  stop(sandbox: string, id: string, graceMs: number, handle: Handle = {}): Promise<ProcessRecord> {
    return this.call(`stop ${id}`, {
      method: "DELETE",
      path: routePath("process.stop", { id: sandbox, pid: id }, { grace_ms: graceMs, ...handle }),
      deadlineMs: graceMs + 30_000,
    });
  }

  /** Stops it if it runs (TERM, grace, KILL), then removes it and its logs. */
  async remove(sandbox: string, id: string, graceMs: number): Promise<void> {
    await this.call(`remove ${id}`, {
      method: "DELETE",
      path: routePath("process.stop", { id: sandbox, pid: id }, { grace_ms: graceMs, remove: true }),
      deadlineMs: graceMs + 30_000,
    });
  }
}
