// Helpers of the event stream tests: an SSE connection over the backend's Unix
// socket that keeps the raw bytes (to assert framing exactly) and parses complete
// frames, and a curl child for an independent reader.

import { spawn } from "node:child_process";
import { Agent, request } from "undici";

export interface Frame {
  id: number | null;
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON event data
  data: any;
  /** The data line as sent. */
  rawData: string;
}

/** Complete frames (terminated by a blank line) of an SSE text; comments are skipped. */
export function parseFrames(raw: string): Frame[] {
  const blocks = raw.split("\n\n");
  blocks.pop(); // the incomplete rest (or "")
  const frames: Frame[] = [];
  for (const block of blocks) {
    const lines = block.split("\n").filter((l) => !l.startsWith(":"));
    if (lines.length === 0) continue;
    let id: number | null = null;
    let event = "message";
    let rawData = "";
    for (const line of lines) {
      const colon = line.indexOf(": ");
      const field = line.slice(0, colon);
      const value = line.slice(colon + 2);
      if (field === "id") id = Number(value);
      else if (field === "event") event = value;
      else if (field === "data") rawData = value;
    }
    let data: unknown;
    try {
      data = JSON.parse(rawData);
    } catch {
      data = undefined;
    }
    frames.push({ id, event, data, rawData });
  }
  return frames;
}

/** Decodes and joins the output events of one stream. */
export function outputOf(frames: Frame[], stream: "stdout" | "stderr"): string {
  return frames
    .filter((f) => f.event === "output" && f.data.stream === stream)
    .map((f) => Buffer.from(f.data.data, "base64").toString("utf8"))
    .join("");
}

export class SseConnection {
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  raw = "";
  /** The body ended cleanly (false while open, or when the connection broke). */
  ended = false;
  /** The connection broke before the body ended. */
  broken = false;
  private readonly agent: Agent;
  private readonly abort = new AbortController();
  private finished!: Promise<void>;
  private listeners = new Set<() => void>();

  private constructor(agent: Agent) {
    this.agent = agent;
  }

  static async open(
    socketPath: string,
    method: string,
    path: string,
    opts: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<SseConnection> {
    const conn = new SseConnection(new Agent({ connect: { socketPath } }));
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const res = await request(`http://localhost${path}`, {
      method: method as "GET",
      dispatcher: conn.agent,
      signal: conn.abort.signal,
      headers: { ...(body !== undefined && { "content-type": "application/json" }), ...opts.headers },
      ...(body !== undefined && { body }),
    });
    conn.status = res.statusCode;
    conn.headers = res.headers;
    conn.finished = (async () => {
      try {
        for await (const chunk of res.body) {
          conn.raw += (chunk as Buffer).toString("utf8");
          for (const fn of conn.listeners) fn();
        }
        conn.ended = true;
      } catch {
        conn.broken = true;
      }
      for (const fn of conn.listeners) fn();
    })();
    return conn;
  }

  get frames(): Frame[] {
    return parseFrames(this.raw);
  }

  /** Waits until `check` holds (re-checked as bytes arrive), or fails after timeoutMs. */
  async waitFor(check: (c: SseConnection) => boolean, timeoutMs = 5000, what = "the stream"): Promise<void> {
    if (check(this)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(fn);
        reject(new Error(`timed out waiting for ${what}; got:\n${this.raw}`));
      }, timeoutMs);
      const fn = () => {
        if (!check(this)) return;
        clearTimeout(timer);
        this.listeners.delete(fn);
        resolve();
      };
      this.listeners.add(fn);
    });
  }

  /** Resolves once the body ended or broke. */
  async done(timeoutMs = 10_000): Promise<this> {
    await this.waitFor((c) => c.ended || c.broken, timeoutMs, "the end of the stream");
    await this.finished;
    return this;
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.finished?.catch(() => {});
    await this.agent.close().catch(() => {});
  }
}

/** Runs curl -N against the socket; resolves with its stdout once it exits. */
export function curl(socketPath: string, path: string, headers: Record<string, string> = {}): Promise<string> {
  const args = ["-sN", "--unix-socket", socketPath, `http://localhost${path}`];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  return new Promise((resolve, reject) => {
    const child = spawn("curl", args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", () => resolve(out));
  });
}

export const executionPath = (id: string, rest = "") => `/api/v1/sandbox/default/executions/${id}${rest}`;
