// Shared helpers of the backend tests: a backend in a temp dir on a real Unix
// socket, a small HTTP client over that socket, and polling with deadlines.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Agent, request } from "undici";
import { type BackendHandle, type BackendOptions, startBackend } from "../../src/backend/server.js";

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

/** Command names of the live (non-zombie) processes in a group. Zombies are dead, if not yet reaped. */
export function groupMembers(pgid: number): string[] {
  const names: string[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z") {
      names.push(stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")));
    }
  }
  return names;
}

export function groupAlive(pgid: number): boolean {
  return groupMembers(pgid).length > 0;
}

export function b64(text: string): string {
  return Buffer.from(text).toString("base64");
}

export const EXECUTE = "/api/v1/sandbox/default/execute";
