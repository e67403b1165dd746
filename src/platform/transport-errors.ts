// Transport failures in sbx's words, the same on both runtimes: Node's messages ("read
// ECONNRESET", "socket hang up") and Bun's ("The socket connection was closed
// unexpectedly. For more information, pass `verbose: true` in the second argument to
// fetch()") never reach a person or a receipt. The error keeps a stable `code` (what the
// classifier and the receipt go by) and the runtime's own error as its `cause`.

/** What Bun's fetch calls a failure, as the errno Node gives for the same thing. */
const BUN_CODES: Record<string, string> = {
  ConnectionRefused: "ECONNREFUSED",
  FailedToOpenSocket: "ENOENT",
  ConnectionClosed: "ECONNRESET",
  ConnectionReset: "ECONNRESET",
  UnableToConnect: "ECONNREFUSED",
  Timeout: "ETIMEDOUT",
};

const WORDS: Record<string, string> = {
  ECONNRESET: "the connection was closed before the answer was complete",
  ECONNREFUSED: "the connection was refused: nothing listens there",
  ENOENT: "there is no socket there: nothing listens",
  EPIPE: "the connection was closed while the request was being sent",
  ETIMEDOUT: "the connection timed out",
  ECONNABORTED: "the connection was aborted",
  EHOSTUNREACH: "the host cannot be reached",
  ENETUNREACH: "the network cannot be reached",
  ENOTFOUND: "the host name is not known",
  EAI_AGAIN: "the host name could not be looked up",
  EACCES: "the socket may not be opened here (permission denied)",
  UND_ERR_SOCKET: "the connection was closed before the answer was complete",
  UND_ERR_CONNECT_TIMEOUT: "the connection could not be made in time",
  ERR_TLS_CERT_ALTNAME_INVALID: "the backend's TLS certificate is not for this host name",
  ERR_SSL_WRONG_VERSION_NUMBER: "the backend does not speak TLS there",
  EPROTO: "the TLS handshake failed",
};

/** The runtime's name for a failure, as sbx names it (Bun's names as Node's errno). */
export function transportCode(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown }; name?: unknown } | null;
  const raw = [e?.code, e?.cause?.code, e?.name].find((c) => typeof c === "string" && c !== "") as string | undefined;
  if (raw === undefined) return "UNKNOWN";
  return BUN_CODES[raw] ?? raw;
}

/** One failure in words: what happened, then its code. */
export function transportWords(code: string): string {
  if (WORDS[code] !== undefined) return `${WORDS[code]} (${code})`;
  if (/^(CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|INVALID_CA)/.test(code)) {
    return `the backend's TLS certificate was refused (${code})`;
  }
  return `the connection failed (${code})`;
}

/**
 * The runtime's error as sbx says it: a new Error with sbx's words and a stable
 * `code`, the original as its cause; `notSent` (a mark of the transport's) carried
 * over. An abort (a deadline or Ctrl-C) is returned as it is: its caller knows why.
 */
export function inSbxWords(err: unknown): Error {
  const e = err as (Error & { code?: string; notSent?: boolean }) | null;
  if (e?.name === "AbortError" || (e as { name?: unknown } | null)?.name === "TimeoutError") return e as Error;
  const code = transportCode(err);
  const said = Object.assign(new Error(transportWords(code), { cause: err }), { code });
  if (e?.notSent === true) Object.assign(said, { notSent: true });
  return said;
}

/** A body read whose failures are said in sbx's words too. */
export async function* bodyInSbxWords(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  try {
    yield* body;
  } catch (err) {
    throw inSbxWords(err);
  }
}
