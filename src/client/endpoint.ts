// Which backend to talk to and how: resolved from flag > environment > profile > default.

import { ConfigError, SbxError } from "../common/errors.js";
import { ExitCodes } from "../common/exit-codes.js";
import { type ConfigStore, LOCAL_PROFILE } from "../config/config.js";
import type { SbxPaths } from "../config/paths.js";

export interface Endpoint {
  /**
   * The profile whose backend this is, as receipts record it; null when --api-url or
   * SBX_API_URL sends the request somewhere the profile does not point.
   */
  profile: string | null;
  /** As recorded in receipts: `unix:/path/daemon.sock` or `https://host:port`. */
  apiUrl: string;
  /** HTTP origin used for requests (for a Unix socket, a placeholder host). */
  origin: string;
  socketPath: string | null;
  apiKey: string | null;
  /** True when this is the embedded backend that sbx starts on demand. */
  autoStart: boolean;
  /**
   * The key may go over plain http:// to a host other than loopback: this is the URL of
   * a profile added with --insecure (keyInClearProblem).
   */
  insecure: boolean;
}

export interface EndpointFlags {
  profile?: string | undefined;
  apiUrl?: string | undefined;
}

/** Parses an API URL: `unix:/path.sock`, `http(s)://host[:port][/api/v1]`. */
export function parseApiUrl(url: string): { apiUrl: string; origin: string; socketPath: string | null } {
  if (url.startsWith("unix:")) {
    const socketPath = url.slice("unix:".length).replace(/^\/\//, "");
    if (!socketPath.startsWith("/")) throw new ConfigError(`unix API URL needs an absolute socket path: ${url}`);
    return { apiUrl: `unix:${socketPath}`, origin: "http://localhost", socketPath };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(
      `not a valid API URL: ${JSON.stringify(url)}`,
      "use https://host[:port] or unix:/path/to.sock",
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ConfigError(`unsupported API URL scheme ${parsed.protocol} in ${url}`, "use http(s):// or unix:");
  }
  if (parsed.username || parsed.password) {
    throw new ConfigError(
      "API URLs must not carry credentials",
      "pass the key on stdin: sbx profile add NAME --api-url URL --api-key-stdin",
    );
  }
  if (parsed.pathname !== "/" && parsed.pathname.replace(/\/+$/, "") !== "/api/v1") {
    // Requests always go to /api/v1/… at the origin; a prefix would be silently dropped.
    throw new ConfigError(
      `API URL ${url} has a path sbx cannot use`,
      "give the origin, e.g. https://host:8443 (or …/api/v1)",
    );
  }
  if (parsed.search || parsed.hash) throw new ConfigError(`API URL ${url} must not have a query or fragment`);
  return { apiUrl: parsed.origin, origin: parsed.origin, socketPath: null };
}

/** The profile in effect: flag > environment > config > `local`. */
export function selectedProfile(flags: EndpointFlags, env: NodeJS.ProcessEnv, config: ConfigStore): string {
  return flags.profile || env.SBX_PROFILE || config.read().current_profile || LOCAL_PROFILE;
}

export function resolveEndpoint(
  flags: EndpointFlags,
  env: NodeJS.ProcessEnv,
  config: ConfigStore,
  paths: SbxPaths,
): Endpoint {
  const doc = config.read();
  const profile = selectedProfile(flags, env, config);
  const stored = doc.profiles[profile];
  if (!stored && profile !== LOCAL_PROFILE) {
    throw new ConfigError(`no profile named ${JSON.stringify(profile)}`, "see `sbx profile list`");
  }
  const local = localEndpoint(paths);
  const own = stored ? parseApiUrl(stored.api_url) : local;
  const explicitUrl = flags.apiUrl || env.SBX_API_URL;
  if (explicitUrl) {
    const u = parseApiUrl(explicitUrl);
    // Elsewhere than the profile points: the receipt must not carry the profile's name,
    // and the profile's stored key is not sent there (only SBX_API_KEY is).
    const same = u.apiUrl === own.apiUrl;
    return {
      profile: same ? profile : null,
      ...u,
      apiKey: env.SBX_API_KEY || (same ? config.readApiKey(profile) : undefined) || null,
      autoStart: same && !stored,
      insecure: same && stored?.insecure === true,
    };
  }
  const apiKey = env.SBX_API_KEY || config.readApiKey(profile) || null;
  if (stored) return { profile, ...own, apiKey, autoStart: false, insecure: stored.insecure === true };
  return { ...local, profile, apiKey };
}

/**
 * Whether an http(s) URL's host is this machine's loopback (localhost, 127.0.0.0/8,
 * ::1): what is sent there never crosses a network.
 */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Whether an API URL would carry a key in clear over a network: plain http:// to a host other than loopback. */
export function sendsInClear(apiUrl: string): boolean {
  return apiUrl.startsWith("http:") && !isLoopbackUrl(apiUrl);
}

/**
 * An API key is never sent over plain http:// to a host other than loopback, unless
 * the profile was added with --insecure: anyone on the path could read it and act
 * with it. Said before connecting (exit 125, nothing sent).
 */
export function keyInClearProblem(endpoint: Endpoint): SbxError | null {
  if (endpoint.apiKey === null || endpoint.insecure || !sendsInClear(endpoint.apiUrl)) return null;
  const host = new URL(endpoint.apiUrl).host;
  const how =
    endpoint.profile === null
      ? "or, on a network you trust, save it as a profile with --insecure and use --profile:\n" +
        `  sbx profile add NAME --api-url ${endpoint.apiUrl} --api-key-stdin --insecure`
      : `or, on a network you trust, add profile ${endpoint.profile} again with --insecure`;
  return new SbxError(
    "insecure_transport",
    `refusing to send the API key in clear over http:// to ${host} (not this machine): ` +
      "anyone on the way could read it and use it; nothing was sent",
    { exitCode: ExitCodes.usage, hint: `use https://, ${how}` },
  );
}

/** The embedded backend on this user's socket, whatever flags or environment say. */
export function localEndpoint(paths: SbxPaths): Endpoint {
  return {
    profile: LOCAL_PROFILE,
    apiUrl: `unix:${paths.socketPath}`,
    origin: "http://localhost",
    socketPath: paths.socketPath,
    apiKey: null,
    autoStart: true,
    insecure: false,
  };
}
