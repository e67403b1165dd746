// The sandbox's end of its egress proxy (docs/network.md, "Allow-list"): the init
// listens on the sandbox's own loopback, HTTP at EGRESS_HTTP_PORT and SOCKS5 at
// EGRESS_SOCKS_PORT, and joins each connection to the backend's proxy on the Unix
// socket of the same protocol in the run directory bound into the sandbox.
// The sandbox has no other route out: its network namespace holds only a loopback.
// Node's built-in modules only (this is part of the init's one file).

import net from "node:net";

/** The ports on the sandbox's loopback where its proxy is: HTTP_PROXY and HTTPS_PROXY, ALL_PROXY. */
export const EGRESS_HTTP_PORT = 3128;
export const EGRESS_SOCKS_PORT = 1080;
/** The backend's sockets for them, in the run directory (bound read-only into the sandbox). */
export const EGRESS_HTTP_SOCKET = "egress-http.sock";
export const EGRESS_SOCKS_SOCKET = "egress-socks.sock";
/** The argument after the init's verb that asks for the forwarder. */
export const EGRESS_FLAG = "--egress";

/** Listens on both ports of the sandbox's loopback, each forwarded to its socket in `runDir`; resolves once listening (or not). */
export async function startEgressForwarders(runDir: string, complain: (line: string) => void): Promise<void> {
  await forwarder(EGRESS_HTTP_PORT, `${runDir}/${EGRESS_HTTP_SOCKET}`, complain);
  await forwarder(EGRESS_SOCKS_PORT, `${runDir}/${EGRESS_SOCKS_SOCKET}`, complain);
}

function forwarder(port: number, socketPath: string, complain: (line: string) => void): Promise<void> {
  const server = net.createServer({ allowHalfOpen: true }, (inside) => {
    const back = net.connect({ path: socketPath, allowHalfOpen: true });
    inside.on("error", () => back.destroy());
    back.on("error", () => inside.destroy());
    inside.pipe(back);
    back.pipe(inside);
  });
  return new Promise((resolve) => {
    server.on("error", (err) => {
      complain(`sbx init: the egress proxy's port ${port} cannot be listened on: ${err.message}`);
      resolve();
    });
    server.listen(port, "127.0.0.1", () => resolve());
  });
}
