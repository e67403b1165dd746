// Idempotency-Key handling (docs/protocol.md, "Idempotency"). A key is scoped to (caller, method,
// path). While its first request is being admitted it is held in memory (a second
// request gets 409 request_in_progress); once admitted it is stored with the
// sha256 of the body bytes and replayed; keys expire after the retention period
// and are purged lazily.

import { createHash, type Hash } from "node:crypto";
import { ErrorCodes, REPLAYED_HEADER } from "../../protocol/types.js";
import type { RequestContext } from "./context.js";
import type { BackendStore } from "../store/index.js";
import { ApiError, isSuccess, jsonReply, type Reply, withHeader } from "./replies.js";

export interface IdempotencyScope {
  caller: string;
  method: string;
  path: string;
  key: string;
}

export interface IdempotencyRow {
  body_sha256: string;
  status: number;
  /** The JSON answer to replay, for routes whose answer is fixed once given. */
  response: string | null;
  /** For execute: the execution the key admitted (its answer is the record as it is now). */
  execution_id: string | null;
  created_at_ms: number;
}

/** Row access for idempotency keys in backend.db (table idempotency_keys; schema: store/migrations.ts). */
export class IdempotencyStore {
  constructor(private readonly db: BackendStore) {}

  getIdempotencyKey(scope: IdempotencyScope): IdempotencyRow | undefined {
    return this.db
      .statement<IdempotencyRow>(
        `SELECT body_sha256, status, response, execution_id, created_at_ms FROM idempotency_keys
         WHERE caller = ? AND method = ? AND path = ? AND key = ?`,
      )
      .get(scope.caller, scope.method, scope.path, scope.key);
  }

  putIdempotencyKey(scope: IdempotencyScope, row: IdempotencyRow): void {
    this.db
      .statement(
        `INSERT INTO idempotency_keys (caller, method, path, key, body_sha256, status, response, execution_id, created_at_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        scope.caller,
        scope.method,
        scope.path,
        scope.key,
        row.body_sha256,
        row.status,
        row.response,
        row.execution_id,
        row.created_at_ms,
      );
  }

  purgeIdempotencyKeys(olderThanMs: number): number {
    return this.db.statement("DELETE FROM idempotency_keys WHERE created_at_ms < ?").run(olderThanMs).changes;
  }
}

export const DEFAULT_KEY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
export { REPLAYED_HEADER };

export function bodyDigest(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}

/** The query string in a canonical form: parameters sorted by name, then value. */
export function canonicalQuery(query: URLSearchParams): string {
  const pairs = [...query.entries()].sort(([ak, av], [bk, bv]) =>
    ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0,
  );
  return new URLSearchParams(pairs).toString();
}

/**
 * What "the same request" compares: the body bytes and the canonical query string
 * (`?eof=true`, `grace_ms`, `remove=true` change a request). Without a query it is
 * the body's digest alone, as keys stored before the query counted.
 */
export function requestDigest(body: Buffer, query: URLSearchParams): string {
  const q = canonicalQuery(query);
  if (q === "") return bodyDigest(body);
  return createHash("sha256").update(`sbx-query\0${q}\0`).update(body).digest("hex");
}

/** requestDigest computed as the body streams in: feed the body's bytes to the hash it returns. */
export function streamedRequestDigest(query: URLSearchParams): Hash {
  const q = canonicalQuery(query);
  const hash = createHash("sha256");
  if (q !== "") hash.update(`sbx-query\0${q}\0`);
  return hash;
}

/** The caller a key belongs to: one local user on the socket, or one token on TCP (never the token itself). */
export function callerFor(token: string | null): string {
  return token === null ? "local" : `token:${createHash("sha256").update(token).digest("hex").slice(0, 32)}`;
}

export type ClaimResult = { kind: "claimed"; claim: IdempotencyClaim } | { kind: "replay"; stored: IdempotencyRow };

export class IdempotencyKeys {
  private readonly store: IdempotencyStore;
  private readonly retentionMs: number;
  private readonly now: () => number;
  /** Keys whose first request is being admitted: scope → body digest. */
  private readonly admitting = new Map<string, string>();

  constructor(store: BackendStore, opts: { retentionMs?: number; now?: () => number } = {}) {
    this.store = new IdempotencyStore(store);
    this.retentionMs = opts.retentionMs ?? DEFAULT_KEY_RETENTION_MS;
    this.now = opts.now ?? Date.now;
  }

  /** Claims a key for a new request, or finds what it already answered. Throws 409/422. */
  claim(scope: IdempotencyScope, digest: string): ClaimResult {
    this.store.purgeIdempotencyKeys(this.now() - this.retentionMs);
    const stored = this.store.getIdempotencyKey(scope);
    if (stored) {
      if (stored.body_sha256 !== digest) throw reused(scope.key);
      return { kind: "replay", stored };
    }
    const id = JSON.stringify([scope.caller, scope.method, scope.path, scope.key]);
    const admitting = this.admitting.get(id);
    if (admitting !== undefined) {
      if (admitting !== digest) throw reused(scope.key);
      throw new ApiError(
        409,
        ErrorCodes.requestInProgress,
        "a request with this Idempotency-Key is still being admitted; read its result later",
        { idempotency_key: scope.key },
      );
    }
    this.admitting.set(id, digest);
    return {
      kind: "claimed",
      claim: new IdempotencyClaim(this.store, scope, digest, this.now, () => this.admitting.delete(id)),
    };
  }
}

function reused(key: string): ApiError {
  return new ApiError(
    422,
    ErrorCodes.idempotencyKeyReused,
    "this Idempotency-Key was already used with a different request (body or query string)",
    { idempotency_key: key },
  );
}

/** A key held while its request is admitted. Record what it admitted, then release it. */
export class IdempotencyClaim {
  constructor(
    private readonly store: IdempotencyStore,
    readonly scope: IdempotencyScope,
    private readonly digest: string,
    private readonly now: () => number,
    private readonly onRelease: () => void,
  ) {}

  /** Stores a fixed answer to replay. */
  recordResponse(status: number, body: unknown): void {
    this.store.putIdempotencyKey(this.scope, {
      body_sha256: this.digest,
      status,
      response: JSON.stringify(body),
      execution_id: null,
      created_at_ms: this.now(),
    });
  }

  /** Stores the execution this key admitted; call it in the transaction that inserts the execution. */
  recordExecution(executionId: string): void {
    this.store.putIdempotencyKey(this.scope, {
      body_sha256: this.digest,
      status: 200,
      response: null,
      execution_id: executionId,
      created_at_ms: this.now(),
    });
  }

  release(): void {
    this.onRelease();
  }
}

/**
 * Runs a mutation under its Idempotency-Key (if any): replays what the key already
 * answered, or admits the request while holding the key. An injected delay is
 * waited out while the key is held. Nothing is stored unless `admit` records it.
 */
export async function runMutation(
  ctx: RequestContext,
  steps: {
    admit: (claim: IdempotencyClaim | null) => Promise<Reply>;
    replay: (stored: IdempotencyRow) => Promise<Reply>;
  },
  /** The request's digest when its body was streamed (see streamedRequestDigest). */
  digest: string = requestDigest(ctx.body, ctx.query),
): Promise<Reply> {
  if (ctx.idempotencyKey === null) {
    await ctx.admissionDelay();
    return steps.admit(null);
  }
  const scope = { caller: ctx.caller, method: ctx.method, path: ctx.path, key: ctx.idempotencyKey };
  const result = ctx.services.idempotency.claim(scope, digest);
  if (result.kind === "replay") return withHeader(await steps.replay(result.stored), REPLAYED_HEADER, "true");
  try {
    await ctx.admissionDelay();
    return await steps.admit(result.claim);
  } finally {
    result.claim.release();
  }
}

/** A mutation whose successful answer is stored and replayed as it was (status and body). */
export function runFixedAnswerMutation(
  ctx: RequestContext,
  handle: () => Promise<Reply>,
  digest?: string,
): Promise<Reply> {
  return runMutation(
    ctx,
    {
      admit: async (claim) => {
        const reply = await handle();
        if (claim && isSuccess(reply)) claim.recordResponse(reply.status, reply.body);
        return reply;
      },
      replay: async (stored) => jsonReply(stored.status, stored.response === null ? null : JSON.parse(stored.response)),
    },
    digest,
  );
}
