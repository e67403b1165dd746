// sbx daemon status

import type { Command } from "commander";
import { localEndpoint } from "../../../client/endpoint.js";
import { checkLocalDaemonDirs } from "../../../config/paths.js";
import type { Health } from "../../../protocol/types.js";
import { type Bind, withExamples } from "../../command.js";
import type { Context } from "../../context.js";
import { printJson } from "../../render/outcome.js";
import { isAlive, readDaemonPid } from "./pid.js";

export interface DaemonStatus {
  running: boolean;
  pid: number | null;
  socket: string;
  version: string | null;
  started_at: string | null;
}

export async function daemonStatus(ctx: Context): Promise<DaemonStatus> {
  checkLocalDaemonDirs(ctx.paths);
  const pid = readDaemonPid(ctx.paths.pidFile);
  const [{ HttpClient }, { Api }] = await Promise.all([
    import("../../../client/http.js"),
    import("../../../client/api.js"),
  ]);
  const http = new HttpClient({ ...localEndpoint(ctx.paths), autoStart: false });
  let health: Health | null = null;
  try {
    health = await new Api(http).health(2_000);
  } catch {
    health = null;
  } finally {
    await http.close();
  }
  return {
    running: health !== null,
    pid: pid !== null && isAlive(pid) ? pid : null,
    socket: ctx.paths.socketPath,
    version: health?.version ?? null,
    started_at: health?.started_at ?? null,
  };
}

export async function run(opts: { json: boolean }, ctx: Context): Promise<number> {
  const s = await daemonStatus(ctx);
  if (opts.json) printJson(ctx, s);
  else if (s.running) ctx.io.out(`running\tpid ${s.pid ?? "?"}\tsince ${s.started_at}\t${s.socket}`);
  else ctx.io.out(`not running\t${s.socket}`);
  return s.running ? 0 : 3;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("status")
    .summary("say whether the local daemon is running (exit 3 when not)")
    .description("Ask the local daemon's socket for its health. Exits 0 when it answers, 3 when it does not.")
    .option("--json", "print {running, pid, socket, version, started_at}")
    .action(bind(async (ctx, c) => run({ json: c.optsWithGlobals().json === true }, ctx)));
  withExamples(cmd, [{ command: "sbx daemon status", description: "is it up?" }]);
}
