// What one request observes: an HTTP answer, a transport failure (sent or provably
// not), or the client's own deadline. The client reports these as they are; the
// classifier (src/receipts/classify.ts) says what each means.

/** What one HTTP request can observe (a stream is read by the SSE reader instead). */
export type HttpObserved =
  | { kind: "answer"; status: number; headers: Record<string, string | undefined>; body: string }
  | { kind: "transport"; sent: boolean; code: string; message: string }
  | { kind: "deadline"; sent: boolean; interrupted?: boolean };

const BEFORE_SEND_CODES = new Set([
  "ECONNREFUSED",
  "ENOENT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EACCES",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** True when a transport error code proves the request never left this machine. */
export function isBeforeSendError(code: string): boolean {
  return BEFORE_SEND_CODES.has(code);
}
