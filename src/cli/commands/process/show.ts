import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { commandOf } from "./list.js";
import { resolveProcess } from "./target.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function runShow(
  opts: { ref: string; sandbox: string | undefined; json: boolean },
  ctx: Context,
): Promise<number> {
  const t = await resolveProcess(ctx, opts.ref, opts.sandbox);
  const p = await t.api.get(t.sandbox, t.processId);
  if (opts.json) {
    printJson(ctx, p);
    return ExitCodes.ok;
  }
  const rows: Array<[string, string]> = [
    ["process", p.process_id],
    ["name", p.name ?? "-"],
    ["command", commandOf(p)],
    ["state", p.state],
    ["outcome", p.outcome],
    ["exit_code", p.exit_code === null ? "-" : String(p.exit_code)],
    ["signal", p.signal ?? "-"],
    ["end_reason", p.end_reason ?? "-"],
    ["os_pid", p.os_pid === null ? "-" : String(p.os_pid)],
    ["restarts", `${p.restarts} (policy ${p.restart.policy}, max ${p.restart.max_restarts})`],
    ["stdin", p.stdin_enabled ? "enabled" : "/dev/null"],
    ["created_at", p.created_at],
    ["started_at", p.started_at ?? "-"],
    ["ended_at", p.ended_at ?? "-"],
  ];
  for (const [k, v] of rows) ctx.io.out(`${k}\t${v}`);
  return ExitCodes.ok;
}

/** Bound to `sbx process show` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  runShow({ ref: c.args[0]!, sandbox: c.opts().sandbox, json: c.optsWithGlobals().json === true }, ctx);
