// What the network tests connect to and from: a host listener that counts what it
// accepts (the host's loopback services, a server on the host's address), and the
// command that tries a connection from inside a sandbox.

import net from "node:net";

/** A python3 command that connects to host:port and prints "connected" or the error's name. */
export function connectFrom(host: string, port: number): string[] {
  return [
    "python3",
    "-c",
    `import socket\ns=socket.socket()\ns.settimeout(5)\ntry:\n  s.connect((${JSON.stringify(host)}, ${port})); print("connected")\nexcept Exception as e:\n  print(type(e).__name__)`,
  ];
}

export interface CountingListener {
  port: number;
  /** Connections accepted so far. */
  accepted: () => number;
  close: () => Promise<void>;
}

/** A listener on host (a free port) that accepts and closes each connection, counting them. */
export async function countingListener(host: string): Promise<CountingListener> {
  let accepted = 0;
  const server = net.createServer((s) => {
    accepted++;
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    accepted: () => accepted,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
