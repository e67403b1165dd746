// Finding what an idempotency key (or a jobs request id) created, when no id came
// back: a read of the list filtered by it. An item counts only if it carries that
// very key: a server that ignores the filter must never settle a receipt with
// someone else's execution.

import type { HttpObserved } from "./observed.js";

export type KeyedList = "executions" | "processes";

/** The list answer narrowed to the one item created by `key` (as its own answer), or none. */
export function itemForKey(obs: HttpObserved, field: KeyedList, key: string): HttpObserved | { kind: "none" } {
  if (obs.kind !== "answer" || obs.status < 200 || obs.status >= 300) return obs;
  let items: unknown[] | undefined;
  try {
    items = (JSON.parse(obs.body) as Record<string, unknown[] | undefined>)[field];
  } catch {
    return obs; // not JSON: the classifier says what that means
  }
  const mine = (items ?? []).find(
    (i) => typeof i === "object" && i !== null && (i as { idempotency_key?: unknown }).idempotency_key === key,
  );
  return mine === undefined ? { kind: "none" } : { ...obs, body: JSON.stringify(mine) };
}

/** The id of what `key` created, from a list answer, or null. */
export function idForKey(obs: HttpObserved, field: KeyedList, key: string): string | null {
  const found = itemForKey(obs, field, key);
  if (found.kind !== "answer") return null;
  const doc = JSON.parse(found.body) as { execution_id?: unknown; process_id?: unknown };
  const id = field === "executions" ? doc.execution_id : doc.process_id;
  return typeof id === "string" ? id : null;
}

/**
 * The jobs a request id admitted, from a list answer (`GET …/jobs?request_id=R`), as a
 * submission's answer {request_id, jobs}; none when it admitted nothing. Only items
 * of that very request count.
 */
export function jobsOfRequest(obs: HttpObserved, requestId: string): HttpObserved | { kind: "none" } {
  if (obs.kind !== "answer" || obs.status < 200 || obs.status >= 300) return obs;
  let items: unknown;
  try {
    items = (JSON.parse(obs.body) as { jobs?: unknown }).jobs;
  } catch {
    return obs; // not JSON: the classifier says what that means
  }
  const mine = (Array.isArray(items) ? items : []).filter(
    (i) => typeof i === "object" && i !== null && (i as { request_id?: unknown }).request_id === requestId,
  );
  return mine.length === 0 ? { kind: "none" } : { ...obs, body: JSON.stringify({ request_id: requestId, jobs: mine }) };
}
