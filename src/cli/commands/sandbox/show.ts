// sbx sandbox show

import { describeIdle, describeLastStop } from "./idle.js";
import { labelsText } from "../../../protocol/labels.js";
import type { Sandbox, SandboxDetails } from "../../../protocol/types.js";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { checkSandboxRef } from "../../command-flags.js";
import { formatBytes } from "../../render/bytes.js";
import { limitLines } from "../../render/limits.js";
import { printJson } from "../../render/outcome.js";
import { hostPort, sandboxDetailsDocument } from "./render.js";
import { policyLines } from "./egress-flags.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { wholeSandboxRef } from "../../id-prefix.js";

export async function run(opts: { ref: string; json: boolean }, ctx: Context): Promise<number> {
  const sandbox = await (await ctx.api()).getSandbox(opts.ref, { usage: true });
  if (opts.json) {
    printJson(ctx, sandboxDetailsDocument(sandbox));
    return ExitCodes.ok;
  }
  for (const [k, v] of detailRows(sandbox)) ctx.io.out(`${k}\t${v}`);
  return ExitCodes.ok;
}

function detailRows(s: Sandbox & Partial<SandboxDetails>): Array<[string, string]> {
  const driver = s.driver;
  const isolation =
    s.isolation === "none"
      ? "none: NOT ISOLATED, commands run on the host as you and see what you see"
      : `${s.isolation}${driver?.version ? ` (${driver.version})` : ""}`;
  const rows: Array<[string, string]> = [
    ["sandbox", s.sandbox_id],
    ["name", s.name],
    ["status", s.status],
    ...(Object.keys(s.labels ?? {}).length === 0 ? [] : [["labels", labelsText(s.labels!)] as [string, string]]),
    ["isolation", isolation],
    ["root", describeRoot(s)],
    ["network", describeNetwork(s)],
  ];
  if (s.egress) rows.push(...policyLines(s.egress));
  if (s.network_status?.available === false) {
    rows.push([
      "network_available",
      `no: ${s.network_status.reason ?? "unknown"}; its commands cannot start until this is fixed`,
    ]);
  }
  const published = s.published ?? [];
  if (published.length > 0) {
    rows.push([
      "published",
      published
        .map((p) => `${hostPort(p)} -> ${p.port}${p.listening ? "" : ` (not listening: ${p.reason ?? "unknown"})`}`)
        .join(", "),
    ]);
  }
  if (driver) {
    if (!driver.available) rows.push(["available", `no: ${driver.reason ?? "unknown"}`]);
    rows.push(["user", driver.user]);
    if (driver.namespaces.length > 0) rows.push(["namespaces", driver.namespaces.join(" ")]);
    rows.push([
      "host_read_only",
      driver.host_paths_read_only === null
        ? "everything you can read (and write)"
        : driver.host_paths_read_only.join(" "),
    ]);
    rows.push(["syscall_filter", driver.syscall_filter ?? "none"]);
  }
  const env = s.environment;
  if (env) {
    rows.push([
      "environment",
      env.state === "stopped"
        ? "stopped (the next command starts it)"
        : `${env.state === "paused" ? "paused (frozen; sbx sandbox resume thaws it), started" : env.state} since ${env.started_at ?? "?"}, ${env.processes} process${env.processes === 1 ? "" : "es"} (init pid ${env.init_pid ?? "?"})`,
    ]);
  }
  if (s.idle !== undefined) {
    rows.push(["idle_stop", describeIdle(s.idle, s.environment ?? null)]);
    const last = describeLastStop(s.idle);
    if (last !== null) rows.push(["last_stop", last]);
  }
  // Without isolation commands see the workspace at its host path, not at /workspace.
  rows.push([
    "workspace",
    s.isolation === "none" && s.host_workspace ? `${s.host_workspace} (as commands see it)` : s.workspace,
  ]);
  if (s.host_workspace) rows.push(["host_workspace", s.host_workspace]);
  if (typeof s.workspace_bytes === "number")
    rows.push(["workspace_size", `${formatBytes(s.workspace_bytes)} (${s.workspace_bytes} bytes)`]);
  if (s.limit_status) rows.push(...limitLines(s.limit_status));
  rows.push(["created_at", s.created_at]);
  return rows;
}

/** Its root in words: an image's filesystem (reference, digest, platform), or the host's. */
function describeRoot(s: Sandbox): string {
  const image = s.image ?? null;
  if (image !== null) return `image ${image.reference} ${image.digest} (${image.platform}), a writable copy of its own`;
  return s.isolation === "none" ? "the host's (no isolation)" : "the host's system directories, read-only";
}

/** The network mode in words: what its commands can reach. */
export function describeNetwork(s: Pick<Sandbox, "network" | "network_mode">): string {
  switch (s.network_mode ?? (s.network ? "host" : "none")) {
    case "user":
      return "user (outbound through slirp4netns; not the host's loopback, no host port bound)";
    case "host":
      return "host (the host's network itself: its loopback services too)";
    case "allow-list":
      return "allow-list (no route out; only what its egress policy allows, through the daemon's proxy)";
    default:
      return "none (only its own loopback, shared by its commands)";
  }
}

/** Bound to `sbx sandbox show` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) =>
  run({ ref: await wholeSandboxRef(ctx, checkSandboxRef(c.args[0]!)), json: c.optsWithGlobals().json === true }, ctx);
