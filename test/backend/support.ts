// Shared helpers of the backend tests: a backend in a temp dir on a real Unix
// socket, a small HTTP client over that socket, and polling with deadlines.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Agent, request } from "undici";
import { afterAll, afterEach, beforeAll, describe, it } from "vitest";
import type { SandboxPlacement } from "../../src/backend/drivers/driver.js";
import { pickSandboxUid } from "../../src/backend/drivers/identity.js";
import { runMembers } from "../../src/backend/drivers/proc.js";
import { DEFAULT_LIMITS } from "../../src/backend/drivers/limits/spec.js";
import { type BackendHandle, type BackendOptions, startBackend } from "../../src/backend/backend.js";
import { unmet } from "../support/requirements.js";
import { atEndOfFile, tempDir as makeTempDir, removeDir } from "../support/temp.js";

export { BWRAP } from "../support/requirements.js";

/**
 * Command names of the live processes of a run recorded by its process group (an
 * execution's or process's os_pid): the group, and under bwrap its whole sandbox.
 */
export function groupMembers(pgid: number): string[] {
  return runMembers(pgid).map((p) => p.name);
}

/** Whether the tests run as root (as CI does): sandboxes then run as uids of their own. */
export const AS_ROOT = process.getuid?.() === 0;

/**
 * A placement for driver-level tests: as root, a sandbox uid of the test's own (the
 * workspace given to it), as a backend would set it up; otherwise the user's.
 */
export function testPlacement(workspaceDir: string, network: SandboxPlacement["network"] = "none"): SandboxPlacement {
  const identity = AS_ROOT ? { uid: pickSandboxUid(new Set()), gid: 0 } : null;
  if (identity) {
    identity.gid = identity.uid;
    fs.chownSync(workspaceDir, identity.uid, identity.gid);
  }
  return { sandboxId: "sbx_t", workspaceDir, network, identity, limits: DEFAULT_LIMITS };
}

/**
 * The isolations the execution and process suites run under: none, and bwrap where
 * it can run (otherwise its suites are skipped, saying why).
 */
export const ISOLATIONS = ["none", "bwrap"] as const;
export type TestIsolation = (typeof ISOLATIONS)[number];

/** The skip tag for an isolation this machine cannot run (../support/requirements.ts), or null. */
export function unavailable(isolation: TestIsolation): string | null {
  return isolation === "bwrap" ? unmet("bwrap") : null;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  json: any;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as is (takes precedence over body). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export type Api = (method: string, urlPath: string, opts?: CallOptions) => Promise<Answer>;

/** A fresh directory, removed when the test file ends (../support/temp.ts). */
export function tempDir(prefix = "sbx-be-"): string {
  return makeTempDir(prefix);
}

// Each test request on a connection of its own (pipelining 0: no keep-alive). A reused idle
// connection races the server's keep-alive timeout (5 s): on a loaded machine the client's
// timers run late and it sends on a socket the server is closing — read ECONNRESET, a failure
// of the test's client, not of the backend. (sbx's own client sends every mutating request
// on a fresh connection for the same reason: src/platform/http-transport.ts.)
export function socketClient(socketPath: string): { api: Api; close(): Promise<void> } {
  const agent = new Agent({ connect: { socketPath }, pipelining: 0 });
  return { api: makeApi("http://localhost", agent), close: () => agent.close() };
}

export function tcpClient(port: number): { api: Api; close(): Promise<void> } {
  const agent = new Agent({ pipelining: 0 });
  return { api: makeApi(`http://127.0.0.1:${port}`, agent), close: () => agent.close() };
}

function makeApi(origin: string, agent: Agent): Api {
  return async (method, urlPath, opts = {}) => {
    const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    const res = await request(`${origin}${urlPath}`, {
      method: method as "GET",
      dispatcher: agent,
      headers: { ...(body !== undefined && { "content-type": "application/json" }), ...opts.headers },
      ...(body !== undefined && { body }),
    });
    const text = await res.body.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.statusCode, headers: res.headers, text, json };
  };
}

export interface TestBackend {
  dir: string;
  dataDir: string;
  socketPath: string;
  handle: BackendHandle;
  api: Api;
  logs: string[];
  /** Closes the client and the backend (gracefully unless told otherwise). */
  stop(opts?: { simulateCrash?: boolean }): Promise<void>;
}

/** SBX_WIRE_RECORD=DIR: the backend records its exchanges there, for the validating run (test/contract/). */
export function wireRecording(): { wireRecord?: string } {
  const dir = process.env.SBX_WIRE_RECORD;
  return dir ? { wireRecord: dir } : {};
}

/**
 * A backend in `dir` (by default a fresh one). Whatever the test does not stop itself is
 * stopped when the test file ends, and the directory it made is then removed; a
 * directory passed in (a restart) belongs to whoever made it.
 */
export async function startTestBackend(opts: Partial<BackendOptions> = {}, given?: string): Promise<TestBackend> {
  const dir = given ?? fs.mkdtempSync(path.join(os.tmpdir(), "sbx-be-"));
  const dataDir = path.join(dir, "data");
  const socketPath = path.join(dir, "run", "sbx.sock");
  const logs: string[] = [];
  let backend: TestBackend | undefined;
  atEndOfFile(async () => {
    await backend?.stop();
    if (given === undefined) removeDir(dir);
  });
  const handle = await startBackend({
    dataDir,
    socketPath,
    killGraceMs: 1000,
    log: (line) => logs.push(line),
    ...wireRecording(),
    ...opts,
  });
  const client = socketClient(socketPath);
  let stopped = false;
  backend = {
    dir,
    dataDir,
    socketPath,
    handle,
    api: client.api,
    logs,
    async stop(stopOpts = {}) {
      if (stopped) return;
      stopped = true;
      // The backend first: closing the client would wait for requests still in flight.
      await handle.close(stopOpts);
      await client.close().catch(() => {});
    },
  };
  return backend;
}

/**
 * One backend for the tests of a file or describe block: started before them and handed
 * to `use` with its default sandbox's workspace directory, stopped after them. With an
 * isolation, `default` is created with it first.
 */
export function sharedBackend(
  use: (backend: TestBackend, workspace: string) => void,
  opts: Partial<BackendOptions> = {},
  isolation?: TestIsolation,
): void {
  let backend: TestBackend | undefined;
  beforeAll(async () => {
    backend = await startTestBackend(opts);
    if (isolation !== undefined) await createDefaultSandbox(backend, isolation);
    use(backend, await workspaceOf(backend));
  });
  afterAll(async () => {
    await backend?.stop();
  });
}

/** Creates the backend's `default` sandbox with this isolation (before anything names it). */
export async function createDefaultSandbox(b: TestBackend, isolation: TestIsolation): Promise<void> {
  const res = await b.api("POST", "/api/v1/sandbox/create", { body: { name: "default", isolation } });
  if (res.status !== 201) throw new Error(`could not create the default sandbox (${isolation}): ${res.text}`);
}

/** startTestBackend for backends that are stopped after each test (the last started first). */
export function backendsPerTest(isolation?: TestIsolation): typeof startTestBackend {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return async (opts, dir) => {
    const b = await startTestBackend(opts, dir);
    cleanups.push(() => b.stop());
    // A restarted backend (same dir) has its default sandbox already.
    if (isolation !== undefined && dir === undefined) await createDefaultSandbox(b, isolation);
    return b;
  };
}

/** The host directory behind /workspace of a backend's `default` sandbox (created when first named). */
export async function workspaceOf(b: TestBackend): Promise<string> {
  return (await b.api("GET", "/api/v1/sandbox/default")).json.host_workspace;
}

export { until } from "../support/wait.js";

/** Whether a live (non-zombie) process is left in a group. */
export function groupAlive(pgid: number): boolean {
  return groupMembers(pgid).length > 0;
}

/** Shell: after `sleep … &`, wait until the child has become `sleep` (it is `sh` between fork and exec). */
export const untilExecd = 'until [ "$(cat /proc/$!/comm 2>/dev/null)" = sleep ]; do :; done';

export function b64(text: string): string {
  return Buffer.from(text).toString("base64");
}

export const EXECUTE = "/api/v1/sandbox/default/execute";

/** How a host path inside a sandbox's workspace looks to its commands under an isolation. */
export function seenFrom(isolation: TestIsolation, workspace: string): (hostPath: string) => string {
  return (hostPath) =>
    isolation === "none" ? hostPath : path.posix.join("/workspace", path.relative(workspace, hostPath));
}

/**
 * Runs a suite once per isolation (none, and bwrap where it can run; otherwise a
 * skipped test says why).
 */
export function describeIsolations(name: string, suite: (isolation: TestIsolation) => void): void {
  describe.each(ISOLATIONS)(`${name} (%s)`, (isolation) => {
    const skip = unavailable(isolation);
    if (skip !== null) {
      it.skip(skip, () => {});
      return;
    }
    suite(isolation);
  });
}

export { processesWithArg, uniqueSleep } from "../support/processes.js";
