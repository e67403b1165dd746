// sbx process start: a supervised worker that outlives the CLI, recorded as a receipt.

import type { ProcessStartRequest, RestartPolicyName } from "../../../protocol/types.js";
import { isValidName } from "../../../protocol/validate.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { dispatchNew } from "../../dispatch.js";
import { durationOption } from "../../duration.js";
import {
  chooseSandbox,
  commandFromFlags,
  envFromFlags,
  idempotencyKeyFromFlag,
  workingDirFromFlag,
} from "../../command-flags.js";
import { UsageError } from "../../../common/errors.js";
import { RESTART_POLICIES } from "./index.js";
import { explain } from "../../../receipts/document.js";
import { answerNotRecorded, printJson } from "../../render/outcome.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { wholeSandboxRef } from "../../id-prefix.js";

export interface StartOptions {
  sandbox: string;
  body: ProcessStartRequest;
  idempotencyKey: string;
  json: boolean;
}

interface RawStartFlags {
  sandbox?: string;
  name?: string;
  stdin?: boolean;
  restart?: string;
  maxRestarts?: number;
  backoff?: string;
  maxBackoff?: string;
  timeout?: string;
  cwd?: string;
  env?: string[];
  envFile?: string;
  shell?: string;
  idempotencyKey?: string;
  json?: boolean;
  tty?: boolean;
}

function durationMs(flag: string, text: string | undefined, max: number): number | undefined {
  return text === undefined ? undefined : durationOption(flag, text, { max });
}

export function parseStartOptions(
  argv: string[],
  raw: RawStartFlags,
  defaultSandbox?: string,
  terminalSize: { cols: number; rows: number } = { cols: 80, rows: 24 },
): StartOptions {
  const command = commandFromFlags(argv, raw.shell, "usage: sbx process start [options] -- COMMAND [ARGS...]");
  const policy = (raw.restart ?? "never") as RestartPolicyName;
  if (!RESTART_POLICIES.includes(policy))
    throw new UsageError(`--restart must be one of ${RESTART_POLICIES.join(", ")}`);
  const workingDir = workingDirFromFlag(raw.cwd);
  if (raw.name !== undefined && !isValidName(raw.name)) {
    throw new UsageError(`--name ${JSON.stringify(raw.name)}: letters, digits, _ . - (at most 63)`);
  }
  const key = idempotencyKeyFromFlag(raw.idempotencyKey);
  const backoff = durationMs("--backoff", raw.backoff, 3_600_000);
  const maxBackoff = durationMs("--max-backoff", raw.maxBackoff, 3_600_000);
  const timeout = durationMs("--timeout", raw.timeout, 86_400_000);
  const env = envFromFlags(raw.env, raw.envFile);
  const body: ProcessStartRequest = {
    command,
    ...(workingDir === undefined ? {} : { working_dir: workingDir }),
    ...(Object.keys(env).length ? { env } : {}),
    ...(raw.name === undefined ? {} : { name: raw.name }),
    stdin: raw.stdin === true || raw.tty === true,
    timeout_ms: timeout ?? null,
    // Each run on a terminal of the sandbox's, as large as this one (80×24 from a pipe).
    ...(raw.tty === true && { tty: terminalSize }),
    restart: {
      policy,
      ...(raw.maxRestarts === undefined ? {} : { max_restarts: raw.maxRestarts }),
      ...(backoff === undefined ? {} : { backoff_ms: backoff }),
      ...(maxBackoff === undefined ? {} : { max_backoff_ms: maxBackoff }),
    },
  };
  return {
    sandbox: chooseSandbox(raw.sandbox, defaultSandbox),
    body,
    idempotencyKey: key,
    json: raw.json === true,
  };
}

export async function run(opts: StartOptions, ctx: Context): Promise<number> {
  const endpoint = ctx.endpoint();
  const api = await ctx.api(endpoint);
  const outcome = await dispatchNew(ctx, endpoint, api, {
    kind: "process_start",
    sandbox: opts.sandbox,
    body: Buffer.from(JSON.stringify(opts.body)),
    key: opts.idempotencyKey,
    clientTimeoutMs: 30_000,
  });
  const doc = outcome.document;
  if (opts.json) printJson(ctx, doc);
  if (outcome.unrecorded) throw answerNotRecorded(ctx, outcome.unrecorded, doc, opts.json);
  if (doc.classification === "succeeded") {
    if (!opts.json) ctx.io.out(doc.process_id ?? "");
    ctx.io.info(
      opts.body.tty === undefined
        ? `sbx: started ${doc.process_id}; logs: sbx process logs ${doc.process_id} -f`
        : `sbx: started ${doc.process_id} on a terminal; attach: sbx process attach ${doc.process_id}`,
    );
    return ExitCodes.ok;
  }
  ctx.io.err(explain(doc));
  return doc.exit ?? ExitCodes.inDoubt;
}

/** Bound to `sbx process start` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => {
  const opts = parseStartOptions(
    c.args,
    c.optsWithGlobals() as RawStartFlags,
    ctx.config.read().settings.sandbox,
    ctx.io.localTerminal()?.size(),
  );
  // -s sbx_4k2m (a prefix of a sandbox id) is made whole before the receipt records it.
  return run({ ...opts, sandbox: await wholeSandboxRef(ctx, opts.sandbox) }, ctx);
};
