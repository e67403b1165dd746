// sbx profile add

import { LOCAL_PROFILE } from "../../../config/config.js";
import { parseApiUrl } from "../../../client/endpoint.js";
import { isValidName } from "../../../protocol/validate.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { UsageError } from "../../../common/errors.js";
import { printJson } from "../../render/outcome.js";
import { ExitCodes } from "../../../common/exit-codes.js";

export interface AddOptions {
  name: string;
  apiUrl: string;
  keyFromStdin: boolean;
  use: boolean;
  json: boolean;
}

export function checkProfileName(name: string): string {
  if (!isValidName(name)) throw new UsageError(`invalid profile name ${JSON.stringify(name)}: letters, digits, _ . -`);
  return name;
}

export function parseAddOptions(
  name: string,
  raw: { apiUrl?: string; apiKeyStdin?: boolean; use?: boolean; json?: boolean },
): AddOptions {
  checkProfileName(name);
  if (name === LOCAL_PROFILE) throw new UsageError("`local` is the embedded backend and cannot be redefined");
  if (raw.apiUrl === undefined) throw new UsageError("--api-url URL is required");
  parseApiUrl(raw.apiUrl);
  return {
    name,
    apiUrl: raw.apiUrl,
    keyFromStdin: raw.apiKeyStdin === true,
    use: raw.use === true,
    json: raw.json === true,
  };
}

export async function run(opts: AddOptions, ctx: Context): Promise<number> {
  let key: string | undefined;
  if (opts.keyFromStdin) {
    key = await ctx.io.readSecret("API key (not shown): ");
    if (key === "" || /\s/.test(key))
      throw new UsageError("the API key read from stdin is empty or contains white space");
  }
  ctx.config.update((doc) => {
    doc.profiles[opts.name] = { api_url: parseApiUrl(opts.apiUrl).apiUrl };
    if (opts.use) doc.current_profile = opts.name;
  });
  if (key !== undefined) ctx.config.setApiKey(opts.name, key);
  const summary = {
    profile: opts.name,
    api_url: parseApiUrl(opts.apiUrl).apiUrl,
    api_key: key !== undefined,
    current: opts.use,
  };
  if (opts.json) printJson(ctx, summary);
  else
    ctx.io.info(
      `sbx: saved profile ${opts.name}${key !== undefined ? " (with an API key)" : ""}${opts.use ? "; now in use" : ""}`,
    );
  return ExitCodes.ok;
}

/** Bound to `sbx profile add` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseAddOptions(c.args[0]!, c.optsWithGlobals()), ctx);
