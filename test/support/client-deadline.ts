// sbx's local deadline (--client-timeout; src/client/http.ts) on the test's clock.
//
// A test that wants the deadline to pass *after* its request reached a server cannot
// leave that to the wall clock: on a loaded machine more than a second can pass between
// making a request and its connection being made (the event loop stalled), and a
// deadline that passes then ends the request as never sent — rightly, exit 75, which
// is not what such a test is about. So a test names a deadline length no other deadline
// has (say 1234ms) and passes it when it decides, typically once a server has the
// request: the outcome no longer depends on how loaded the machine is.

import diagnostics from "node:diagnostics_channel";
import { afterAll, beforeAll, vi } from "vitest";

/**
 * Call at the top of a test file. Returns `deadline(ms)`: a controller whose abort is
 * the passing of every client deadline of exactly `ms` milliseconds (any other length
 * stays on the real clock: AbortSignal.timeout).
 */
export function useClientDeadlines(): (ms: number) => AbortController {
  const controllers = new Map<number, AbortController>();
  let spy: { mockRestore(): void } | undefined;
  beforeAll(() => {
    const real = AbortSignal.timeout.bind(AbortSignal);
    spy = vi.spyOn(AbortSignal, "timeout").mockImplementation((ms) => controllers.get(ms)?.signal ?? real(ms));
  });
  afterAll(() => spy?.mockRestore());
  return (ms) => {
    if (controllers.has(ms)) throw new Error(`a client deadline of ${ms} ms is already the test's: use another length`);
    const controller = new AbortController();
    controllers.set(ms, controller);
    return controller;
  };
}

/**
 * Calls `then` when the request sent with Idempotency-Key `key` is made by sbx
 * (`http.client.request.start`: before its connection is made) or received by an
 * HTTP server of this process (`http.server.request.start`). Returns the unsubscribe.
 */
export function onRequestWithKey(
  channel: "http.client.request.start" | "http.server.request.start",
  key: string,
  then: () => void,
): () => void {
  const listener = (message: unknown) => {
    const { request } = message as {
      request: { getHeader?(name: string): unknown; headers?: Record<string, unknown> };
    };
    const sent = request.getHeader ? request.getHeader("idempotency-key") : request.headers?.["idempotency-key"];
    if (sent === key) then();
  };
  diagnostics.subscribe(channel, listener);
  return () => diagnostics.unsubscribe(channel, listener);
}
