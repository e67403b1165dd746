// sbx sandbox create

import { randomUUID } from "node:crypto";
import type { IsolationRequest, SandboxLimitsRequest } from "../../../protocol/types.js";
import { type LimitFlagValues, parseLimitFlags } from "../../render/limits.js";
import { isValidSandboxRef } from "../../../protocol/validate.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { UsageError } from "../../../common/errors.js";
import { refusalIsUsage } from "../../refusal.js";
import { printJson } from "../../render/outcome.js";
import { printSandboxes, sandboxDocument } from "./render.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export interface CreateOptions {
  name: string | undefined;
  isolation: IsolationRequest | undefined;
  network: boolean | undefined;
  limits: SandboxLimitsRequest;
  json: boolean;
}

export function parseCreateOptions(
  name: string | undefined,
  raw: { isolation?: string; network?: boolean; json?: boolean } & LimitFlagValues,
): CreateOptions {
  if (name !== undefined && !isValidSandboxRef(name)) {
    throw new UsageError(`invalid sandbox name ${JSON.stringify(name)}: letters, digits, _ . - (at most 63)`);
  }
  return {
    name,
    isolation: raw.isolation as IsolationRequest | undefined,
    network: raw.network,
    limits: parseLimitFlags(raw),
    json: raw.json === true,
  };
}

export async function run(opts: CreateOptions, ctx: Context): Promise<number> {
  const api = await ctx.api();
  const sandbox = await refusalIsUsage(
    () =>
      api.createSandbox(
        {
          ...(opts.name === undefined ? {} : { name: opts.name }),
          ...(opts.isolation === undefined ? {} : { isolation: opts.isolation }),
          ...(opts.network === undefined ? {} : { network: opts.network }),
          ...(Object.keys(opts.limits).length === 0 ? {} : { limits: opts.limits }),
        },
        `sbx-${randomUUID()}`,
      ),
    "no sandbox was created",
  );
  if (opts.json) printJson(ctx, sandboxDocument(sandbox));
  else await printSandboxes(ctx.io, [sandbox]);
  return ExitCodes.ok;
}

/** Bound to `sbx sandbox create` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseCreateOptions(c.args[0], c.optsWithGlobals()), ctx);
