// sbx run in this process through main(), with buffer IO and the same clean
// environment a spawned bin/sbx gets (sbxEnv): for the tests of what sbx prints and
// records, where the process boundary is not the point (signals, crashes and the
// daemon's start-up are; those spawn bin/sbx, see cli.ts). In-process, sbx cannot start
// its daemon: a command of the local profile needs the backend on the home's socket
// (localHome, or home-backend.ts).

import type { BackendHandle, BackendOptions } from "../../src/backend/backend.js";
import { type BufferIO, createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { makeHome, removeHome, type SbxResult, sbxEnv } from "./cli.js";
import { startHomeBackend } from "./home-backend.js";

export interface MainOptions {
  /** SBX_HOME for this run (required: every test has its own). */
  home: string;
  /** Extra environment (e.g. SBX_API_KEY); a value of undefined removes the variable. */
  env?: Record<string, string | undefined>;
  /** Bytes for stdin; stdin is empty otherwise. */
  input?: string | Buffer;
  /** stdout and stderr are terminals. */
  tty?: boolean;
  /** The terminal's width, with tty (default 80). */
  columns?: number;
  /** Stops sbx as SIGTERM would, when aborted. */
  interrupt?: AbortSignal;
}

export interface RunningMain {
  /** What sbx printed so far (readable while it runs). */
  io: BufferIO;
  done: Promise<SbxResult>;
}

/** Starts `sbx ARGS` in this process; its output can be read while it runs. */
export function startMain(args: readonly string[], opts: MainOptions): RunningMain {
  const env = sbxEnv(opts.home, opts.env);
  const io = createBufferIO({
    env,
    ...(opts.tty === undefined ? {} : { tty: opts.tty }),
    ...(opts.columns === undefined ? {} : { columns: opts.columns }),
    ...(opts.input === undefined ? {} : { stdin: opts.input }),
  });
  const done = main([...args], io, env, opts.interrupt === undefined ? {} : { interrupt: opts.interrupt }).then(
    (code) => ({
      code,
      signal: null,
      stdout: io.stdoutText(),
      stderr: io.stderrText(),
    }),
  );
  return { io, done };
}

/** Runs `sbx ARGS` in this process to completion. */
export function runMain(args: readonly string[], opts: MainOptions): Promise<SbxResult> {
  return startMain(args, opts).done;
}

/** Runs sbx in this process and parses its stdout as one JSON document. */
export async function runMainJson<T = unknown>(
  args: readonly string[],
  opts: MainOptions,
): Promise<{ result: SbxResult; doc: T }> {
  const result = await runMain(args, opts);
  try {
    return { result, doc: JSON.parse(result.stdout) as T };
  } catch {
    throw new Error(
      `sbx ${args.join(" ")} (exit ${result.code}) did not print JSON\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
}

export type MoreOptions = Omit<MainOptions, "home">;

/** A private SBX_HOME with the embedded backend on its socket, and sbx run in-process there. */
export interface LocalHome {
  home: string;
  backend: BackendHandle;
  sbx(args: readonly string[], more?: MoreOptions): Promise<SbxResult>;
  json<T = unknown>(args: readonly string[], more?: MoreOptions): Promise<{ result: SbxResult; doc: T }>;
  /** Stops the backend and removes the home. */
  close(): Promise<void>;
}

export async function localHome(prefix = "sbx-local-", opts: Partial<BackendOptions> = {}): Promise<LocalHome> {
  const home = makeHome(prefix);
  let backend: BackendHandle;
  try {
    backend = await startHomeBackend(home, opts);
  } catch (err) {
    removeHome(home);
    throw err;
  }
  return {
    home,
    backend,
    sbx: (args, more = {}) => runMain(args, { ...more, home }),
    json: (args, more = {}) => runMainJson(args, { ...more, home }),
    close: async () => {
      await backend.close();
      removeHome(home);
    },
  };
}
