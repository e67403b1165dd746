// sbx sandbox update

import { randomUUID } from "../../../platform/random.js";
import { UsageError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import type { EgressPolicy, SandboxLimitsRequest } from "../../../protocol/types.js";
import { type EgressFlagValues, policyLines, updatedPolicy } from "./egress-flags.js";
import type { RunFn } from "../../command.js";
import { checkSandboxRef } from "../../command-flags.js";
import type { Context } from "../../context.js";
import { wholeSandboxRef } from "../../id-prefix.js";
import { refusalIsUsage } from "../../refusal.js";
import { type LimitFlagValues, limitLines, parseLimitFlags } from "../../render/limits.js";
import { printJson } from "../../render/outcome.js";
import { sandboxDetailsDocument } from "./render.js";
import { parseLabelChanges } from "./labels.js";
import { idleTimeoutOption } from "../../duration.js";
import { describeIdle } from "./idle.js";
import { labelsText } from "../../../protocol/labels.js";

export interface UpdateOptions {
  ref: string;
  limits: SandboxLimitsRequest;
  /** Labels to set, and (null) to remove. */
  labels: Record<string, string | null>;
  egress: EgressFlagValues;
  /** Its idle timeout in ms (0: off, null: the daemon's default); undefined: unchanged. */
  idleTimeoutMs: number | null | undefined;
  json: boolean;
}

export async function run(opts: UpdateOptions, ctx: Context): Promise<number> {
  const [limits, labels] = [Object.keys(opts.limits).length > 0, Object.keys(opts.labels).length > 0];
  const egressAsked = Object.values(opts.egress).some((v) => v !== undefined);
  const idle = opts.idleTimeoutMs !== undefined;
  if (!limits && !labels && !egressAsked && !idle) {
    throw new UsageError(
      "nothing to change: give a limit (--memory, --pids, --cpus, --tmp-size, --disk), a label (--label k=v, --label k-), an egress flag (--allow-domain, --deny-domain, --allow-cidr, --egress-policy) or --idle-timeout",
    );
  }
  const api = await ctx.api();
  // The flags add to the policy the sandbox has now (a file replaces it).
  const current: EgressPolicy = egressAsked
    ? ((await api.getSandbox(opts.ref, { usage: false })).egress ?? {
        allow_domains: [],
        deny_domains: [],
        allow_cidrs: [],
      })
    : { allow_domains: [], deny_domains: [], allow_cidrs: [] };
  const egress = egressAsked ? updatedPolicy(current, opts.egress) : undefined;
  const sandbox = await refusalIsUsage(
    () =>
      api.updateSandbox(
        opts.ref,
        {
          ...(limits ? { limits: opts.limits } : {}),
          ...(labels ? { labels: opts.labels } : {}),
          ...(egress === undefined ? {} : { egress }),
          ...(idle ? { idle_timeout_ms: opts.idleTimeoutMs } : {}),
        },
        `sbx-${randomUUID()}`,
      ),
    "nothing was changed",
  );
  if (opts.json) {
    printJson(ctx, sandboxDetailsDocument(sandbox));
    return ExitCodes.ok;
  }
  ctx.io.info(`sbx: updated sandbox ${sandbox.name}`);
  if (labels) ctx.io.out(`labels\t${labelsText(sandbox.labels ?? {}) || "none"}`);
  if (idle) ctx.io.out(`idle_stop\t${describeIdle(sandbox.idle, sandbox.environment ?? null)}`);
  if (limits) for (const [k, v] of limitLines(sandbox.limit_status ?? [])) ctx.io.out(`${k}\t${v}`);
  if (egress !== undefined && sandbox.egress) {
    for (const [k, v] of policyLines(sandbox.egress)) ctx.io.out(`${k}\t${v}`);
  }
  return ExitCodes.ok;
}

/** Bound to `sbx sandbox update` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const raw = c.optsWithGlobals() as LimitFlagValues &
    EgressFlagValues & { json?: boolean; label?: string[]; idleTimeout?: string };
  const idleTimeoutMs = raw.idleTimeout === undefined ? undefined : idleTimeoutOption(raw.idleTimeout, true);
  const limits = parseLimitFlags(raw);
  const labels = parseLabelChanges(raw.label);
  const egress: EgressFlagValues = {
    allowDomain: raw.allowDomain,
    denyDomain: raw.denyDomain,
    allowCidr: raw.allowCidr,
    egressPolicy: raw.egressPolicy,
  };
  const ref = await wholeSandboxRef(ctx, checkSandboxRef(c.args[0]!));
  return run({ ref, limits, labels, egress, idleTimeoutMs, json: raw.json === true }, ctx);
};
