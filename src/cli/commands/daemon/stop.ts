// sbx daemon stop: ends the local daemon (SIGTERM: it ends what runs, records it, and
// exits), and says what it ended. What runs is read from the daemon just before: its
// supervised processes (and which of them start again when the daemon starts: only
// restart `always`, docs/protocol.md "Processes"), running executions and jobs.

import { localEndpoint } from "../../../client/endpoint.js";
import { SbxError } from "../../../common/errors.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import type { ProcessRecord } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { counted } from "../../render/words.js";
import { isAlive, readDaemonPid } from "./pid.js";

/** What a daemon runs, as it said just before it was stopped. */
export interface Running {
  processes: ProcessRecord[];
  executions: number;
  jobs: number;
}

export async function run(_opts: Record<string, never>, ctx: Context): Promise<number> {
  const pid = readDaemonPid(ctx.paths.pidFile);
  if (pid === null || !isAlive(pid)) {
    ctx.io.info("sbx: the daemon is not running");
    return ExitCodes.ok;
  }
  // Asked first (a daemon that does not answer is stopped all the same; then nothing is said of it).
  const running = await whatRuns(ctx).catch(() => null);
  process.kill(pid, "SIGTERM");
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    if (!isAlive(pid)) {
      ctx.io.info(`sbx: daemon (pid ${pid}) stopped${running === null ? "" : `; ${describeEnded(running)}`}`);
      return ExitCodes.ok;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new SbxError("daemon_stop_timeout", `the daemon (pid ${pid}) did not stop within 20s`, {
    exitCode: ExitCodes.notStarted,
    hint: `kill -9 ${pid}; running executions will be marked outcome unknown at the next start`,
  });
}

/** Reads from the local daemon what stopping it will end. */
async function whatRuns(ctx: Context): Promise<Running> {
  const [{ HttpClient }, { Api }, { ProcessesApi }, { JobsApi }] = await Promise.all([
    import("../../../client/http.js"),
    import("../../../client/api.js"),
    import("../../../client/processes.js"),
    import("../../../client/jobs.js"),
  ]);
  const http = new HttpClient({ ...localEndpoint(ctx.paths), autoStart: false });
  try {
    const api = new Api(http);
    const [storage, sandboxes] = await Promise.all([api.storage(), api.listSandboxes()]);
    const processes: ProcessRecord[] = [];
    let jobs = 0;
    for (const s of sandboxes) {
      processes.push(...(await new ProcessesApi(http).list(s.sandbox_id)).filter((p) => p.state !== "exited"));
      jobs += (await new JobsApi(http).list(s.sandbox_id, { status: "running" })).jobs.length;
    }
    return { processes, executions: storage.executions.running, jobs };
  } finally {
    await http.close();
  }
}

/** "it ended 2 supervised processes: web (restart always: starts again with the daemon), …". */
export function describeEnded(r: Running): string {
  const parts: string[] = [];
  if (r.processes.length > 0) {
    const each = r.processes.map((p) => {
      const name = p.name === null ? p.process_id : `${p.name} (${p.process_id})`;
      return p.restart.policy === "always"
        ? `${name}, restart always: starts again when the daemon starts`
        : `${name}, restart ${p.restart.policy}: stays ended; \`sbx process start\` it again`;
    });
    parts.push(`${counted(r.processes.length, "supervised process", "supervised processes")} (${each.join("; ")})`);
  }
  if (r.executions > 0) parts.push(`${counted(r.executions, "running execution")} (cancelled: backend_shutdown)`);
  if (r.jobs > 0) parts.push(`${counted(r.jobs, "running job")} (interrupted; queued jobs run when it starts)`);
  return parts.length === 0 ? "nothing was running" : `it ended ${parts.join(", ")}`;
}

/** Bound to `sbx daemon stop` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx) => run({}, ctx);
