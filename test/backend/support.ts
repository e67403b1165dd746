// Shared helpers of the backend tests: a backend in a temp dir on a real Unix
// socket, a small HTTP client over that socket, and polling with deadlines.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Agent, request } from "undici";
import { afterAll, afterEach, beforeAll } from "vitest";
import { groupMembers } from "../../src/backend/process-group.js";
import { type BackendHandle, type BackendOptions, startBackend } from "../../src/backend/server.js";

export { groupMembers };

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

export function tempDir(prefix = "sbx-be-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function socketClient(socketPath: string): { api: Api; close(): Promise<void> } {
  const agent = new Agent({ connect: { socketPath } });
  return { api: makeApi("http://localhost", agent), close: () => agent.close() };
}

export function tcpClient(port: number): { api: Api; close(): Promise<void> } {
  const agent = new Agent();
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

export async function startTestBackend(opts: Partial<BackendOptions> = {}, dir = tempDir()): Promise<TestBackend> {
  const dataDir = path.join(dir, "data");
  const socketPath = path.join(dir, "run", "sbx.sock");
  const logs: string[] = [];
  const handle = await startBackend({
    dataDir,
    socketPath,
    killGraceMs: 1000,
    log: (line) => logs.push(line),
    ...opts,
  });
  const client = socketClient(socketPath);
  let stopped = false;
  return {
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
}

/**
 * One backend for the tests of a file or describe block: started before them and handed
 * to `use` with its default sandbox's workspace directory, stopped after them.
 */
export function sharedBackend(
  use: (backend: TestBackend, workspace: string) => void,
  opts: Partial<BackendOptions> = {},
): void {
  let backend: TestBackend | undefined;
  beforeAll(async () => {
    backend = await startTestBackend(opts);
    use(backend, await workspaceOf(backend));
  });
  afterAll(async () => {
    await backend?.stop();
  });
}

/** startTestBackend for backends that are stopped after each test (the last started first). */
export function backendsPerTest(): typeof startTestBackend {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return async (opts, dir) => {
    const b = await startTestBackend(opts, dir);
    cleanups.push(() => b.stop());
    return b;
  };
}

/** The host directory behind /workspace of a backend's `default` sandbox (created when first named). */
export async function workspaceOf(b: TestBackend): Promise<string> {
  const sandbox = (await b.api("GET", "/api/v1/sandbox/default")).json;
  return path.join(b.dataDir, "sandboxes", sandbox.sandbox_id, "workspace");
}

/** Polls `check` until it returns a value other than undefined/false, or fails at the deadline. */
export async function until<T>(check: () => T | Promise<T>, timeoutMs = 5000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

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
