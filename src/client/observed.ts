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

/**
 * This client refused the server's TLS certificate (OpenSSL's verify errors as Node and
 * Bun name them): the handshake ended before a byte of the request was encrypted and
 * sent, on the connection it was opened for — a connection already verified never
 * raises these.
 */
const CERTIFICATE_REFUSED_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_REVOKED",
  "INVALID_CA",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** What to do when this client refused the backend's TLS certificate. */
export const CERTIFICATE_HINT =
  "the backend's TLS certificate is not trusted here: if your own CA signed it, give its certificate in NODE_EXTRA_CA_CERTS=FILE";

/** True when the error is this client refusing the server's TLS certificate. */
export function isCertificateRefused(code: string): boolean {
  return CERTIFICATE_REFUSED_CODES.has(code);
}

/** True when a transport error code proves the request never left this machine. */
export function isBeforeSendError(code: string): boolean {
  return BEFORE_SEND_CODES.has(code) || CERTIFICATE_REFUSED_CODES.has(code);
}
