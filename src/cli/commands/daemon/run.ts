// sbx daemon run: the embedded backend in the foreground.

import { randomBytes } from "../../../platform/random.js";
import fs from "node:fs";
import path from "node:path";
import type { RunFn } from "../../command.js";
import type { Context } from "../../context.js";
import { durationOption, idleTimeoutOption } from "../../duration.js";
import { SbxError, UsageError } from "../../../common/errors.js";
import { clearStartFailure, recordStartFailure } from "../../daemon-start-failure.js";
import { DAEMON_TOKEN_MIN_LENGTH } from "../../../protocol/types.js";
import { ExitCodes } from "../../../common/exit-codes.js";
import { parseSize } from "../../../common/sizes.js";
import { mcpMount } from "../../mcp/mount.js";

export interface DaemonRunOptions {
  listen: { host: string; port: number } | undefined;
  faults: string | undefined;
  idleExitMs: number | undefined;
  /** The sandboxes' default idle timeout (0: off). */
  sandboxIdleTimeoutMs: number | undefined;
  keyRetentionMs: number | undefined;
  processLogSegmentBytes: number | undefined;
  processLogKeepBytes: number | undefined;
  executionOutputMaxBytes: number | undefined;
  retainMs: number | undefined;
  retainBytes: number | undefined;
  jobConcurrency: number | undefined;
  jobOutputMaxBytes: number | undefined;
  /** --driver slurm: sandboxes are Slurm allocations (docs/drivers.md, "Slurm"). */
  slurm: { partition: string | null; account: string | null; sharedDir: string } | undefined;
}

function sizeFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = parseSize(text);
  if (n === null) throw new UsageError(`${flag} ${JSON.stringify(text)} is not a size (e.g. 8MiB, 512k)`);
  return n;
}

export function parseListen(text: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || port < 1 || port > 65535)
    throw new UsageError(`--listen ${JSON.stringify(text)}: use HOST:PORT, e.g. 127.0.0.1:7070`);
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port };
}

function durationFlag(flag: string, text: string | undefined): number | undefined {
  return text === undefined ? undefined : durationOption(flag, text);
}

export function parseDaemonRunOptions(raw: {
  listen?: string;
  faults?: string;
  idleExit?: string;
  sandboxIdleTimeout?: string;
  keyRetention?: string;
  processLogSegment?: string;
  processLogKeep?: string;
  executionOutputMax?: string;
  retain?: string;
  retainSize?: string;
  jobConcurrency?: string;
  jobOutputMax?: string;
  driver?: string;
  slurmPartition?: string;
  slurmAccount?: string;
  slurmSharedDir?: string;
}): DaemonRunOptions {
  if (raw.jobConcurrency !== undefined && !/^[1-9][0-9]{0,3}$/.test(raw.jobConcurrency)) {
    throw new UsageError(`--job-concurrency ${JSON.stringify(raw.jobConcurrency)}: a whole number from 1 to 9999`);
  }
  const jobOutputMaxBytes = sizeFlag("--job-output-max", raw.jobOutputMax);
  if (jobOutputMaxBytes !== undefined && jobOutputMaxBytes < 1024) {
    throw new UsageError("--job-output-max must be at least 1k");
  }
  return {
    slurm: parseSlurmOptions(raw),
    listen: raw.listen === undefined ? undefined : parseListen(raw.listen),
    faults: raw.faults,
    idleExitMs: durationFlag("--idle-exit", raw.idleExit),
    sandboxIdleTimeoutMs:
      raw.sandboxIdleTimeout === undefined ? undefined : (idleTimeoutOption(raw.sandboxIdleTimeout) ?? undefined),
    keyRetentionMs: durationFlag("--key-retention", raw.keyRetention),
    processLogSegmentBytes: sizeFlag("--process-log-segment", raw.processLogSegment),
    processLogKeepBytes: sizeFlag("--process-log-keep", raw.processLogKeep),
    executionOutputMaxBytes: sizeFlag("--execution-output-max", raw.executionOutputMax),
    retainMs: durationFlag("--retain", raw.retain),
    retainBytes: sizeFlag("--retain-size", raw.retainSize),
    jobConcurrency: raw.jobConcurrency === undefined ? undefined : Number(raw.jobConcurrency),
    jobOutputMaxBytes,
  };
}

/** --driver and the Slurm settings: every --slurm-* option needs --driver slurm, which needs a shared directory. */
function parseSlurmOptions(raw: {
  driver?: string;
  slurmPartition?: string;
  slurmAccount?: string;
  slurmSharedDir?: string;
}): DaemonRunOptions["slurm"] {
  const driver = raw.driver ?? "local";
  if (driver !== "local" && driver !== "slurm") {
    throw new UsageError(`--driver ${JSON.stringify(driver)}: use local (bwrap or none on this machine) or slurm`);
  }
  const given = [raw.slurmPartition, raw.slurmAccount, raw.slurmSharedDir].some((v) => v !== undefined);
  if (driver === "local") {
    if (given) throw new UsageError("--slurm-partition, --slurm-account and --slurm-shared-dir need --driver slurm");
    return undefined;
  }
  if (raw.slurmSharedDir === undefined) {
    throw new UsageError(
      "--driver slurm needs --slurm-shared-dir DIR: a directory every node sees at the same path (workspaces live there)",
    );
  }
  if (!path.isAbsolute(raw.slurmSharedDir)) throw new UsageError("--slurm-shared-dir must be an absolute path");
  return {
    partition: raw.slurmPartition ?? null,
    account: raw.slurmAccount ?? null,
    sharedDir: raw.slurmSharedDir,
  };
}

/**
 * The TCP token: SBX_DAEMON_TOKEN, or one generated (32 random bytes) into a 0600
 * file beside the socket. A short one is refused: anyone who reaches the port could guess it.
 */
export function tcpToken(ctx: Context): string {
  const weak = (token: string, from: string, hint: string) =>
    new UsageError(
      `${from} is ${token.length} characters; a TCP listener needs a token of at least ${DAEMON_TOKEN_MIN_LENGTH}`,
      hint,
    );
  const fromEnv = ctx.env.SBX_DAEMON_TOKEN;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (fromEnv.length < DAEMON_TOKEN_MIN_LENGTH) {
      throw weak(
        fromEnv,
        "SBX_DAEMON_TOKEN",
        "e.g. SBX_DAEMON_TOKEN=$(openssl rand -base64 32), or unset it for a generated one",
      );
    }
    return fromEnv;
  }
  const file = path.join(ctx.paths.daemonDir, "token");
  let token: string;
  try {
    token = fs.readFileSync(file, "utf8").trim();
  } catch {
    token = randomBytes(32).toString("base64url");
    fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  }
  if (token.length < DAEMON_TOKEN_MIN_LENGTH) {
    throw weak(token, `the token in ${file}`, `remove ${file} to have a strong one generated`);
  }
  return token;
}

export async function run(opts: DaemonRunOptions, ctx: Context): Promise<number> {
  const { closeInheritedDescriptors, runDaemon } = await import("../../../backend/daemon.js");
  ctx.ensurePrivateDir(ctx.paths.daemonDir, ctx.paths.stateDir);
  const token = opts.listen ? tcpToken(ctx) : undefined;
  // Nothing a shell or CI runner leaked to this process reaches a sandbox through it
  // (once nothing is refused any more: a refusal changes nothing of the caller's process).
  const leaked = closeInheritedDescriptors();
  const log = (line: string) => ctx.io.err(`${new Date().toISOString()} ${line}`);
  if (leaked.length > 0) log(`closed descriptors inherited without close-on-exec: ${leaked.join(" ")}`);
  if (opts.listen) {
    log(
      `TCP ${opts.listen.host}:${opts.listen.port} requires a token: ${ctx.env.SBX_DAEMON_TOKEN ? "SBX_DAEMON_TOKEN" : path.join(ctx.paths.daemonDir, "token")}`,
    );
  }
  clearStartFailure(ctx.paths);
  try {
    await startDaemon(opts, ctx, runDaemon, token, log);
  } catch (err) {
    // The sbx that spawned this daemon reads why (its output goes to daemon.log).
    if (err instanceof SbxError) recordStartFailure(ctx.paths, err);
    throw err;
  }
  return ExitCodes.ok;
}

async function startDaemon(
  opts: DaemonRunOptions,
  ctx: Context,
  runDaemon: typeof import("../../../backend/daemon.js")["runDaemon"],
  token: string | undefined,
  log: (line: string) => void,
): Promise<void> {
  await runDaemon({
    dataDir: ctx.paths.daemonDir,
    socketPath: ctx.paths.socketPath,
    pidFile: ctx.paths.pidFile,
    ...(opts.listen ? { listen: opts.listen, token } : {}),
    ...(opts.faults === undefined ? {} : { faults: opts.faults }),
    ...(ctx.env.SBX_WIRE_RECORD ? { wireRecord: ctx.env.SBX_WIRE_RECORD } : {}),
    ...(opts.idleExitMs === undefined ? {} : { idleExitMs: opts.idleExitMs }),
    ...(opts.sandboxIdleTimeoutMs ? { sandboxIdleTimeoutMs: opts.sandboxIdleTimeoutMs } : {}),
    ...(opts.keyRetentionMs === undefined ? {} : { keyRetentionMs: opts.keyRetentionMs }),
    ...(opts.processLogSegmentBytes === undefined ? {} : { processLogSegmentBytes: opts.processLogSegmentBytes }),
    ...(opts.processLogKeepBytes === undefined ? {} : { processLogKeepBytes: opts.processLogKeepBytes }),
    ...(opts.executionOutputMaxBytes === undefined ? {} : { executionOutputMaxBytes: opts.executionOutputMaxBytes }),
    ...(opts.retainMs === undefined ? {} : { retainMs: opts.retainMs }),
    ...(opts.retainBytes === undefined ? {} : { retainBytes: opts.retainBytes }),
    ...(opts.jobConcurrency === undefined ? {} : { jobConcurrency: opts.jobConcurrency }),
    ...(opts.jobOutputMaxBytes === undefined ? {} : { jobOutputBudgetBytes: opts.jobOutputMaxBytes }),
    ...(opts.slurm === undefined ? {} : { drivers: { slurm: { ...opts.slurm, env: ctx.env } } }),
    // MCP's Streamable HTTP transport beside /api/v1, its tools acting through this daemon's socket.
    mounts: [mcpMount(ctx)],
    log,
  });
}

/** Bound to `sbx daemon run` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run(parseDaemonRunOptions(c.opts()), ctx);
