// Published ports (`sbx sandbox create --publish [IP:]HOST_PORT:PORT`, as `docker -p`):
// the backend listens on the host (127.0.0.1 unless another address is given) and
// joins each connection to PORT on the sandbox's own loopback, through the sandbox's
// init (docs/drivers.md, "Network modes"). So a server inside is reachable from the
// host whatever the sandbox's network mode, also without any network at all, and the
// sandbox itself never binds a host port.

import net from "node:net";
import type { Duplex } from "node:stream";

/** One published port as stored with its sandbox. */
export interface PublishSpec {
  /** The port inside the sandbox (on its loopback). */
  port: number;
  /** The host address the backend listens on. */
  host_ip: string;
  /** The host port; 0 in a request: one the system chooses (then stored as chosen). */
  host_port: number;
}

/** A published port as shown: whether the backend listens on it now, and if not why. */
export interface PublishedPort extends PublishSpec {
  listening: boolean;
  reason: string | null;
}

/** Joins a connection to a port inside a sandbox; rejects when the sandbox cannot take it now. */
export type ConnectInside = (sandboxId: string, port: number) => Promise<Duplex>;

interface Listener {
  spec: PublishSpec;
  server: net.Server | null;
  reason: string | null;
}

export class PublishedPorts {
  private readonly bySandbox = new Map<string, Listener[]>();

  constructor(
    private readonly connectInside: ConnectInside,
    private readonly log: (line: string) => void,
    /** A sandbox's name by its id (its id when it has none any more). */
    private readonly nameOf: (sandboxId: string) => string = (id) => id,
  ) {}

  /**
   * Listens on each of a sandbox's published ports. Resolves with the specs as bound
   * (a host port 0 replaced by the one chosen); `strict`: a port that cannot be bound
   * rejects (nothing is kept listening), else it is kept with its reason (shown).
   */
  async open(sandboxId: string, specs: PublishSpec[], strict: boolean): Promise<PublishSpec[]> {
    const listeners: Listener[] = [];
    for (const spec of specs) {
      try {
        const server = await this.listen(sandboxId, spec);
        const address = server.address();
        const bound = typeof address === "object" && address !== null ? address.port : spec.host_port;
        listeners.push({ spec: { ...spec, host_port: bound }, server, reason: null });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        let reason = `cannot listen on ${hostPort(spec)}: ${code ?? (err as Error).message}`;
        if (code === "EADDRINUSE") reason += `: ${this.whoHolds(sandboxId, spec)}`;
        if (strict) {
          for (const l of listeners) l.server?.close();
          throw new Error(reason);
        }
        this.log(`sandbox ${sandboxId}: published port ${spec.port}: ${reason}`);
        listeners.push({ spec, server: null, reason });
      }
    }
    this.close(sandboxId);
    if (listeners.length > 0) this.bySandbox.set(sandboxId, listeners);
    return listeners.map((l) => l.spec);
  }

  list(sandboxId: string, stored: PublishSpec[]): PublishedPort[] {
    const listeners = this.bySandbox.get(sandboxId) ?? [];
    return stored.map((spec) => {
      const l = listeners.find((x) => x.spec.port === spec.port && x.spec.host_ip === spec.host_ip);
      return {
        ...spec,
        listening: l?.server?.listening === true,
        reason: l === undefined ? "not listening (the backend did not open it)" : l.reason,
      };
    });
  }

  /**
   * Who holds a host port that could not be had: a sandbox of this backend that publishes
   * it (named by `nameOf`), or another program.
   */
  private whoHolds(asking: string, spec: PublishSpec): string {
    const overlaps = (ip: string) =>
      ip === spec.host_ip || [ip, spec.host_ip].some((a) => a === "0.0.0.0" || a === "::");
    for (const [sandboxId, listeners] of this.bySandbox) {
      const l = listeners.find(
        (x) => x.server?.listening === true && x.spec.host_port === spec.host_port && overlaps(x.spec.host_ip),
      );
      if (l === undefined) continue;
      const who = sandboxId === asking ? "this sandbox" : `sandbox ${this.nameOf(sandboxId)}`;
      return `${who} publishes it (its port ${l.spec.port}); pick another host port, or 0 for any free one`;
    }
    return "another program on this host listens on it (not a sandbox); pick another host port, or 0 for any free one";
  }

  /** Stops listening for a sandbox (removed); connections already joined go on until either side closes. */
  close(sandboxId: string): void {
    for (const l of this.bySandbox.get(sandboxId) ?? []) l.server?.close();
    this.bySandbox.delete(sandboxId);
  }

  closeAll(): void {
    for (const id of [...this.bySandbox.keys()]) this.close(id);
  }

  private listen(sandboxId: string, spec: PublishSpec): Promise<net.Server> {
    const server = net.createServer((socket) => this.join(sandboxId, spec, socket));
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: spec.host_ip, port: spec.host_port, exclusive: true }, () => {
        server.off("error", reject);
        server.on("error", (err) => this.log(`sandbox ${sandboxId}: published port ${spec.port}: ${err.message}`));
        resolve(server);
      });
    });
  }

  private join(sandboxId: string, spec: PublishSpec, outside: net.Socket): void {
    outside.on("error", () => {});
    outside.pause();
    this.connectInside(sandboxId, spec.port).then(
      (inside) => {
        if (outside.destroyed) {
          inside.destroy();
          return;
        }
        inside.on("error", () => outside.destroy());
        outside.on("error", () => inside.destroy());
        outside.on("close", () => inside.destroy());
        inside.on("close", () => outside.destroy());
        outside.pipe(inside);
        inside.pipe(outside);
        outside.resume();
      },
      // Nothing listens there, or the sandbox does not run: the connection is closed.
      () => outside.destroy(),
    );
  }
}

/** `IP:PORT` as the host sees it (an IPv6 address in brackets). */
export function hostPort(spec: Pick<PublishSpec, "host_ip" | "host_port">): string {
  return spec.host_ip.includes(":") ? `[${spec.host_ip}]:${spec.host_port}` : `${spec.host_ip}:${spec.host_port}`;
}
