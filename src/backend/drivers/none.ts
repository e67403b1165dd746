// The `none` driver (docs/drivers.md): no isolation. A command is the leader of its
// own process group, started in the workspace directory on the host with the clean
// command environment. It sees and may change whatever the daemon's user may; said
// loudly wherever such a sandbox is created or shown.

import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import type { Duplex } from "node:stream";
import type {
  CommandEnd,
  DriverDescription,
  DriverHost,
  DriverProbe,
  SandboxChild,
  SandboxDriver,
  SandboxPlacement,
  SpawnRequest,
} from "./driver.js";
import { terminalSupport } from "../../platform/pty.js";
import { runMembers, signalProcessGroup } from "./proc.js";
import { spawnTerminalRun } from "./terminal-child.js";
import { NONE_USAGE } from "./limits/usage.js";

export class NoneDriver implements SandboxDriver {
  readonly isolation = "none" as const;
  readonly runsEndWithBackend = false;
  readonly startsHeld = false;

  constructor(private readonly host: DriverHost) {}

  probe(): DriverProbe {
    return { available: true, reason: null, version: null };
  }

  workspacePath(placement: SandboxPlacement): string {
    return placement.workspaceDir;
  }

  commandPath(_placement: SandboxPlacement, hostPath: string): string {
    return hostPath;
  }

  spawn(req: SpawnRequest): SandboxChild {
    if (req.terminal !== undefined) {
      return spawnTerminalRun({ argv: req.argv, cwd: req.cwd, env: req.env, size: req.terminal });
    }
    const child = spawn(req.argv[0] ?? "", req.argv.slice(1), {
      cwd: req.cwd,
      env: req.env,
      // Its own process group, so the whole tree can be signalled at once.
      detached: true,
      stdio: [req.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    });
    return new GroupChild(child);
  }

  terminalSupport(): string | null {
    return terminalSupport();
  }

  /** A sandbox without isolation has the host's loopback: its port there (IPv4, then IPv6). */
  connect(_placement: SandboxPlacement, port: number): Promise<Duplex> {
    const attempt = (hosts: string[], last: Error | null): Promise<Duplex> =>
      new Promise((resolve, reject) => {
        const host = hosts[0];
        if (host === undefined) return reject(last ?? new Error("connection refused"));
        const socket = net.connect({ host, port, allowHalfOpen: true });
        socket.once("connect", () => {
          socket.removeAllListeners("error");
          resolve(socket);
        });
        socket.once("error", (err) => resolve(attempt(hosts.slice(1), err)));
      });
    return attempt(["127.0.0.1", "::1"], null);
  }

  describe(_placement: SandboxPlacement): DriverDescription {
    return {
      isolation: "none",
      version: null,
      user: this.host.username,
      host_uid: this.host.uid,
      namespaces: [],
      host_paths_read_only: null,
      syscall_filter: null,
    };
  }
}

/** A run that is exactly one process group: the leader's. */
class GroupChild implements SandboxChild {
  /** The command is the leader: it started when it was spawned. */
  readonly started = Promise.resolve(true);

  constructor(readonly process: ChildProcess) {}

  onOutput(listener: (stream: "stdout" | "stderr", chunk: Buffer) => void): void {
    this.process.stdout?.on("data", (chunk: Buffer) => listener("stdout", chunk));
    this.process.stderr?.on("data", (chunk: Buffer) => listener("stderr", chunk));
  }

  get pgid(): number {
    return this.process.pid ?? -1;
  }

  signal(signal: NodeJS.Signals): boolean {
    return this.process.pid !== undefined && signalProcessGroup(this.process.pid, signal);
  }

  commandEnd(code: number | null, signal: NodeJS.Signals | null, done: (end: CommandEnd) => void): void {
    done({ code, signal, startFailure: null, endReason: null, usage: NONE_USAGE });
  }

  members(): string[] {
    return this.process.pid === undefined ? [] : runMembers(this.process.pid).map((p) => p.name);
  }

  proceed(): void {
    // Never held: the command runs from its spawn.
  }
}
