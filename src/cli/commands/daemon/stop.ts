// sbx daemon stop

import type { Command } from "commander";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { SbxError } from "../../errors.js";
import { isAlive, readDaemonPid } from "./pid.js";

export async function run(_opts: Record<string, never>, ctx: Context): Promise<number> {
  const pid = readDaemonPid(ctx.paths.pidFile);
  if (pid === null || !isAlive(pid)) {
    ctx.io.info("sbx: the daemon is not running");
    return 0;
  }
  process.kill(pid, "SIGTERM");
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    if (!isAlive(pid)) {
      ctx.io.info(`sbx: daemon (pid ${pid}) stopped`);
      return 0;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new SbxError("daemon_stop_timeout", `the daemon (pid ${pid}) did not stop within 20s`, {
    hint: `kill -9 ${pid}; running executions will be marked outcome unknown at the next start`,
  });
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("stop")
    .summary("stop the local daemon")
    .description(
      "Ask the daemon to stop (SIGTERM) and wait until it has. Running commands are ended (TERM, then\n" +
        "KILL) and recorded as such.",
    )
    .action(bind(async (ctx) => run({}, ctx)));
  withExamples(cmd, [{ command: "sbx daemon stop", description: "stop it" }]);
}
