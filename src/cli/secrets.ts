// The API keys this sbx knows (SBX_API_KEY and every key in the credentials file),
// kept out of everything shown or stored; never redacted from what is parsed.

import { redactSecrets } from "../client/redact.js";
import type { ConfigStore } from "../config/config.js";

export function knownSecrets(env: NodeJS.ProcessEnv, config: ConfigStore | null): string[] {
  const keys = [env.SBX_API_KEY ?? ""];
  try {
    if (config !== null) keys.push(...config.allApiKeys());
  } catch {
    // an unreadable credentials file has no keys to hide
  }
  return keys.filter((k) => k !== "");
}

/** A message or document about to be shown, without any known key. */
export function redactForDisplay(ctx: { env: NodeJS.ProcessEnv; config: ConfigStore }, text: string): string {
  return redactSecrets(text, knownSecrets(ctx.env, ctx.config));
}
