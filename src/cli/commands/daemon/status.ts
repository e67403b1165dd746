// sbx daemon status

import type { Command } from "commander";
import { localEndpoint } from "../../../client/endpoint.js";
import type { Health, IsolationStatus } from "../../../protocol/types.js";
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
  /** The sandbox drivers the daemon found at its start: what new sandboxes get. */
  isolation: IsolationStatus | null;
}

export async function daemonStatus(ctx: Context): Promise<DaemonStatus> {
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
    isolation: health?.isolation ?? null,
  };
}

/** What new sandboxes get, and why not bwrap when it cannot run. */
function describeIsolation(i: IsolationStatus): string {
  if (i.default === "bwrap") return `bwrap (${i.bwrap.version ?? "bubblewrap"}) for new sandboxes`;
  return `none for new sandboxes (NOT ISOLATED): ${i.bwrap.reason ?? "bwrap is not available"}`;
}

export async function run(opts: { json: boolean }, ctx: Context): Promise<number> {
  const s = await daemonStatus(ctx);
  if (opts.json) printJson(ctx, s);
  else if (s.running) {
    ctx.io.out(`running\tpid ${s.pid ?? "?"}\tsince ${s.started_at}\t${s.socket}`);
    if (s.isolation) ctx.io.out(`isolation\t${describeIsolation(s.isolation)}`);
  } else ctx.io.out(`not running\t${s.socket}`);
  return s.running ? 0 : 3;
}

export function register(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("status")
    .summary("say whether the local daemon is running (exit 3 when not)")
    .description("Ask the local daemon's socket for its health. Exits 0 when it answers, 3 when it does not.")
    .option("--json", "print {running, pid, socket, version, started_at, isolation}")
    .action(bind(async (ctx, c) => run({ json: c.optsWithGlobals().json === true }, ctx)));
  withExamples(cmd, [{ command: "sbx daemon status", description: "is it up?" }]);
}
