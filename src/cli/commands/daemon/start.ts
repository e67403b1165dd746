// sbx daemon start: start the local daemon in the background.

import { localEndpoint } from "../../../client/endpoint.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { refusalOf, spawnDaemon, waitForDaemon } from "../../daemon-launcher.js";
import { BackendError } from "../../../common/errors.js";
import { daemonStatus } from "./status.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export async function run(
  opts: { idleExit: string | undefined; sandboxIdleTimeout: string | undefined },
  ctx: Context,
): Promise<number> {
  const before = await daemonStatus(ctx);
  if (before.running) {
    ctx.io.info(`sbx: the daemon is already running (pid ${before.pid ?? "?"})`);
    return ExitCodes.ok;
  }
  const args = [
    ...(opts.idleExit === undefined ? [] : ["--idle-exit", opts.idleExit]),
    ...(opts.sandboxIdleTimeout === undefined ? [] : ["--sandbox-idle-timeout", opts.sandboxIdleTimeout]),
  ];
  const pid = spawnDaemon(ctx, args);
  const [{ HttpClient }, { Api }] = await Promise.all([
    import("../../../client/http.js"),
    import("../../../client/api.js"),
  ]);
  const http = new HttpClient({ ...localEndpoint(ctx.paths), autoStart: false });
  const progress = ctx.io.progress("starting the daemon…", { elapsed: true });
  try {
    if (!(await waitForDaemon(new Api(http), 20_000, refusalOf(ctx, pid)))) {
      throw new BackendError("daemon_unavailable", "the daemon did not start", null, `see ${ctx.paths.daemonLog}`);
    }
  } finally {
    progress.stop();
    await http.close();
  }
  const after = await daemonStatus(ctx);
  ctx.io.info(`sbx: daemon running (pid ${after.pid ?? "?"}) on ${after.socket}`);
  return ExitCodes.ok;
}

/** Bound to `sbx daemon start` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  run({ idleExit: c.opts().idleExit, sandboxIdleTimeout: c.opts().sandboxIdleTimeout }, ctx);
