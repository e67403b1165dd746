// sbx sandbox create

import path from "node:path";
import { randomUUID } from "../../../platform/random.js";
import type {
  EgressPolicyRequest,
  IsolationRequest,
  NetworkMode,
  PublishRequest,
  Sandbox,
  SandboxLimitsRequest,
} from "../../../protocol/types.js";
import { type EgressFlagValues, egressFromFlags } from "./egress-flags.js";
import { type LimitFlagValues, parseLimitFlags } from "../../render/limits.js";
import { isValidSandboxRef } from "../../../protocol/validate.js";
import { parseVolumeFlag, type VolumeMountRequest } from "../../../protocol/volumes.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { UsageError } from "../../../common/errors.js";
import { refusalIsUsage } from "../../refusal.js";
import { printJson } from "../../render/outcome.js";
import { printSandboxes, sandboxDocument } from "./render.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import type { Labels } from "../../../protocol/labels.js";
import { parseLabelFlags } from "./labels.js";
import { idleTimeoutOption } from "../../duration.js";

export interface CreateOptions {
  name: string | undefined;
  isolation: IsolationRequest | undefined;
  network: boolean | undefined;
  limits: SandboxLimitsRequest;
  networkMode: NetworkMode | undefined;
  /** The egress policy asked for (network allow-list), or undefined. */
  egress: EgressPolicyRequest | undefined;
  publish: PublishRequest[];
  labels: Labels;
  /** Its idle timeout in ms (0: off); undefined: the daemon's default. */
  idleTimeoutMs: number | undefined;
  /** Named volumes to mount (--volume NAME:/path[:ro], repeatable). */
  volumes: VolumeMountRequest[];
  /** An image reference, an oci: directory made absolute here. */
  image: string | undefined;
  json: boolean;
}

const NETWORK_MODES: readonly string[] = ["none", "user", "host", "allow-list"];

export function parseCreateOptions(
  name: string | undefined,
  raw: {
    isolation?: string;
    network?: boolean | string;
    publish?: string[];
    label?: string[];
    idleTimeout?: string;
    image?: string;
    volume?: string[];
    json?: boolean;
  } & LimitFlagValues &
    EgressFlagValues,
): CreateOptions {
  if (name !== undefined && !isValidSandboxRef(name)) {
    throw new UsageError(`invalid sandbox name ${JSON.stringify(name)}: letters, digits, _ . - (at most 63)`);
  }
  const network = raw.network;
  if (typeof network === "string" && !NETWORK_MODES.includes(network)) {
    throw new UsageError(
      `--network takes user, host or allow-list, not ${JSON.stringify(network)} (a name goes first: sbx sandbox create NAME --network)`,
    );
  }
  return {
    name,
    isolation: raw.isolation as IsolationRequest | undefined,
    network: typeof network === "boolean" ? network : undefined,
    networkMode: typeof network === "string" ? (network as NetworkMode) : undefined,
    egress: egressFromFlags(raw),
    publish: (raw.publish ?? []).map(parsePublish),
    labels: parseLabelFlags(raw.label),
    idleTimeoutMs: raw.idleTimeout === undefined ? undefined : (idleTimeoutOption(raw.idleTimeout) ?? undefined),
    volumes: (raw.volume ?? []).map(volumeArg),
    limits: parseLimitFlags(raw),
    image: raw.image === undefined ? undefined : imageArg(raw.image),
    json: raw.json === true,
  };
}

/** `PORT`, `HOST_PORT:PORT` or `IP:HOST_PORT:PORT` (an IPv6 address in brackets), as docker -p. */
export function parsePublish(text: string): PublishRequest {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|\d{1,3}(?:\.\d{1,3}){3}):)?(?:(\d{1,5}):)?(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : Number.NaN;
  const hostPort = m?.[2] === undefined ? 0 : Number(m[2]);
  if (!m || port < 1 || port > 65535 || hostPort > 65535 || (m[1] !== undefined && m[2] === undefined)) {
    throw new UsageError(
      `--publish takes PORT, HOST_PORT:PORT or IP:HOST_PORT:PORT, not ${JSON.stringify(text)} (e.g. 8080:8000)`,
    );
  }
  const ip = m[1]?.replace(/^\[|\]$/g, "");
  return { port, host_port: hostPort, ...(ip === undefined ? {} : { host_ip: ip }) };
}

export async function run(opts: CreateOptions, ctx: Context): Promise<number> {
  const sandbox = await createFromOptions(opts, ctx);
  if (opts.json) printJson(ctx, sandboxDocument(sandbox));
  else await printSandboxes(ctx.io, [sandbox]);
  return ExitCodes.ok;
}

/** The create request the options say, sent; a refusal exits 125 saying no sandbox was created. */
export async function createFromOptions(opts: CreateOptions, ctx: Context): Promise<Sandbox> {
  const api = await ctx.api();
  return refusalIsUsage(
    () =>
      api.createSandbox(
        {
          ...(opts.name === undefined ? {} : { name: opts.name }),
          ...(opts.isolation === undefined ? {} : { isolation: opts.isolation }),
          ...(opts.network === undefined ? {} : { network: opts.network }),
          ...(Object.keys(opts.limits).length === 0 ? {} : { limits: opts.limits }),
          ...(opts.networkMode === undefined ? {} : { network_mode: opts.networkMode }),
          ...(opts.egress === undefined ? {} : { egress: opts.egress }),
          ...(opts.publish.length === 0 ? {} : { publish: opts.publish }),
          ...(Object.keys(opts.labels).length === 0 ? {} : { labels: opts.labels }),
          ...(opts.idleTimeoutMs === undefined ? {} : { idle_timeout_ms: opts.idleTimeoutMs }),
          ...(opts.image === undefined ? {} : { image: opts.image }),
          ...(opts.volumes.length === 0 ? {} : { volumes: opts.volumes }),
        },
        `sbx-${randomUUID()}`,
      ),
    "no sandbox was created",
  );
}

/** `--volume NAME:/path[:ro]` (protocol/volumes.ts); a usage error saying what is wrong. */
function volumeArg(text: string): VolumeMountRequest {
  try {
    return parseVolumeFlag(text);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** `--image REF`: an oci: directory or oci-archive: file is made absolute from where sbx runs (the backend reads it). */
function imageArg(text: string): string {
  const scheme = ["oci:", "oci-archive:"].find((s) => text.startsWith(s));
  if (scheme === undefined) return text;
  const rest = text.slice(scheme.length);
  const colon = rest.lastIndexOf(":");
  const tagged = colon > 0 && !rest.slice(colon + 1).includes("/");
  const place = tagged ? rest.slice(0, colon) : rest;
  if (place === "")
    throw new UsageError(`--image ${JSON.stringify(text)}: ${scheme} needs a path (${scheme}PATH[:TAG])`);
  return `${scheme}${path.resolve(place)}${tagged ? rest.slice(colon) : ""}`;
}

/** Bound to `sbx sandbox create` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseCreateOptions(c.args[0], c.optsWithGlobals()), ctx);
