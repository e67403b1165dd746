// sbx init: choose the backend sbx uses. It asks (@inquirer/prompts, on stderr) only
// where a person can answer; otherwise the flags say everything, and without them it
// refuses and names the flags to pass.

import type { Endpoint } from "../../client/endpoint.js";
import { parseApiUrl, sendsInClear } from "../../client/endpoint.js";
import { redact } from "../../client/redact.js";
import { LOCAL_PROFILE } from "../../config/config.js";
import type { RunFn } from "../command.js";
import type { Context } from "../context.js";
import { ExitCodes } from "../../common/exit-codes.js";
import { ExitWith, UsageError } from "../../common/errors.js";
import { printJson } from "../render/outcome.js";
import { checkProfileName, refuseKeyInClear } from "./profile/add.js";
import { type ProfileSummary, profileSummaries } from "./profile/list.js";

export interface InitOptions {
  profileName: string | undefined;
  apiUrl: string | undefined;
  keyFromStdin: boolean;
  /** The key may go over plain http:// to a host other than loopback. */
  insecure: boolean;
  yes: boolean;
  json: boolean;
}

/** What init decided, by flags or by answers. */
export type InitPlan =
  | { backend: "embedded" }
  | { backend: "remote"; profile: string; apiUrl: string; key: string | undefined; insecure: boolean };

/** The --json document: the profile now in effect, and what the check found. */
export interface InitSummary extends ProfileSummary {
  backend: "embedded" | "remote";
  /** `starts_on_demand` for the embedded backend; `ok`/`unreachable` from a remote's health. */
  health: "starts_on_demand" | "ok" | "unreachable";
}

export const NON_INTERACTIVE_HINT =
  "pass flags instead: `sbx init --yes` (the embedded backend), or " +
  '`printf %s "$KEY" | sbx init --profile-name NAME --api-url URL --api-key-stdin` (a remote one)';

export function parseInitOptions(raw: {
  profileName?: string;
  apiUrl?: string;
  apiKeyStdin?: boolean;
  insecure?: boolean;
  yes?: boolean;
  json?: boolean;
}): InitOptions {
  const name = raw.profileName === undefined ? undefined : checkProfileName(raw.profileName);
  if (raw.apiUrl !== undefined) {
    parseApiUrl(raw.apiUrl);
    if (name === undefined) throw new UsageError("--api-url needs --profile-name NAME", NON_INTERACTIVE_HINT);
    if (name === LOCAL_PROFILE) throw new UsageError("`local` is the embedded backend and cannot be redefined");
  } else if (name !== undefined && name !== LOCAL_PROFILE) {
    throw new UsageError(
      `--profile-name ${name} needs --api-url URL`,
      "the embedded backend is the built-in profile `local`: sbx init --yes",
    );
  }
  if (raw.apiKeyStdin === true && raw.apiUrl === undefined) {
    throw new UsageError("--api-key-stdin goes with --api-url URL (the embedded backend needs no key)");
  }
  if (raw.insecure === true && raw.apiUrl === undefined) {
    throw new UsageError("--insecure goes with --api-url URL (the embedded backend needs no key)");
  }
  if (raw.apiUrl !== undefined && raw.apiKeyStdin === true) refuseKeyInClear(raw.apiUrl, raw.insecure === true);
  return {
    profileName: name,
    apiUrl: raw.apiUrl,
    keyFromStdin: raw.apiKeyStdin === true,
    insecure: raw.insecure === true,
    yes: raw.yes === true,
    json: raw.json === true,
  };
}

function answeredByFlags(opts: InitOptions): boolean {
  return opts.yes || opts.profileName !== undefined || opts.apiUrl !== undefined || opts.keyFromStdin;
}

async function planFromFlags(opts: InitOptions, ctx: Context): Promise<InitPlan> {
  if (opts.apiUrl === undefined) return { backend: "embedded" };
  let key: string | undefined;
  if (opts.keyFromStdin) {
    key = await ctx.io.readSecret("API key (not shown): ");
    if (key === "" || /\s/.test(key))
      throw new UsageError("the API key read from stdin is empty or contains white space");
  }
  return { backend: "remote", profile: opts.profileName!, apiUrl: opts.apiUrl, key, insecure: opts.insecure };
}

/** Inquirer's way of saying the person pressed Ctrl-C (or sbx was interrupted). */
function isPromptExit(err: unknown): boolean {
  const name = (err as Error | null)?.name;
  return name === "ExitPromptError" || name === "AbortPromptError";
}

function problemOf(check: () => unknown): string | true {
  try {
    check();
    return true;
  } catch (err) {
    return (err as Error).message;
  }
}

async function planFromPrompts(ctx: Context): Promise<InitPlan> {
  const { confirm, input, password, select } = await import("@inquirer/prompts");
  const context = { ...ctx.io.promptStreams(), signal: ctx.interrupt };
  const backend = await select<"embedded" | "remote">(
    {
      message: "Which backend should sbx use?",
      choices: [
        {
          name: "the embedded backend on this machine",
          value: "embedded",
          description: "profile `local`: sbx starts it on demand; no server, no key",
        },
        { name: "a remote backend", value: "remote", description: "an API URL, usually with an API key" },
      ],
      default: "embedded",
    },
    context,
  );
  if (backend === "embedded") return { backend };
  const existing = ctx.config.read().profiles;
  let profile: string;
  for (;;) {
    profile = await input(
      {
        message: "Profile name",
        default: "remote",
        validate: (v) =>
          v === LOCAL_PROFILE
            ? "`local` is the embedded backend; choose another name"
            : problemOf(() => checkProfileName(v)),
      },
      context,
    );
    const old = existing[profile];
    if (!old) break;
    const replace = await confirm(
      { message: `Profile ${profile} exists (${old.api_url}). Replace it?`, default: false },
      context,
    );
    if (replace) break;
  }
  const apiUrl = await input(
    {
      message: "API URL (https://host[:port] or unix:/path.sock)",
      validate: (v) => problemOf(() => parseApiUrl(v.trim())),
    },
    context,
  );
  const key = await password(
    {
      message: "API key (not shown; leave empty if the backend needs none)",
      // Hidden, with no key to reveal it on screen.
      toggleMask: false,
      validate: (v) => (/\s/.test(v) ? "an API key has no white space" : true),
    },
    context,
  );
  let insecure = false;
  if (key !== "" && sendsInClear(parseApiUrl(apiUrl.trim()).apiUrl)) {
    insecure = await confirm(
      {
        message: "This URL is plain http:// to another machine: anyone on the way could read the key. Send it anyway?",
        default: false,
      },
      context,
    );
    if (!insecure) throw new UsageError("nothing was saved: the key would travel in clear", "use an https:// URL");
  }
  return { backend: "remote", profile, apiUrl: apiUrl.trim(), key: key === "" ? undefined : key, insecure };
}

/** Asks the backend for its health once, with a spinner; never throws. */
async function checkHealth(
  ctx: Context,
  endpoint: Endpoint,
): Promise<{ ok: true; version: string } | { ok: false; why: string }> {
  const [{ HttpClient }, { Api }] = await Promise.all([import("../../client/http.js"), import("../../client/api.js")]);
  const http = new HttpClient(endpoint);
  const progress = ctx.io.progress(`asking ${endpoint.apiUrl} for its health…`);
  try {
    const health = await new Api(http).health(10_000);
    return { ok: true, version: health.version };
  } catch (err) {
    return { ok: false, why: redact((err as Error).message, endpoint.apiKey) };
  } finally {
    progress.stop();
    await http.close();
  }
}

/** Saves the plan as the current profile and checks it; prompts may decide not to save. */
async function apply(plan: InitPlan, ctx: Context, interactive: boolean): Promise<InitSummary | null> {
  const { io } = ctx;
  if (plan.backend === "embedded") {
    ctx.config.update((doc) => {
      doc.current_profile = LOCAL_PROFILE;
    });
    io.info("sbx: using the embedded backend (profile local); it starts on demand, nothing to run by hand.");
    io.info("sbx: try: sbx exec -- echo hello");
    return summaryOf(ctx, LOCAL_PROFILE, "embedded", "starts_on_demand");
  }
  const url = parseApiUrl(plan.apiUrl);
  const endpoint: Endpoint = {
    profile: plan.profile,
    ...url,
    apiKey: plan.key ?? null,
    autoStart: false,
    insecure: plan.insecure,
  };
  const health = await checkHealth(ctx, endpoint);
  if (health.ok) io.info(`sbx: ${url.apiUrl} answered (version ${health.version})`);
  else {
    io.err(io.errChalk.yellow(`sbx: warning: ${url.apiUrl} did not answer: ${health.why}`));
    if (interactive) {
      const { confirm } = await import("@inquirer/prompts");
      const save = await confirm(
        { message: `Save profile ${plan.profile} anyway?`, default: false },
        { ...io.promptStreams(), signal: ctx.interrupt },
      );
      if (!save) return null;
    }
  }
  ctx.config.update((doc) => {
    doc.profiles[plan.profile] = { api_url: url.apiUrl, ...(plan.insecure && { insecure: true }) };
    doc.current_profile = plan.profile;
  });
  ctx.config.setApiKey(plan.profile, plan.key);
  io.info(
    `sbx: saved profile ${plan.profile} (${url.apiUrl}${plan.key === undefined ? ", no API key" : ", with an API key"}); now in use`,
  );
  return summaryOf(ctx, plan.profile, "remote", health.ok ? "ok" : "unreachable");
}

function summaryOf(
  ctx: Context,
  profile: string,
  backend: InitSummary["backend"],
  health: InitSummary["health"],
): InitSummary {
  const p = profileSummaries(ctx).find((s) => s.profile === profile)!;
  if (ctx.env.SBX_PROFILE && ctx.env.SBX_PROFILE !== profile) {
    ctx.io.info(`sbx: note: SBX_PROFILE=${ctx.env.SBX_PROFILE} is set and overrides the current profile in this shell`);
  }
  return { ...p, backend, health };
}

export async function run(opts: InitOptions, ctx: Context): Promise<number> {
  const interactive = !answeredByFlags(opts);
  if (interactive && !ctx.io.canPrompt) {
    throw new UsageError(
      "init asks questions, but there is no terminal to answer them; nothing was changed",
      NON_INTERACTIVE_HINT,
    );
  }
  let summary: InitSummary | null;
  try {
    const plan = interactive ? await planFromPrompts(ctx) : await planFromFlags(opts, ctx);
    summary = await apply(plan, ctx, interactive);
  } catch (err) {
    if (!isPromptExit(err)) throw err;
    ctx.io.err("sbx: init cancelled; nothing was saved");
    throw new ExitWith(ExitCodes.cancelled);
  }
  if (summary === null) {
    ctx.io.err("sbx: nothing was saved");
    return ExitCodes.cancelled;
  }
  if (opts.json) printJson(ctx, summary);
  return ExitCodes.ok;
}

/** Bound to `sbx init` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseInitOptions(c.optsWithGlobals()), ctx);
