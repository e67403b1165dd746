// The server name a TLS client asks for (the SNI extension of its ClientHello), read
// from the first bytes of a CONNECT tunnel so the proxy can refuse a tunnel whose TLS
// names another host than the CONNECT target (docs/network.md, "HTTPS"). Only reads:
// the bytes go on to the destination unchanged.

/** A ClientHello longer than this is not waited for (one TLS record holds at most 16 KiB). */
export const MAX_HELLO_BYTES = 16 * 1024 + 5;

export type HelloRead =
  /** More bytes are needed to tell. */
  | { state: "partial" }
  /** Not a TLS handshake (plain data through the tunnel): nothing to compare. */
  | { state: "not-tls" }
  /** A ClientHello, and the name it asks for (null: it sends none). */
  | { state: "hello"; serverName: string | null };

/** What the bytes so far say about the client's TLS server name. */
export function readClientHello(buf: Buffer): HelloRead {
  if (buf.length < 1) return { state: "partial" };
  if (buf[0] !== 0x16) return { state: "not-tls" };
  if (buf.length < 5) return { state: "partial" };
  const recordLength = buf.readUInt16BE(3);
  if (buf.length < 5 + recordLength) return { state: "partial" };
  const body = buf.subarray(5, 5 + recordLength);
  // Handshake: type 1 (ClientHello), 3-byte length, then version(2) random(32).
  if (body.length < 4 || body[0] !== 0x01) return { state: "not-tls" };
  let at = 4 + 2 + 32;
  const need = (n: number) => at + n <= body.length;
  if (!need(1)) return { state: "not-tls" };
  at += 1 + body[at]!; // session id
  if (!need(2)) return { state: "not-tls" };
  at += 2 + body.readUInt16BE(at); // cipher suites
  if (!need(1)) return { state: "not-tls" };
  at += 1 + body[at]!; // compression methods
  if (!need(2)) return { state: "hello", serverName: null };
  const end = Math.min(body.length, at + 2 + body.readUInt16BE(at));
  at += 2;
  while (at + 4 <= end) {
    const type = body.readUInt16BE(at);
    const length = body.readUInt16BE(at + 2);
    at += 4;
    if (type === 0x0000 && at + length <= end) {
      // server_name_list: length(2), then entries of type(1) length(2) name.
      let p = at + 2;
      while (p + 3 <= at + length) {
        const kind = body[p]!;
        const n = body.readUInt16BE(p + 1);
        if (kind === 0 && p + 3 + n <= at + length)
          return { state: "hello", serverName: body.toString("latin1", p + 3, p + 3 + n) };
        p += 3 + n;
      }
    }
    at += length;
  }
  return { state: "hello", serverName: null };
}
