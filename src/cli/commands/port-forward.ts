// sbx port-forward SANDBOX [LOCAL:]PORT...: listens on this machine and joins each
// connection to PORT on the sandbox's own loopback through the backend's port-forward
// route (docs/protocol.md, "Port forwarding"; src/client/forward.ts), as kubectl
// port-forward does, until Ctrl-C or SIGTERM. A connection the backend refuses (nothing
// listens, the sandbox does not run) or that ends with the sandbox is said on stderr
// and closed; the forward goes on. Only the sandbox's removal ends it.

import net from "node:net";
import { BackendError, UsageError } from "../../common/errors.js";
import { ExitCodes } from "../../common/exit-codes.js";
import { routePath } from "../../protocol/routes.js";
import { ErrorCodes } from "../../protocol/types.js";
import { checkSandboxRef } from "../command-flags.js";
import type { RunFn } from "../command.js";
import type { Context } from "../context.js";

export interface PortSpec {
  /** The local port; 0: one the system picks. */
  local: number;
  /** The port inside the sandbox. */
  port: number;
}

export interface PortForwardOptions {
  sandbox: string;
  ports: PortSpec[];
  addresses: string[];
  json: boolean;
}

function portNumber(raw: string, what: string, min: number, spec: string): number {
  const n = /^[0-9]{1,5}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= min && n <= 65535)) {
    throw new UsageError(
      `invalid port ${JSON.stringify(spec)}: the ${what} port must be a number from ${min} to 65535`,
      "give [LOCAL:]PORT, e.g. 8000, 8080:8000 or :8000 for a free local port",
    );
  }
  return n;
}

/** `PORT`, `LOCAL:PORT`, `:PORT` (a free local port; so is LOCAL 0). */
export function parsePortSpec(raw: string): PortSpec {
  const parts = raw.split(":");
  if (parts.length === 1) {
    const port = portNumber(parts[0]!, "sandbox", 1, raw);
    return { local: port, port };
  }
  if (parts.length !== 2) throw new UsageError(`invalid port ${JSON.stringify(raw)}: give [LOCAL:]PORT`);
  const port = portNumber(parts[1]!, "sandbox", 1, raw);
  const local = parts[0] === "" ? 0 : portNumber(parts[0]!, "local", 0, raw);
  return { local, port };
}

/** --address values (repeated or comma-separated); each must be an IP address or localhost. */
export function parseAddresses(raw: readonly string[] | undefined): string[] {
  const list = (raw ?? []).flatMap((a) => a.split(",")).map((a) => a.trim());
  if (list.length === 0) return ["127.0.0.1"];
  const out: string[] = [];
  for (const a of list) {
    const address = a === "localhost" ? "127.0.0.1" : a;
    if (net.isIP(address) === 0) {
      throw new UsageError(
        `invalid --address ${JSON.stringify(a)}: give an IP address (127.0.0.1, ::1, 0.0.0.0) or localhost`,
      );
    }
    if (!out.includes(address)) out.push(address);
  }
  return out;
}

/** `IP:PORT`, an IPv6 address in brackets. */
function hostPort(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}

interface Listening {
  server: net.Server;
  address: string;
  local: number;
  port: number;
}

function listen(address: string, port: number): Promise<net.Server> {
  // Half-open: a client that says it is done sending still gets the answer.
  const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true });
  return new Promise((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => {
      reject(
        new UsageError(
          `cannot listen on ${hostPort(address, port)}: ${err.code === "EADDRINUSE" ? "the address is in use" : (err.code ?? err.message)}`,
          err.code === "EADDRINUSE" ? "choose another local port, or 0 for a free one" : undefined,
        ),
      );
    });
    server.listen({ host: address, port, exclusive: true }, () => resolve(server));
  });
}

export async function run(opts: PortForwardOptions, ctx: Context): Promise<number> {
  const api = await ctx.api();
  const sandbox = await api.getSandbox(opts.sandbox);
  const endpoint = api.http.endpoint;
  const { forwardConnection } = await import("../../client/forward.js");

  const listening: Listening[] = [];
  try {
    for (const spec of opts.ports) {
      let local = spec.local;
      for (const address of opts.addresses) {
        const server = await listen(address, local);
        local = (server.address() as net.AddressInfo).port;
        listening.push({ server, address, local, port: spec.port });
      }
    }
  } catch (err) {
    for (const l of listening) l.server.close();
    throw err;
  }

  const line = (doc: Record<string, unknown>) => ctx.io.out(JSON.stringify(doc));
  if (opts.json) {
    line({
      event: "listening",
      sandbox_id: sandbox.sandbox_id,
      sandbox: sandbox.name,
      forwards: listening.map((l) => ({ address: l.address, local_port: l.local, port: l.port })),
    });
  } else {
    for (const l of listening) ctx.io.info(`Forwarding from ${hostPort(l.address, l.local)} -> ${l.port}`);
  }
  if (sandbox.environment?.state === "stopped") {
    ctx.io.info(
      `sbx: sandbox ${sandbox.name} is not running: connections are closed until it runs and something in it listens (sbx sandbox start ${sandbox.name})`,
    );
  }

  let settle!: (why: { removed: string } | null) => void;
  const stopped = new Promise<{ removed: string } | null>((resolve) => {
    settle = resolve;
  });
  const active = new Set<net.Socket>();
  const say = (l: Listening, code: string, message: string) => {
    if (opts.json) {
      line({ event: "connection_failed", address: l.address, local_port: l.local, port: l.port, code, message });
    } else ctx.io.err(`sbx: ${hostPort(l.address, l.local)} -> ${l.port}: ${message}`);
  };
  const handle = async (l: Listening, local: net.Socket) => {
    active.add(local);
    ctx.io.verbose(`sbx: handling a connection on ${hostPort(l.address, l.local)} -> ${l.port}`);
    const path = routePath("sandbox.portforward", { id: sandbox.sandbox_id, port: String(l.port) });
    const end = await forwardConnection(endpoint, path, local);
    active.delete(local);
    if (ctx.interrupt.aborted) return;
    if (end.kind === "refused") {
      const e = end.error;
      if (e instanceof BackendError && e.code === ErrorCodes.sandboxNotFound) {
        settle({ removed: e.message });
        return;
      }
      say(l, e.code, e.message);
    } else if (end.kind === "sandbox_ended") say(l, "sandbox_ended", `connection ended: ${end.reason}`);
    else if (end.kind === "failed") say(l, "connection_failed", `connection ended: ${end.reason}`);
  };
  for (const l of listening) l.server.on("connection", (local: net.Socket) => void handle(l, local));

  const onInterrupt = () => settle(null);
  ctx.interrupt.addEventListener("abort", onInterrupt, { once: true });
  if (ctx.interrupt.aborted) settle(null);
  const why = await stopped;
  ctx.interrupt.removeEventListener("abort", onInterrupt);
  await Promise.all(
    listening
      .map((l) => new Promise<void>((resolve) => l.server.close(() => resolve())))
      .concat(
        // Open connections end with the forward.
        [...active].map(async (s) => void s.destroy()),
      ),
  );
  const message =
    why === null
      ? "stopped forwarding"
      : `stopped forwarding: sandbox ${sandbox.name} was removed (${why.removed.replace(/^connection closed: /, "")})`;
  if (opts.json) line({ event: "stopped", reason: why === null ? "interrupted" : "sandbox_removed", message });
  else if (why === null) ctx.io.info(`sbx: ${message}`);
  else ctx.io.err(`sbx: ${message}`);
  return why === null ? ExitCodes.ok : ExitCodes.usage;
}

/** Bound to `sbx port-forward` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const raw = c.optsWithGlobals() as { address?: string[]; json?: boolean };
  return run(
    {
      sandbox: checkSandboxRef(c.args[0]!),
      ports: (c.args.slice(1) as string[]).map(parsePortSpec),
      addresses: parseAddresses(raw.address),
      json: raw.json === true,
    },
    ctx,
  );
};
