// sbx profile add

import { LOCAL_PROFILE } from "../../../config/config.js";
import { parseApiUrl, sendsInClear } from "../../../client/endpoint.js";
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
  /** The key may go over plain http:// to a host other than loopback. */
  insecure: boolean;
  use: boolean;
  json: boolean;
}

/**
 * A key for plain http:// to another machine is refused unless --insecure says the
 * network is trusted (docs/protocol.md, "Conventions"): 125, before the key is read.
 */
export function refuseKeyInClear(apiUrl: string, insecure: boolean): void {
  const url = parseApiUrl(apiUrl).apiUrl;
  if (insecure || !sendsInClear(url)) return;
  throw new UsageError(
    `refusing a key for ${url}: it would travel in clear over http:// to another machine, where anyone on the way could read it; nothing was saved`,
    "use https://, or on a network you trust add --insecure",
  );
}

export function checkProfileName(name: string): string {
  if (!isValidName(name)) throw new UsageError(`invalid profile name ${JSON.stringify(name)}: letters, digits, _ . -`);
  return name;
}

export function parseAddOptions(
  name: string,
  raw: { apiUrl?: string; apiKeyStdin?: boolean; insecure?: boolean; use?: boolean; json?: boolean },
): AddOptions {
  checkProfileName(name);
  if (name === LOCAL_PROFILE) throw new UsageError("`local` is the embedded backend and cannot be redefined");
  if (raw.apiUrl === undefined) throw new UsageError("--api-url URL is required");
  parseApiUrl(raw.apiUrl);
  if (raw.apiKeyStdin === true) refuseKeyInClear(raw.apiUrl, raw.insecure === true);
  return {
    name,
    apiUrl: raw.apiUrl,
    keyFromStdin: raw.apiKeyStdin === true,
    insecure: raw.insecure === true,
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
    doc.profiles[opts.name] = { api_url: parseApiUrl(opts.apiUrl).apiUrl, ...(opts.insecure && { insecure: true }) };
    if (opts.use) doc.current_profile = opts.name;
  });
  if (key !== undefined) ctx.config.setApiKey(opts.name, key);
  const summary = {
    profile: opts.name,
    api_url: parseApiUrl(opts.apiUrl).apiUrl,
    api_key: key !== undefined,
    insecure: opts.insecure,
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
