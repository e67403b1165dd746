// Sandbox routes: POST /sandbox/create, GET /sandboxes, GET, PATCH and DELETE /sandbox/{id},
// POST /sandbox/{id}/stop and /start (its live environment), /pause and /resume (its processes frozen).

import type {
  SandboxCreateRequest,
  SandboxList,
  SandboxStopped,
  SandboxUpdateRequest,
} from "../../../protocol/types.js";
import { type LabelRequirement, parseSelector } from "../../../protocol/labels.js";
import { checkSandboxCreateRequest, checkSandboxUpdateRequest } from "../../../protocol/validate.js";
import type { RequestContext } from "../context.js";
import { invalidRequest, jsonReply, parseJsonBody, type Reply } from "../replies.js";
import { runFixedAnswerMutation } from "../idempotency.js";
import { egressReport, noIsolationWarning, toSandbox } from "../../sandboxes/index.js";

export function createSandbox(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const body = parseJsonBody(ctx.body, {});
    const problem = checkSandboxCreateRequest(body);
    if (problem) throw invalidRequest(problem.field, problem.message);
    const { sandboxes, drivers } = ctx.services;
    const row = await sandboxes.create(body as SandboxCreateRequest);
    if (row.isolation === "none") ctx.warn(noIsolationWarning(row.name, drivers.probe("bwrap").reason));
    return jsonReply(201, sandboxes.withPorts(row));
  });
}

/** Every sandbox, or with `?selector=` those whose labels satisfy all of it (docs/protocol.md, "Labels"). */
export async function listSandboxes(ctx: RequestContext): Promise<Reply> {
  let selector: LabelRequirement[];
  try {
    selector = parseSelector(ctx.query.get("selector") ?? "");
  } catch (err) {
    throw invalidRequest("selector", (err as Error).message);
  }
  const body: SandboxList = { sandboxes: ctx.services.sandboxes.list(selector) };
  return jsonReply(200, body);
}

/**
 * The sandbox with its driver and host workspace (not over TCP: a remote caller learns
 * no path of this host); `?usage=true` adds the workspace's size on disk.
 */
export async function getSandbox(ctx: RequestContext): Promise<Reply> {
  const { sandboxes } = ctx.services;
  const row = sandboxes.resolve(ctx.params.id!, { createDefault: true, warn: ctx.warn });
  const details = sandboxes.details(row, ctx.query.get("usage") === "true");
  return jsonReply(200, ctx.overTcp ? { ...details, host_workspace: null } : details);
}

/** What a sandbox uses now (sbx; docs/operations.md, "Sandbox stats"): one sample. */
export async function sandboxStatsReply(ctx: RequestContext): Promise<Reply> {
  const { sandboxes } = ctx.services;
  const row = sandboxes.resolve(ctx.params.id!, { createDefault: true, warn: ctx.warn });
  return jsonReply(200, sandboxes.stats(row));
}

/** GET /sandbox/{id}/egress (sbx): its recent connections through its egress proxy (docs/network.md). */
export async function getSandboxEgress(ctx: RequestContext): Promise<Reply> {
  const { sandboxes, drivers } = ctx.services;
  const row = sandboxes.resolve(ctx.params.id!, { createDefault: false });
  return jsonReply(200, egressReport(row, drivers.egress, Number(ctx.query.get("since") ?? 0)));
}

/**
 * Changes a sandbox's labels and limits (sbx): labels at once; limits stored for its next runs, and applied at once to
 * what runs in it where the mechanism allows (cgroups: memory, pids, CPU). Answers the
 * sandbox as GET does. Refused (limit_unavailable) for a limit this backend cannot enforce.
 */
export function updateSandbox(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const body = parseJsonBody(ctx.body, {});
    const problem = checkSandboxUpdateRequest(body);
    if (problem) throw invalidRequest(problem.field, problem.message);
    const { sandboxes } = ctx.services;
    const row = sandboxes.resolve(ctx.params.id!, { createDefault: true, warn: ctx.warn });
    const updated = sandboxes.update(row, body as SandboxUpdateRequest);
    const details = sandboxes.details(updated, false);
    return jsonReply(200, ctx.overTcp ? { ...details, host_workspace: null } : details);
  });
}

/**
 * Answers the sandbox as it was, with status "deleted", and removes its workspace.
 * Refused (409 sandbox_busy) while something runs in it, unless `?force=true`: then
 * its executions are cancelled and its processes stopped first. `default` is not
 * created just to be deleted.
 */
export function deleteSandbox(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const { sandboxes, runs, executions, processes, jobs } = ctx.services;
    const row = sandboxes.resolve(ctx.params.id!, { createDefault: false });
    // A paused sandbox's processes end only once thawed.
    sandboxes.resume(row);
    if (ctx.query.get("force") === "true") {
      // Executions cancelled, processes stopped, jobs cancelled (queued ones first); once their ends are stored.
      sandboxes.disconnect(row, "the sandbox was removed");
      await runs.endAllIn(row.sandbox_id);
    }
    const id = row.sandbox_id;
    sandboxes.remove(row, {
      jobs: jobs.unfinishedIn(id),
      executions: executions.runningIn(id),
      processes: processes.unendedIn(id),
    });
    return jsonReply(200, { ...toSandbox(row), status: "deleted" });
  });
}

/**
 * Ends the sandbox's environment and everything in it: its executions cancelled, its
 * processes stopped, its jobs cancelled (queued ones too), then what is left killed
 * with the environment. The workspace stays; the next command starts it again.
 */
export function stopSandbox(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const { sandboxes, runs } = ctx.services;
    const row = sandboxes.resolve(ctx.params.id!, { createDefault: false });
    const live = runs.countIn(row.sandbox_id);
    // A paused sandbox's processes end only once thawed.
    sandboxes.resume(row);
    // Connections to its ports end first, saying so (not as if their server had closed them).
    sandboxes.disconnect(row, "the sandbox stopped");
    const unstarted = await runs.endAllIn(row.sandbox_id, "sandbox_stopped");
    const stopped = await sandboxes.stopEnvironment(row);
    const details = sandboxes.details(row, false);
    const body: SandboxStopped = {
      sandbox_id: row.sandbox_id,
      name: row.name,
      was_running: stopped.was_running,
      ended: { executions: live.execution, processes: live.process, jobs: live.job + unstarted, other: stopped.ended },
      environment: details.environment ?? { state: "stopped", started_at: null, init_pid: null, processes: 0 },
    };
    return jsonReply(200, body);
  });
}

/** Starts the sandbox's environment (when its driver keeps one); answers the sandbox once it runs. */
export function startSandbox(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const { sandboxes } = ctx.services;
    const row = sandboxes.resolve(ctx.params.id!, { createDefault: true, warn: ctx.warn });
    sandboxes.ensureWorkspace(row.sandbox_id, row);
    await sandboxes.startEnvironment(row);
    const details = sandboxes.details(row, false);
    return jsonReply(200, ctx.overTcp ? { ...details, host_workspace: null } : details);
  });
}

/**
 * Freezes every process of the sandbox (docs/operations.md, "Pause and resume");
 * answers the sandbox once they all stopped. Refused where no freezer holds them
 * (pause_unavailable) and when its environment does not run (sandbox_not_running).
 */
export function pauseSandbox(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const { sandboxes } = ctx.services;
    const row = sandboxes.resolve(ctx.params.id!, { createDefault: false });
    await sandboxes.pause(row);
    const details = sandboxes.details(row, false);
    return jsonReply(200, ctx.overTcp ? { ...details, host_workspace: null } : details);
  });
}

/** Thaws the sandbox's processes: they go on where they stopped. One not paused is answered as it is. */
export function resumeSandbox(ctx: RequestContext): Promise<Reply> {
  return runFixedAnswerMutation(ctx, async () => {
    const { sandboxes } = ctx.services;
    const row = sandboxes.resolve(ctx.params.id!, { createDefault: false });
    sandboxes.resume(row);
    const details = sandboxes.details(row, false);
    return jsonReply(200, ctx.overTcp ? { ...details, host_workspace: null } : details);
  });
}
