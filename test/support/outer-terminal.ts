// A real pseudo-terminal for end-to-end tests of terminal sessions (sbx shell, exec -it,
// attach): a shell script runs on it as a user's command line would, the test types
// at it, resizes it and reads what it draws, byte for byte. Made through the project's
// terminal seam (src/platform/pty.ts: node-pty's addon, with the master read there),
// not node-pty's own spawn: node-pty's reader takes the hang-up at the script's exit for
// the end of its output and drops what it has not read yet (all but 4 KiB when it is
// behind; on a loaded machine the last lines of short sessions), and the script's last
// lines are sbx's exit status and the end of the session (test/unit/outer-terminal.test.ts).
// What is under test is sbx inside it, not this terminal.

import fs from "node:fs";
import { spawnOnTerminal, type TerminalProcess } from "../../src/platform/pty.js";
import { SBX_BIN, TEST_BINARY } from "./cli.js";
import { until } from "./wait.js";

export class OuterTerminal {
  private readonly chunks: Buffer[] = [];
  private seen = 0;
  /** The script's exit, once everything it wrote was read. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly pty: TerminalProcess;

  constructor(script: string, opts: { cwd: string; env: NodeJS.ProcessEnv; cols?: number; rows?: number }) {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.env)) if (v !== undefined) env[k] = v;
    // As node-pty's spawn has it: the terminal's type, and where the script starts.
    Object.assign(env, { TERM: "xterm-256color", PWD: opts.cwd });
    const pty = spawnOnTerminal({
      file: "/bin/sh",
      args: ["-c", script],
      cwd: opts.cwd,
      env,
      cols: opts.cols ?? 80,
      rows: opts.rows ?? 24,
    });
    this.pty = pty;
    pty.onData((d) => this.chunks.push(d));
    this.exited = new Promise((resolve) => pty.onExit(resolve));
  }

  /** The script's shell. */
  get pid(): number {
    return this.pty.pid;
  }

  /** Everything drawn so far, as bytes. */
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  /** Everything drawn so far (bytes as latin1: one character each). */
  text(): string {
    return this.bytes().toString("latin1");
  }

  type(data: string | Buffer): void {
    this.pty.write(typeof data === "string" ? Buffer.from(data, "utf8") : data);
  }

  resize(cols: number, rows: number): void {
    this.pty.resize({ cols, rows });
  }

  /** Waits until the output after the last match (or the start) matches; later waits look past it. */
  async waitFor(pattern: RegExp | string, what: string, timeoutMs = 30_000): Promise<RegExpMatchArray> {
    const re = typeof pattern === "string" ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")) : pattern;
    try {
      const m = await until(
        () => {
          const rest = this.text().slice(this.seen);
          const found = re.exec(rest);
          if (!found) return undefined;
          this.seen += found.index + found[0].length;
          return found;
        },
        timeoutMs,
        what,
      );
      return m;
    } catch (err) {
      throw new Error(
        `${(err as Error).message}; the terminal shows after the last match:\n${JSON.stringify(this.text().slice(this.seen))}`,
      );
    }
  }

  kill(): void {
    try {
      process.kill(this.pty.pid, "SIGKILL");
    } catch {
      // Gone.
    }
    // The master closed: whatever else still holds the terminal (sbx) is hung up on.
    this.pty.close();
  }
}

/** A word for sh, quoted. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** How a user's shell runs sbx: `node bin/sbx`, or the release binary (SBX_TEST_BINARY). */
export const SBX_COMMAND =
  TEST_BINARY === undefined ? `${shellQuote(process.execPath)} -- ${shellQuote(SBX_BIN)}` : shellQuote(TEST_BINARY);

/**
 * Runs `sbx ARGS` on a new terminal the way a user's shell would, with what happens
 * written under `dir` (a new directory): the terminal's mode before and after (stty -g),
 * sbx's pid and its exit status.
 */
export function sbxSession(
  dir: string,
  args: string,
  opts: { cwd: string; env: NodeJS.ProcessEnv; cols?: number; rows?: number },
) {
  fs.mkdirSync(dir);
  const script = [
    `stty -g > ${shellQuote(`${dir}/before`)}`,
    `sh -c 'echo $$ > "$0/pid"; exec "$@"' ${shellQuote(dir)} ${SBX_COMMAND} ${args}`,
    `echo "sbx-exit=$?"`,
    `stty -g > ${shellQuote(`${dir}/after`)}`,
    "echo session-over",
  ].join("; ");
  const t = new OuterTerminal(script, opts);
  return {
    t,
    pid: () =>
      until(() => fs.existsSync(`${dir}/pid`) && Number(fs.readFileSync(`${dir}/pid`, "utf8")), 30_000, "sbx's pid"),
    /** sbx's exit status, once the session is over; and whether the mode came back as it was. */
    over: async () => {
      const m = await t.waitFor(/sbx-exit=(\d+)/, "sbx to exit");
      await t.waitFor("session-over", "the session's end");
      const before = fs.readFileSync(`${dir}/before`, "utf8");
      const after = fs.readFileSync(`${dir}/after`, "utf8");
      return { code: Number(m[1]), sameMode: before === after, before, after };
    },
  };
}
