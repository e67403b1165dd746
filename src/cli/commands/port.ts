// sbx port SANDBOX [PORT]: a sandbox's published ports, as docker port shows a container's.

import type { PublishedPort } from "../../protocol/types.js";
import type { RunFn } from "../command.js";
import type { Context } from "../context.js";
import { checkSandboxRef } from "../command-flags.js";
import { UsageError } from "../../common/errors.js";
import { printJson } from "../render/outcome.js";
import { ExitCodes } from "../../common/exit-codes.js";
import { wholeSandboxRef } from "../id-prefix.js";
import { hostPort } from "./sandbox/render.js";

export interface PortOptions {
  ref: string;
  /** Only this port inside (PORT or PORT/tcp). */
  port: number | undefined;
  json: boolean;
}

/** `PORT` or `PORT/tcp` (published ports are TCP). */
export function parsePortArg(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d{1,5})(?:\/tcp)?$/.exec(text);
  const port = m ? Number(m[1]) : Number.NaN;
  if (!m || port < 1 || port > 65535) {
    throw new UsageError(`PORT is a port inside the sandbox (1-65535, optionally /tcp), not ${JSON.stringify(text)}`);
  }
  return port;
}

export async function run(opts: PortOptions, ctx: Context): Promise<number> {
  const sandbox = await (await ctx.api()).getSandbox(opts.ref, {});
  const all: PublishedPort[] = sandbox.published ?? [];
  const shown = opts.port === undefined ? all : all.filter((p) => p.port === opts.port);
  if (opts.port !== undefined && shown.length === 0) {
    throw new UsageError(
      `no port ${opts.port}/tcp is published for sandbox ${sandbox.name} (publish it at create: sbx sandbox create NAME -p 0:${opts.port})`,
    );
  }
  if (opts.json) {
    printJson(ctx, {
      sandbox_id: sandbox.sandbox_id,
      name: sandbox.name,
      ports: shown.map((p) => ({
        port: p.port,
        protocol: "tcp",
        host_ip: p.host_ip,
        host_port: p.host_port,
        listening: p.listening,
        reason: p.reason,
      })),
    });
    return ExitCodes.ok;
  }
  for (const p of shown) {
    const line = opts.port === undefined ? `${p.port}/tcp -> ${hostPort(p)}` : hostPort(p);
    ctx.io.out(p.listening ? line : `${line} (not listening: ${p.reason ?? "unknown"})`);
  }
  return ExitCodes.ok;
}

/** Bound to `sbx port` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  run(
    {
      ref: await wholeSandboxRef(ctx, checkSandboxRef(c.args[0]!)),
      port: parsePortArg(c.args[1]),
      json: c.optsWithGlobals().json === true,
    },
    ctx,
  );
