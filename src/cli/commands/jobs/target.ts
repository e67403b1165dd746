// What every jobs verb needs: the jobs API of the current backend, the sandbox the
// jobs live in (-s, else the `sandbox` setting, else default), and the job an id or a
// unique prefix of one names.

import { JobsApi } from "../../../client/jobs.js";
import { NotFoundError } from "../../../common/errors.js";
import type { Context } from "../../context.js";
import { pickByPrefix } from "../../id-prefix.js";

export async function jobsApi(ctx: Context): Promise<JobsApi> {
  return new JobsApi((await ctx.api()).http);
}

/** The job `ref` names in the sandbox: its id, or a unique prefix of one (job_3f2a). */
export async function jobIdFor(api: JobsApi, sandbox: string, ref: string): Promise<string> {
  const { jobs } = await api.list(sandbox, { idPrefix: ref });
  return pickByPrefix(
    ref,
    jobs.map((j) => j.job_id),
    "jobs",
    () =>
      new NotFoundError(`no job ${ref} in sandbox ${sandbox}`, `see \`sbx jobs list -s ${sandbox}\``, "job_not_found"),
  );
}
