// The sandbox's init (docs/drivers.md, "One sandbox, one environment"): the program
// bwrap starts once per sandbox, with every namespace, the sandbox's uid and the
// syscall filter, and which then starts each command of the sandbox on the backend's
// request. Whatever it starts inherits all of that, and its cgroup: a command *enters*
// the sandbox's environment (one process table, one loopback, one /tmp, one hostname)
// instead of building one of its own.
//
// It talks to the backend over its stdin (requests) and stdout (events), one JSON
// document per line. A command's stdin, stdout and stderr are connections to the
// backend's socket for this sandbox (IO_SOCKET, bound read-only into the sandbox),
// each opened with a token the backend chose for that stream: output goes from the
// command to the backend directly, never through the init. Port forwarding asks it to
// connect to a port on the sandbox's own loopback and join that connection to one on
// the same socket.
//
// This file is a program on its own: it imports nothing but Node's built-in modules
// (which Bun provides too), because on Node it is run from its file descriptor
// inside the sandbox, where nothing else of sbx is. The backend imports it for the
// message types and their checks only. Everything it receives it treats as a request
// from the backend; everything it sends, the backend treats as untrusted (a command
// of the sandbox can write to this process's descriptors).

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

/** The argument that makes sbx (the release binary) or this file (on Node) act as the init. */
export const INIT_VERB = "__sandbox-init";
/** Where the backend's socket for this sandbox is, inside it. */
export const RUN_DIR_INSIDE = "/run/sbx";
export const IO_SOCKET = `${RUN_DIR_INSIDE}/io.sock`;
/** A stream's token: 32 lowercase hex characters, then a newline, first on its connection. */
export const TOKEN_LENGTH = 32;
/** The longest line either side accepts (a command's argv and environment are inside). */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;

export type InitRequest =
  | {
      op: "spawn";
      id: string;
      argv: string[];
      env: Record<string, string>;
      cwd: string;
      /** Tokens of the connections for the command's stdio; stdin null: /dev/null. */
      stdin: string | null;
      stdout: string;
      stderr: string;
    }
  | { op: "connect"; id: string; port: number; token: string };

export type InitEvent =
  | { ev: "ready"; pid: number }
  | { ev: "started"; id: string; pid: number }
  | { ev: "failed"; id: string; code: string; message: string }
  | { ev: "exit"; id: string; code: number | null; signal: string | null }
  | { ev: "connected"; id: string }
  | { ev: "refused"; id: string; message: string };

const TOKEN = /^[0-9a-f]{32}$/;
const ID = /^[A-Za-z0-9_.:-]{1,128}$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === "string");
}

function isStringMap(v: unknown): v is Record<string, string> {
  return isRecord(v) && Object.values(v).every((s) => typeof s === "string");
}

function isToken(v: unknown): v is string {
  return typeof v === "string" && TOKEN.test(v);
}

function isId(v: unknown): v is string {
  return typeof v === "string" && ID.test(v);
}

function parseLine(line: string): Record<string, unknown> | null {
  try {
    const doc: unknown = JSON.parse(line);
    return isRecord(doc) ? doc : null;
  } catch {
    return null;
  }
}

/** A request line, checked; null for anything else. */
export function parseInitRequest(line: string): InitRequest | null {
  const d = parseLine(line);
  if (d === null || !isId(d.id)) return null;
  if (d.op === "spawn") {
    const { argv, env, cwd, stdin, stdout, stderr } = d;
    if (!isStringArray(argv) || argv.length === 0 || !isStringMap(env) || typeof cwd !== "string") return null;
    if (!(stdin === null || isToken(stdin)) || !isToken(stdout) || !isToken(stderr)) return null;
    return { op: "spawn", id: d.id, argv, env, cwd, stdin, stdout, stderr };
  }
  if (d.op === "connect") {
    if (!isToken(d.token) || !isPort(d.port)) return null;
    return { op: "connect", id: d.id, port: d.port, token: d.token };
  }
  return null;
}

function isPort(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 65535;
}

function isPid(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 4_194_304;
}

/** An event line from the init, checked (it comes from inside a sandbox); null for anything else. */
export function parseInitEvent(line: string): InitEvent | null {
  const d = parseLine(line);
  if (d === null) return null;
  switch (d.ev) {
    case "ready":
      return isPid(d.pid) ? { ev: "ready", pid: d.pid } : null;
    case "started":
      return isId(d.id) && isPid(d.pid) ? { ev: "started", id: d.id, pid: d.pid } : null;
    case "failed":
      return isId(d.id) && typeof d.code === "string" && typeof d.message === "string"
        ? { ev: "failed", id: d.id, code: d.code.slice(0, 32), message: d.message.slice(0, 1024) }
        : null;
    case "exit": {
      const code = d.code === null || (Number.isInteger(d.code) && (d.code as number) >= 0) ? d.code : undefined;
      const signal = d.signal === null || (typeof d.signal === "string" && /^SIG[A-Z0-9+-]{1,12}$/.test(d.signal));
      if (!isId(d.id) || code === undefined || !signal) return null;
      return { ev: "exit", id: d.id, code: code as number | null, signal: d.signal as string | null };
    }
    case "connected":
      return isId(d.id) ? { ev: "connected", id: d.id } : null;
    case "refused":
      return isId(d.id) && typeof d.message === "string"
        ? { ev: "refused", id: d.id, message: d.message.slice(0, 1024) }
        : null;
    default:
      return null;
  }
}

/** Splits a byte stream into lines; a line longer than MAX_LINE_BYTES is a broken stream. */
export class LineSplitter {
  private pending = "";

  constructor(private readonly onLine: (line: string) => void) {}

  /** False when the stream broke the line limit (the caller stops reading it). */
  push(chunk: Buffer | string): boolean {
    this.pending += typeof chunk === "string" ? chunk : chunk.toString("utf8");
    for (;;) {
      const nl = this.pending.indexOf("\n");
      if (nl < 0) break;
      const line = this.pending.slice(0, nl);
      this.pending = this.pending.slice(nl + 1);
      if (line !== "") this.onLine(line);
    }
    return this.pending.length <= MAX_LINE_BYTES;
  }
}

/**
 * Where execvp would find `program` in the sandbox: a path with a slash is taken from
 * `cwd`, a name is looked up on `searchPath` (an empty entry is `cwd`). ENOENT when
 * nothing of that name exists, EACCES when something does but cannot be executed.
 */
export function findProgram(
  program: string,
  searchPath: string,
  cwd: string,
): { file: string } | { error: "ENOENT" | "EACCES" } {
  if (program === "") return { error: "ENOENT" };
  const candidates = program.includes("/")
    ? [path.resolve(cwd, program)]
    : searchPath.split(":").map((dir) => path.resolve(cwd, dir === "" ? "." : dir, program));
  let denied = false;
  for (const file of candidates) {
    let st: fs.Stats;
    try {
      st = fs.statSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EACCES") denied = true;
      continue;
    }
    try {
      if (!st.isFile()) throw new Error("not a file");
      fs.accessSync(file, fs.constants.X_OK);
      return { file };
    } catch {
      denied = true;
    }
  }
  return { error: denied ? "EACCES" : "ENOENT" };
}

/** O_CLOEXEC as /proc/PID/fdinfo's octal `flags` shows it. */
const O_CLOEXEC = 0o2000000;

/**
 * Closes every descriptor this process was given beyond stdin, stdout and stderr
 * (its executable and file, and whatever the backend itself inherited): a command
 * must not get them. The runtime's own descriptors are all close-on-exec; these are
 * the ones that are not.
 */
export function closeInheritedDescriptors(): void {
  let fds: string[];
  try {
    fds = fs.readdirSync("/proc/self/fd");
  } catch {
    return;
  }
  for (const name of fds) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    try {
      const info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8");
      const flags = /^flags:\s+([0-7]+)$/m.exec(info)?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) fs.closeSync(fd);
    } catch {
      // gone already (the directory listing's own descriptor)
    }
  }
}

/** Runs the init: until its stdin (the backend) closes, then the sandbox ends with it. */
export function runInit(): void {
  closeInheritedDescriptors();
  const children = new Map<string, ChildProcess>();
  const send = (event: InitEvent) => {
    process.stdout.write(`${JSON.stringify(event)}\n`);
  };
  // Signals from inside the sandbox do not end it; the backend ends it by ending bwrap.
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGPIPE"] as const) {
    process.on(sig, () => {});
  }
  process.stdout.on("error", () => process.exit(0));
  const lines = new LineSplitter((line) => {
    const req = parseInitRequest(line);
    if (req === null) return;
    if (req.op === "spawn") startCommand(req, send, children);
    else forward(req, send);
  });
  process.stdin.on("data", (chunk: Buffer) => {
    if (!lines.push(chunk)) process.exit(2);
  });
  process.stdin.on("end", () => process.exit(0));
  process.stdin.on("error", () => process.exit(0));
  send({ ev: "ready", pid: process.pid });
}

/**
 * A connection to the backend for one stream, announced by its token; resolves once the
 * token is written. `halfOpen`: each direction ends on its own (a forwarded connection).
 */
function connectStream(token: string, halfOpen = false): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ path: IO_SOCKET, allowHalfOpen: halfOpen });
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.write(`${token}\n`, (err) => {
        if (err) reject(err);
        else {
          socket.off("error", reject);
          socket.on("error", () => {});
          resolve(socket);
        }
      });
    });
  });
}

function startCommand(
  req: Extract<InitRequest, { op: "spawn" }>,
  send: (e: InitEvent) => void,
  children: Map<string, ChildProcess>,
): void {
  const tokens = [req.stdin, req.stdout, req.stderr];
  const opened: net.Socket[] = [];
  const fail = (code: string, message: string) => {
    for (const s of opened) s.destroy();
    send({ ev: "failed", id: req.id, code, message });
  };
  Promise.all(
    tokens.map(async (t) => {
      if (t === null) return null;
      const s = await connectStream(t);
      opened.push(s);
      return s;
    }),
  ).then(
    ([stdin, stdout, stderr]) => {
      const found = findProgram(req.argv[0] ?? "", req.env.PATH ?? "", req.cwd);
      if ("error" in found) {
        fail(found.error, found.error === "ENOENT" ? "command not found" : "permission denied");
        return;
      }
      let child: ChildProcess;
      try {
        child = spawn(found.file, req.argv.slice(1), {
          argv0: req.argv[0],
          cwd: req.cwd,
          env: req.env,
          // A session and process group of its own: the backend signals the command's
          // session from outside, whatever this process is doing.
          detached: true,
          stdio: [stdin ?? "ignore", stdout ?? "ignore", stderr ?? "ignore"],
        });
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        fail(e.code ?? "EUNKNOWN", e.message);
        return;
      }
      // The command has its own copies; the backend sees the end of each stream when
      // the command and what it started close theirs.
      for (const s of opened) s.destroy();
      child.once("error", (err: NodeJS.ErrnoException) => {
        children.delete(req.id);
        send({ ev: "failed", id: req.id, code: err.code ?? "EUNKNOWN", message: err.message });
      });
      if (child.pid === undefined) return;
      children.set(req.id, child);
      send({ ev: "started", id: req.id, pid: child.pid });
      child.once("exit", (code, signal) => {
        children.delete(req.id);
        send({ ev: "exit", id: req.id, code, signal });
      });
    },
    (err: Error) => fail("EIO", `cannot reach the backend: ${err.message}`),
  );
}

/** Joins a connection to a port on the sandbox's loopback with one to the backend. */
function forward(req: Extract<InitRequest, { op: "connect" }>, send: (e: InitEvent) => void): void {
  const attempt = (hosts: string[], lastError: string) => {
    const host = hosts[0];
    if (host === undefined) {
      send({ ev: "refused", id: req.id, message: lastError });
      return;
    }
    // Half-open both ways: a client that says it is done sending still gets the answer.
    const inside = net.connect({ host, port: req.port, allowHalfOpen: true });
    inside.once("error", (err) => attempt(hosts.slice(1), err.message));
    inside.once("connect", () => {
      inside.removeAllListeners("error");
      connectStream(req.token, true).then(
        (back) => {
          inside.on("error", () => back.destroy());
          back.on("error", () => inside.destroy());
          inside.pipe(back);
          back.pipe(inside);
          send({ ev: "connected", id: req.id });
        },
        (err: Error) => {
          inside.destroy();
          send({ ev: "refused", id: req.id, message: `cannot reach the backend: ${err.message}` });
        },
      );
    });
  };
  attempt(["127.0.0.1", "::1"], "connection refused");
}

// On Node the backend starts this file itself: `node … /proc/self/fd/N __sandbox-init`.
if (process.argv[1]?.startsWith("/proc/self/fd/") && process.argv[2] === INIT_VERB) runInit();
