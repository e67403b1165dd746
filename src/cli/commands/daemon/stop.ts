import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { SbxError } from "../../../common/errors.js";
import { isAlive, readDaemonPid } from "./pid.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function run(_opts: Record<string, never>, ctx: Context): Promise<number> {
  const pid = readDaemonPid(ctx.paths.pidFile);
  if (pid === null || !isAlive(pid)) {
    ctx.io.info("sbx: the daemon is not running");
    return ExitCodes.ok;
  }
  process.kill(pid, "SIGTERM");
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    if (!isAlive(pid)) {
      ctx.io.info(`sbx: daemon (pid ${pid}) stopped`);
      return ExitCodes.ok;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new SbxError("daemon_stop_timeout", `the daemon (pid ${pid}) did not stop within 20s`, {
    exitCode: ExitCodes.notStarted,
    hint: `kill -9 ${pid}; running executions will be marked outcome unknown at the next start`,
  });
}

/** Bound to `sbx daemon stop` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx) => run({}, ctx);
