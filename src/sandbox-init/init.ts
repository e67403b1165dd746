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
// A command asked for with `tty` runs on a pseudo-terminal the init opens inside the
// sandbox (its own devpts), through the platform's terminal seam (src/platform/pty.ts):
// Bun's terminal in the release binary, node-pty's native addon on Node, handed to the
// init by descriptor (--terminal-addon). That command's one connection (its stdout
// token) carries the terminal both ways: what it draws out, what is typed in.
//
// This file is a program on its own: it imports nothing but Node's built-in modules
// (which Bun provides too), and the terminal seam only when a terminal is asked for,
// because on Node it is run from its file descriptor inside the sandbox, where nothing
// else of sbx is (the build bundles that seam into it: scripts/bundle-node.mjs). The
// backend imports it for the message types and their checks only. Everything it receives it treats as a request
// from the backend; everything it sends, the backend treats as untrusted (a command
// of the sandbox can write to this process's descriptors).

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { EGRESS_FLAG, startEgressForwarders } from "./egress.js";

/** The argument that makes sbx (the release binary) or this file (on Node) act as the init. */
export const INIT_VERB = "__sandbox-init";
/** Where the backend's socket for this sandbox is, inside it. */
export const RUN_DIR_INSIDE = "/run/sbx";
export const IO_SOCKET = `${RUN_DIR_INSIDE}/io.sock`;
/** A stream's token: 32 lowercase hex characters, then a newline, first on its connection. */
export const TOKEN_LENGTH = 32;
/** The longest line either side accepts (a command's argv and environment are inside). */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;

/** The argument after INIT_VERB that names node-pty's addon (a descriptor's path), on Node. */
export const TERMINAL_ADDON_FLAG = "--terminal-addon";

/** A terminal's window size. */
export interface InitTerminalSize {
  cols: number;
  rows: number;
}

export type InitRequest =
  | {
      op: "spawn";
      id: string;
      argv: string[];
      env: Record<string, string>;
      cwd: string;
      /**
       * Tokens of the connections for the command's stdio; stdin null: /dev/null. With
       * `tty`, stdout's connection is the terminal both ways and stdin and stderr are null.
       */
      stdin: string | null;
      stdout: string;
      stderr: string | null;
      /** Run on a new pseudo-terminal of the sandbox's, this size. */
      tty?: InitTerminalSize;
      /**
       * Get it ready (find its program, connect its streams) but start it only at a
       * `proceed` of its id; a `discard` lets it go. Not with `tty`.
       */
      held?: true;
    }
  | { op: "proceed"; id: string }
  | { op: "discard"; id: string }
  | { op: "resize"; id: string; cols: number; rows: number }
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
    const { argv, env, cwd, stdin, stdout, stderr, tty } = d;
    if (!isStringArray(argv) || argv.length === 0 || !isStringMap(env) || typeof cwd !== "string") return null;
    if (tty !== undefined) {
      if (!isTerminalSize(tty) || stdin !== null || stderr !== null || !isToken(stdout)) return null;
      if (d.held !== undefined) return null;
      return { op: "spawn", id: d.id, argv, env, cwd, stdin, stdout, stderr, tty: { cols: tty.cols, rows: tty.rows } };
    }
    if (!(stdin === null || isToken(stdin)) || !isToken(stdout) || !isToken(stderr)) return null;
    if (d.held !== undefined && d.held !== true) return null;
    return { op: "spawn", id: d.id, argv, env, cwd, stdin, stdout, stderr, ...(d.held === true && { held: true }) };
  }
  if (d.op === "proceed" || d.op === "discard") return { op: d.op, id: d.id };
  if (d.op === "resize") {
    if (!isTerminalSize(d)) return null;
    return { op: "resize", id: d.id, cols: d.cols, rows: d.rows };
  }
  if (d.op === "connect") {
    if (!isToken(d.token) || !isPort(d.port)) return null;
    return { op: "connect", id: d.id, port: d.port, token: d.token };
  }
  return null;
}

function isDimension(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 65535;
}

function isTerminalSize(v: unknown): v is InitTerminalSize {
  return isRecord(v) && isDimension(v.cols) && isDimension(v.rows);
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
 * nothing of that name exists, EACCES when something does but cannot be executed,
 * EISDIR when a path names a directory.
 */
export function findProgram(
  program: string,
  searchPath: string,
  cwd: string,
): { file: string } | { error: "ENOENT" | "EACCES" | "EISDIR" } {
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
    if (program.includes("/") && st.isDirectory()) return { error: "EISDIR" };
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

/** What a shell says of a program it cannot start. */
function spawnWhy(code: "ENOENT" | "EACCES" | "EISDIR"): string {
  return code === "ENOENT" ? "command not found" : code === "EISDIR" ? "is a directory" : "permission denied";
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

/** What the init keeps of a command on a terminal: how to resize it. */
interface TerminalHandle {
  resize(size: InitTerminalSize): void;
}

/**
 * The terminal addon named on the command line (`--terminal-addon /proc/self/fd/N`),
 * opened again close-on-exec so that it outlives closeInheritedDescriptors and no
 * command inherits it; null when none was given or it cannot be opened.
 */
function keepTerminalAddon(args: readonly string[]): string | null {
  const at = args.indexOf(TERMINAL_ADDON_FLAG);
  const given = at < 0 ? undefined : args[at + 1];
  if (given === undefined || !given.startsWith("/proc/self/fd/")) return null;
  try {
    // Node and Bun open every descriptor close-on-exec.
    return `/proc/self/fd/${fs.openSync(given, "r")}`;
  } catch {
    return null;
  }
}

/** Runs the init: until its stdin (the backend) closes, then the sandbox ends with it. */
export function runInit(): void {
  const addon = keepTerminalAddon(process.argv.slice(3));
  closeInheritedDescriptors();
  const children = new Map<string, ChildProcess>();
  const terminals = new Map<string, TerminalHandle>();
  const held = new Map<string, HeldCommand>();
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
    if (req.op === "spawn" && req.tty !== undefined) startOnTerminal(req, req.tty, addon, send, terminals);
    else if (req.op === "spawn") startCommand(req, send, children, held);
    else if (req.op === "proceed") held.get(req.id)?.proceed();
    else if (req.op === "discard") held.get(req.id)?.discard();
    else if (req.op === "resize") terminals.get(req.id)?.resize({ cols: req.cols, rows: req.rows });
    else forward(req, send);
  });
  process.stdin.on("data", (chunk: Buffer) => {
    if (!lines.push(chunk)) process.exit(2);
  });
  process.stdin.on("end", () => process.exit(0));
  process.stdin.on("error", () => process.exit(0));
  // With an egress proxy (network allow-list): ready once its loopback port listens.
  const egress = process.argv.slice(3).includes(EGRESS_FLAG)
    ? startEgressForwarders(RUN_DIR_INSIDE, (line) => process.stderr.write(`${line}\n`))
    : Promise.resolve();
  void egress.then(() => send({ ev: "ready", pid: process.pid }));
}

/**
 * A connection to the backend for one stream, announced by its token; resolves once the
 * token is written. `halfOpen`: each direction ends on its own (a forwarded connection; a
 * terminal's, which carries output on after the backend's input ended).
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

/** A command asked for `held`: ready (or getting ready) and waiting for its go. */
interface HeldCommand {
  proceed(): void;
  discard(): void;
}

/**
 * Starts a command, or with `held` gets it ready: its program found and its streams
 * connected while the backend stores its admission (docs/drivers.md, "Entering"), and
 * starts it (or says why it cannot) only at its `proceed`; a `discard` closes its
 * streams and forgets it.
 */
function startCommand(
  req: Extract<InitRequest, { op: "spawn" }>,
  send: (e: InitEvent) => void,
  children: Map<string, ChildProcess>,
  held: Map<string, HeldCommand>,
): void {
  const tokens = [req.stdin, req.stdout, req.stderr];
  const opened: net.Socket[] = [];
  let go = req.held !== true;
  let discarded = false;
  /** What happens at the go, once known: the start, or the failure to tell. */
  let next: (() => void) | null = null;
  const atGo = (step: () => void) => {
    if (discarded) return;
    if (go) step();
    else next = step;
  };
  if (req.held === true) {
    held.set(req.id, {
      proceed: () => {
        held.delete(req.id);
        go = true;
        const step = next;
        next = null;
        step?.();
      },
      discard: () => {
        held.delete(req.id);
        discarded = true;
        next = null;
        for (const s of opened) s.destroy();
      },
    });
  }
  const fail = (code: string, message: string) => {
    for (const s of opened) s.destroy();
    send({ ev: "failed", id: req.id, code, message });
  };
  // Before any stream is opened: a program that is not there leaves them all to the
  // backend, which says so on stderr (an opened one, closed here, could end it first).
  const found = findProgram(req.argv[0] ?? "", req.env.PATH ?? "", req.cwd);
  if ("error" in found) {
    atGo(() => fail(found.error, spawnWhy(found.error)));
    return;
  }
  Promise.all(
    tokens.map(async (t) => {
      if (t === null) return null;
      const s = await connectStream(t);
      // Discarded meanwhile: a connection that arrives late is closed too.
      if (discarded) s.destroy();
      else opened.push(s);
      return s;
    }),
  ).then(
    (streams) => atGo(() => spawnCommand(req, found.file, streams, opened, send, children, fail)),
    (err: Error) => {
      if (discarded) for (const s of opened) s.destroy();
      else atGo(() => fail("EIO", `cannot reach the backend: ${err.message}`));
    },
  );
}

/** Starts the command on its connected streams (each the command's own copy from here). */
function spawnCommand(
  req: Extract<InitRequest, { op: "spawn" }>,
  file: string,
  [stdin, stdout, stderr]: (net.Socket | null)[],
  opened: net.Socket[],
  send: (e: InitEvent) => void,
  children: Map<string, ChildProcess>,
  fail: (code: string, message: string) => void,
): void {
  let child: ChildProcess;
  try {
    child = spawn(file, req.argv.slice(1), {
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
}

/** Input the terminal may hold unwritten before the connection is read no more (back-pressure). */
const TERMINAL_INPUT_HIGH = 64 * 1024;
/** How often a full terminal is looked at again. */
const TERMINAL_INPUT_POLL_MS = 10;

/**
 * Starts a command on a new pseudo-terminal opened here, inside the sandbox. Its
 * connection (the stdout token's) is the terminal's master side both ways; closed by
 * the backend, the terminal is closed (the session is hung up on, as when a terminal
 * window closes). Its exit is told once what it wrote has been handed on.
 */
function startOnTerminal(
  req: Extract<InitRequest, { op: "spawn" }>,
  size: InitTerminalSize,
  addon: string | null,
  send: (e: InitEvent) => void,
  terminals: Map<string, TerminalHandle>,
): void {
  let socket: net.Socket | null = null;
  const fail = (code: string, message: string) => {
    socket?.destroy();
    send({ ev: "failed", id: req.id, code, message });
  };
  const start = async () => {
    // Before the connection is made: a program that is not there leaves the terminal's
    // one stream to the backend, which says so on it.
    const found = findProgram(req.argv[0] ?? "", req.env.PATH ?? "", req.cwd);
    if ("error" in found) {
      fail(found.error, spawnWhy(found.error));
      return;
    }
    socket = await connectStream(req.stdout, true).catch((err: Error) => {
      throw Object.assign(new Error(`cannot reach the backend: ${err.message}`), { code: "EIO" });
    });
    // The seam, bundled into this file (it imports only Node's built-ins).
    const seam = await import("../platform/pty.js");
    if (addon !== null) seam.useTerminalAddon(addon);
    const term = seam.spawnOnTerminal({
      file: found.file,
      args: req.argv.slice(1),
      cwd: req.cwd,
      env: req.env,
      ...size,
    });
    const conn = socket;
    terminals.set(req.id, { resize: (s) => term.resize(s) });
    send({ ev: "started", id: req.id, pid: term.pid });
    let exited = false;
    term.onData((chunk) => {
      if (!conn.destroyed) conn.write(chunk);
    });
    const waitForRoom = () => {
      if (term.pendingInput() < TERMINAL_INPUT_HIGH) conn.resume();
      else setTimeout(waitForRoom, TERMINAL_INPUT_POLL_MS);
    };
    conn.on("data", (chunk: Buffer) => {
      term.write(chunk);
      if (term.pendingInput() >= TERMINAL_INPUT_HIGH) {
        conn.pause();
        setTimeout(waitForRoom, TERMINAL_INPUT_POLL_MS);
      }
    });
    conn.on("close", () => {
      if (!exited) term.close();
    });
    term.onExit(({ code, signal }) => {
      exited = true;
      terminals.delete(req.id);
      let told = false;
      const tell = () => {
        if (told) return;
        told = true;
        send({ ev: "exit", id: req.id, code, signal });
      };
      conn.once("close", tell);
      if (conn.destroyed) tell();
      else conn.end(tell);
    });
  };
  start().catch((err: NodeJS.ErrnoException) => fail(err.code ?? "EUNKNOWN", err.message));
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
