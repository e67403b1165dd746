// sbx daemon status

import { localEndpoint } from "../../../client/endpoint.js";
import { checkLocalDaemonDirs } from "../../../config/paths.js";
import type { Health, IsolationStatus, LimitStatus, StorageReport } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { formatBytes } from "../../render/bytes.js";
import { limitLines } from "../../render/limits.js";
import { counted } from "../../render/words.js";
import { printJson } from "../../render/outcome.js";
import { isAlive, readDaemonPid } from "./pid.js";
import { readStartFailure, type StartFailure } from "../../daemon-start-failure.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export interface DaemonStatus {
  running: boolean;
  pid: number | null;
  socket: string;
  version: string | null;
  started_at: string | null;
  /** This boot of the daemon: what its runs record and receipts keep (docs/protocol.md, "Ownership fences"). */
  boot: string | null;
  /** The sandbox drivers the daemon found at its start: what new sandboxes get. */
  isolation: IsolationStatus | null;
  /** Each resource limit: what new sandboxes get, and whether and how it is enforced. */
  limits: LimitStatus[] | null;
  /** What the daemon keeps and its size (null when it is not running or did not say). */
  storage: StorageReport | null;
  /** Why its last start was refused, when it is not running (e.g. a damaged backend.db); else null. */
  start_failure: StartFailure | null;
}

export async function daemonStatus(ctx: Context, opts: { storage?: boolean } = {}): Promise<DaemonStatus> {
  checkLocalDaemonDirs(ctx.paths);
  const pid = readDaemonPid(ctx.paths.pidFile);
  const [{ HttpClient }, { Api }] = await Promise.all([
    import("../../../client/http.js"),
    import("../../../client/api.js"),
  ]);
  const http = new HttpClient({ ...localEndpoint(ctx.paths), autoStart: false });
  const api = new Api(http);
  let health: Health | null = null;
  let storage: StorageReport | null = null;
  try {
    health = await api.health(2_000);
    if (opts.storage) storage = await api.storage().catch(() => null);
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
    boot: health?.boot ?? null,
    isolation: health?.isolation ?? null,
    limits: health?.limits ?? null,
    storage,
    start_failure: health === null ? readStartFailure(ctx.paths) : null,
  };
}

/** One line saying what is kept, how big it is, and for how long. */
export function storageLine(s: StorageReport): string {
  const days = (ms: number) => `${Math.round((ms / 86_400_000) * 10) / 10}d`;
  return [
    "kept",
    `${counted(s.executions.kept, "execution")} (${s.executions.running} running${
      s.executions.outputs_dropped ? `, ${s.executions.outputs_dropped} without their full output` : ""
    }), ${counted(s.processes.kept, "process", "processes")} (${s.processes.running} running)`,
    `${formatBytes(s.bytes.total)} of ${formatBytes(s.retention.retain_bytes)} (database ${formatBytes(s.bytes.database)}, output ${formatBytes(
      s.bytes.execution_output,
    )}, process logs ${formatBytes(s.bytes.process_logs)})`,
    `finished work kept ${days(s.retention.retain_ms)}`,
  ].join("\t");
}

/** What new sandboxes get, and why not bwrap when it cannot run. */
function describeIsolation(i: IsolationStatus): string {
  if (i.default === "bwrap") return `bwrap (${i.bwrap.version ?? "bubblewrap"}) for new sandboxes`;
  return `none for new sandboxes (NOT ISOLATED): ${i.bwrap.reason ?? "bwrap is not available"}`;
}

export async function run(opts: { json: boolean }, ctx: Context): Promise<number> {
  const s = await daemonStatus(ctx, { storage: true });
  if (opts.json) printJson(ctx, s);
  else if (s.running) {
    ctx.io.out(`running\tpid ${s.pid ?? "?"}\tsince ${s.started_at}\t${s.socket}${s.boot ? `\t${s.boot}` : ""}`);
    if (s.isolation) ctx.io.out(`isolation\t${describeIsolation(s.isolation)}`);
    for (const [k, v] of limitLines(s.limits ?? [], true)) ctx.io.out(`${k}\t${v}`);
    const userNet = s.isolation?.user_network;
    if (userNet) {
      ctx.io.out(
        `network\t${userNet.available ? `--network (user) through ${userNet.version ?? "a user-mode stack"}` : `--network (user) not available: ${userNet.reason ?? "unknown"}; --network host works`}`,
      );
    }
    if (s.storage) ctx.io.out(storageLine(s.storage));
  } else if (s.start_failure) {
    const f = s.start_failure;
    ctx.io.out(`not running\t${s.socket}\tits last start (${f.at}) was refused: ${f.message}`);
    if (f.hint) ctx.io.info(`sbx: ${f.hint}`);
  } else ctx.io.out(`not running\t${s.socket}`);
  // Not running: nothing can be reached (75, as for any backend that cannot be), never a
  // command's 1-123; a start refused for its state (a damaged backend.db) exits as that did (74).
  if (s.running) return ExitCodes.ok;
  return s.start_failure?.exit === ExitCodes.storeUnusable ? ExitCodes.storeUnusable : ExitCodes.notStarted;
}

/** Bound to `sbx daemon status` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ json: c.optsWithGlobals().json === true }, ctx);
