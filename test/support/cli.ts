// Spawning the built `bin/sbx` as a real process, with a private SBX_HOME, no colour
// and none of the developer's sbx environment leaking in.

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./repo.js";
import { removeDir, tempDir } from "./temp.js";

export { REPO_ROOT };
export const SBX_BIN = path.join(REPO_ROOT, "bin", "sbx");
/**
 * The executable SBX_TEST_BINARY names, as an absolute path: a relative one (the
 * README's `SBX_TEST_BINARY=dist/release/sbx`) is read from the directory vitest was
 * started in, since tests spawn sbx from their own temporary directories. A path that
 * names no file is said at once, not as 15 failing spawns.
 */
export function testBinaryFrom(env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const given = env.SBX_TEST_BINARY;
  if (!given) return undefined;
  const binary = path.resolve(cwd, given);
  if (!fs.existsSync(binary)) {
    throw new Error(
      `SBX_TEST_BINARY=${given}: no such file (${binary}); \`npm run build:binary\` writes dist/release/sbx`,
    );
  }
  return binary;
}

/**
 * SBX_TEST_BINARY=PATH: every spawned sbx is that executable (the release binary)
 * instead of `node bin/sbx`; .ci/run runs the end-to-end suite this way too.
 */
export const TEST_BINARY = testBinaryFrom(process.env, process.cwd());
const DIST_MAIN = path.join(REPO_ROOT, "dist", "cli", "main.js");

export interface SbxResult {
  /** Exit code, or null when killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface SbxOptions {
  /** SBX_HOME for this run (required: every test has its own). */
  home: string;
  /** Extra environment (e.g. SBX_API_KEY); a value of undefined removes the variable. */
  env?: Record<string, string | undefined>;
  /** Bytes for stdin; stdin is closed (empty) otherwise. */
  input?: string | Buffer;
  /**
   * Kill the process (SIGKILL) and fail after this long. Default 50 s: a safety net under
   * the test's own timeout, never a speed check (a machine busy with another suite is slow).
   */
  timeoutMs?: number;
  /** Another sbx executable to run (the release binary) instead of `node bin/sbx`. */
  bin?: string;
  /** A command that runs sbx (e.g. `/usr/bin/time -f %M -o FILE`): sbx's argv follows it. */
  via?: string[];
}

function assertBuilt(): void {
  if (!fs.existsSync(DIST_MAIN)) {
    throw new Error(`${DIST_MAIN} is missing: build first with \`npx tsc -p tsconfig.build.json\``);
  }
}

/** A clean environment: only what a process needs, plus SBX_HOME and NO_COLOR. */
export function sbxEnv(home: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    TMPDIR: process.env.TMPDIR ?? os.tmpdir(),
    LANG: "C.UTF-8",
    SBX_HOME: home,
    NO_COLOR: "1",
    // The validating run (test/contract/): daemons started by sbx record their exchanges.
    ...(process.env.SBX_WIRE_RECORD && { SBX_WIRE_RECORD: process.env.SBX_WIRE_RECORD }),
  };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Starts `node bin/sbx ARGS` and returns the child (for tests that kill it). */
export function spawnSbx(args: readonly string[], opts: SbxOptions): ChildProcess {
  const bin = opts.bin ?? TEST_BINARY;
  if (bin === undefined) assertBuilt();
  // `--`: node 20 would otherwise take sbx's --env-file as its own flag.
  const [program, argv] = bin === undefined ? [process.execPath, ["--", SBX_BIN, ...args]] : [bin, [...args]];
  const [command, ...rest] = [...(opts.via ?? []), program, ...argv];
  const child = spawn(command!, rest, {
    cwd: opts.home,
    env: sbxEnv(opts.home, opts.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin?.end(opts.input ?? "");
  return child;
}

/** Where a child that did not finish is: exited with its output still held open, or what it waits in and holds. */
function processState(child: ChildProcess): string {
  if (child.exitCode !== null || child.signalCode !== null) {
    return `it exited (${child.exitCode ?? child.signalCode}); something else holds its stdout or stderr open`;
  }
  try {
    const wchan = fs.readFileSync(`/proc/${child.pid}/wchan`, "utf8");
    const fds = fs.readdirSync(`/proc/${child.pid}/fd`).map((fd) => {
      try {
        return `${fd}->${fs.readlinkSync(`/proc/${child.pid}/fd/${fd}`)}`;
      } catch {
        return fd;
      }
    });
    const threads = fs.readdirSync(`/proc/${child.pid}/task`).map((tid) => {
      const at = (f: string) => fs.readFileSync(`/proc/${child.pid}/task/${tid}/${f}`, "utf8").trim();
      try {
        return `${at("comm")}:${at("wchan") || "running"}`;
      } catch {
        return tid;
      }
    });
    return `still running, waiting in ${wchan || "?"}; threads ${threads.join(" ")}; fds ${fds.join(" ")}`;
  } catch {
    return "state unknown";
  }
}

/** Collects a child's output and exit. */
export function collect(child: ChildProcess, timeoutMs = 50_000, what = "sbx"): Promise<SbxResult> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on("data", (c: Buffer) => out.push(c));
  child.stderr?.on("data", (c: Buffer) => err.push(c));
  return new Promise<SbxResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      const state = processState(child);
      child.kill("SIGKILL");
      reject(
        new Error(
          `${what} did not exit within ${timeoutMs} ms (${state})\nstdout: ${Buffer.concat(out)}\nstderr: ${Buffer.concat(err)}`,
        ),
      );
    }, timeoutMs);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
  });
}

/** Runs `node bin/sbx ARGS` to completion. */
export function runSbx(args: readonly string[], opts: SbxOptions): Promise<SbxResult> {
  return collect(spawnSbx(args, opts), opts.timeoutMs ?? 50_000, `sbx ${args.join(" ")}`);
}

/** Runs sbx and parses its stdout as one JSON document. */
export async function runSbxJson<T = unknown>(
  args: readonly string[],
  opts: SbxOptions,
): Promise<{ result: SbxResult; doc: T }> {
  const result = await runSbx(args, opts);
  let doc: T;
  try {
    doc = JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(
      `sbx ${args.join(" ")} (exit ${result.code}) did not print JSON\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
  return { result, doc };
}

/**
 * A fresh private SBX_HOME, removed when the test file ends; removeHome removes it
 * sooner. A daemon started there must be stopped by the test (daemon.ts, stopDaemon):
 * removing its home does not end it.
 */
export function makeHome(prefix = "sbx-test-"): string {
  return tempDir(prefix);
}

export function removeHome(home: string): void {
  removeDir(home);
}

/** Non-empty lines of a text. */
export function lines(text: string): string[] {
  return text.split("\n").filter((l) => l.trim() !== "");
}

/** Every regular file under a directory, recursively. */
export function filesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(p));
    else if (entry.isFile()) found.push(p);
  }
  return found;
}

/** Permission bits of a file (e.g. 0o600). */
export function modeOf(file: string): number {
  return fs.statSync(file).mode & 0o777;
}

/** The receipts database under an SBX_HOME. */
export function receiptsDbOf(home: string): string {
  return path.join(home, "receipts.db");
}
