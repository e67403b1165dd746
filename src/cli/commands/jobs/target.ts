// What every jobs verb needs: the jobs API of the current backend and the sandbox the
// jobs live in (-s, else the `sandbox` setting, else default).

import { JobsApi } from "../../../client/jobs.js";
import type { Context } from "../../context.js";

export async function jobsApi(ctx: Context): Promise<JobsApi> {
  return new JobsApi((await ctx.api()).http);
}
