// One live sandbox (docs/drivers.md, "One sandbox, one environment"): a bwrap started
// once with every namespace, the sandbox's uid and the syscall filter, whose command
// is the sandbox's init (src/sandbox-init/init.ts). Every command of the sandbox is
// started by that init on request (entered-run.ts), so it shares the sandbox's process
// table, loopback, /tmp and hostname. The sandbox ends when bwrap does: stopped by the
// backend (SIGKILL to bwrap's group), with the backend (--die-with-parent), or when
// its init ends (bwrap's pid 1 then ends the pid namespace, and with it everything).
//
//   bwrap (leader, the backend's child)            ← stdin: requests; stdout: events
//    └ bwrap's pid 1 in the sandbox (reaps orphans)
//       └ init (pid 2)                              ← connects to io.sock per stream
//          └ each command, a session of its own

import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import type net from "node:net";
import { EnvironmentEndedError } from "../driver.js";
import { type InitEvent, type InitRequest, LineSplitter, parseInitEvent } from "../../../sandbox-init/init.js";
import {
  childrenOf,
  innermostIds,
  innermostPid,
  type ProcEntry,
  pidNamespace,
  processTree,
  readProcEntry,
} from "../proc.js";
import { type CommandMeasure, notMeasured } from "../limits/usage.js";
import { type EnteredCommand, EnteredRun, type EnvironmentPort } from "./entered-run.js";
import type { StreamSocket } from "./io-socket.js";
import { startFailureCause } from "./start-failure.js";
import { parseStatus } from "./status.js";

/** How long a sandbox may take to start (bwrap, then the init's runtime) before it is given up. */
export const START_TIMEOUT_MS = 60_000;
/** How long a published port's connection may wait for the init to join it. */
const CONNECT_TIMEOUT_MS = 10_000;
/** How long a fork's answer (started, failed) is waited for before the next fork goes (an init that is stuck). */
const FORK_ANSWER_MS = 10_000;
/** What is kept of bwrap's and the init's own complaints (stderr), to say why a sandbox ended. */
const STDERR_KEEP = 4096;

export type EnvironmentState = "starting" | "running" | "ended";

export interface LiveSandboxOptions {
  /** bwrap, spawned held: stdin, stdout, stderr pipes; its --json-status-fd at `statusFd`. */
  leader: ChildProcess;
  statusFd: number;
  /** Lets bwrap go on (writes its options): called once the leader is where it must be. */
  release: () => void;
  /**
   * Called with the held leader's pid before `release` (the hook for resource limits:
   * attach it to the sandbox's cgroup, so that everything of the sandbox starts in it).
   * A rejection ends the start; its message is the start failure's cause.
   */
  beforeRelease?: (leaderPid: number) => Promise<void> | void;
  /** Watches the sandbox's memory cgroup for OOM kills from now on (Limiter.watch), for one command. */
  watchMemory?: () => { oomKilled(): boolean };
  /** How one command is measured (Limiter.measure: a cgroup of its own); absent: not at all, said so. */
  measure?: (runId: string) => CommandMeasure;
  /**
   * Gives the sandbox its network (network mode user) once its init runs, before any
   * command does: resolves with what to stop when the sandbox ends. A rejection ends
   * the start; its message is the start failure's cause.
   */
  attachNetwork?: (initHostPid: number) => Promise<{ stop(): void; ended: Promise<string> }>;
  io: StreamSocket;
  /** Resolves once io listens. */
  ioReady: Promise<void>;
  /** The sandbox ended; the driver forgets it and cleans up (its run directory). */
  onEnded: (sandbox: LiveSandbox) => void;
  log: (line: string) => void;
  now?: () => number;
}

export class LiveSandbox implements EnvironmentPort {
  state: EnvironmentState = "starting";
  /** Resolves once the init is ready for commands; rejects saying why the sandbox could not start. */
  readonly ready: Promise<void>;
  /** Resolves once bwrap has ended (and with it everything in the sandbox). */
  readonly ended: Promise<void>;
  /** Why it ended, when it did not end because it was stopped. */
  endReason: string | null = null;
  /** Why it could not be set up (it ended before its init was ready, not stopped by the backend), or null. */
  startFailure: string | null = null;
  readonly startedAt: number;
  readonly io: StreamSocket;
  private readonly leader: ChildProcess;
  private readonly runs = new Map<string, EnteredRun>();
  private queue: InitRequest[] = [];
  /** Forks waiting for their turn (requestFork): one at a time, each with the init in its command's cgroup. */
  private forks: Array<{ req: InitRequest; measure: CommandMeasure }> = [];
  /** The fork under way: the init is in its command's cgroup until it is told started or failed. */
  private forking: { id: string; measure: CommandMeasure; timer: NodeJS.Timeout } | null = null;
  private reaperPid: number | null = null;
  /** The init's `ready`, when it came before bwrap's status said the sandbox's pid 1. */
  private pendingReady: Extract<InitEvent, { ev: "ready" }> | null = null;
  private initPid: number | null = null;
  private namespace: string | null = null;
  private stderrTail = "";
  private network: { stop(): void } | null = null;
  /** Connections asked of the init (published ports), by request id. */
  private readonly connecting = new Map<string, (refused: string) => void>();
  /** Connections joined to ports inside (published ports, port forwards): ended with the sandbox. */
  private readonly joined = new Set<net.Socket>();
  private connectCount = 0;
  private stopping = false;
  private resolveReady!: () => void;
  private rejectReady!: (err: Error) => void;
  private readonly startTimer: NodeJS.Timeout;

  constructor(private readonly opts: LiveSandboxOptions) {
    this.leader = opts.leader;
    this.io = opts.io;
    this.startedAt = (opts.now ?? Date.now)();
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {});
    this.ended = new Promise((resolve) => {
      this.leader.once("close", () => resolve());
    });
    const leader = this.leader;
    leader.on("error", (err) => this.end(`bwrap could not start: ${err.message}`));
    leader.stdin?.on("error", () => {});
    const lines = new LineSplitter((line) => this.onLine(line));
    leader.stdout?.on("data", (chunk: Buffer) => {
      if (!lines.push(chunk)) this.stop("the sandbox's init sent a line past the limit");
    });
    leader.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_KEEP);
    });
    const status = leader.stdio[opts.statusFd] as NodeJS.ReadableStream | null;
    let statusText = "";
    status?.on("data", (chunk: Buffer) => {
      statusText += chunk.toString("utf8");
      this.reaperPid ??= parseStatus(statusText).childPid;
      // The init's `ready` may have come first (another pipe): it is taken now.
      const ready = this.pendingReady;
      if (ready !== null && this.reaperPid !== null) {
        this.pendingReady = null;
        this.onReady(ready);
      }
    });
    status?.on("error", () => {});
    leader.once("exit", (code, signal) => {
      const decide = () => {
        const said = this.stderrTail.trim().split("\n").slice(-3).join("\n");
        this.end(startFailureCause(said, code, signal));
      };
      // bwrap's message can still be on its way when its exit is seen (an empty cause, in CI
      // under load): decided once its stderr has ended. Nothing of the sandbox outlives bwrap.
      const stderr = leader.stderr;
      if (stderr === null || stderr.destroyed || stderr.readableEnded) decide();
      else stderr.once("close", decide);
    });
    this.startTimer = setTimeout(() => {
      if (this.state === "starting") this.stop(`the sandbox did not start within ${START_TIMEOUT_MS / 1000} s`);
    }, START_TIMEOUT_MS);
    this.startTimer.unref?.();
    opts.ioReady.then(
      () => this.prepareAndRelease(),
      (err: Error) => this.stop(`cannot listen for the sandbox's streams: ${err.message}`),
    );
  }

  /** The held leader is placed (beforeRelease), then let go on: bwrap sets the sandbox up. */
  private async prepareAndRelease(): Promise<void> {
    try {
      await this.opts.beforeRelease?.(this.leaderPid);
    } catch (err) {
      this.stop(`the sandbox could not be prepared: ${(err as Error).message}`);
      return;
    }
    if (this.state === "starting" && !this.stopping) this.opts.release();
  }

  /** The sandbox's leader (bwrap) on the host. */
  get leaderPid(): number {
    return this.leader.pid ?? -1;
  }

  /** A command to start in the sandbox; it is asked for at the run's proceed(). */
  enter(command: EnteredCommand): EnteredRun {
    const run = new EnteredRun(this, command);
    this.runs.set(command.id, run);
    if (this.state === "ended") queueMicrotask(() => run.sandboxEnded(this.startFailure));
    return run;
  }

  request(req: InitRequest): void {
    if (this.state === "ended") {
      this.runs.get(req.id)?.sandboxEnded(this.startFailure);
      return;
    }
    if (this.state === "starting") {
      this.queue.push(req);
      return;
    }
    this.leader.stdin?.write(`${JSON.stringify(req)}\n`);
  }

  withdraw(id: string): boolean {
    const before = this.queue.length + this.forks.length;
    this.queue = this.queue.filter((r) => r.id !== id);
    this.forks = this.forks.filter((f) => f.req.id !== id);
    return this.queue.length + this.forks.length < before;
  }

  measure(id: string): CommandMeasure {
    return this.opts.measure?.(id) ?? notMeasured("this sandbox's driver measures nothing");
  }

  /**
   * A request that forks a command. Measured in a cgroup of its own, it waits for the fork
   * before it (if any), then the init joins the command's cgroup, the request goes, and the
   * init goes back once it says the command started (or could not): what the command
   * starts is born in its cgroup (docs/operations.md, "Per-command usage").
   */
  requestFork(req: InitRequest, measure: CommandMeasure): void {
    if (!measure.moves || this.state === "ended") {
      this.request(req);
      return;
    }
    this.forks.push({ req, measure });
    this.nextFork();
  }

  private nextFork(): void {
    if (this.state !== "running" || this.forking !== null || this.initPid === null) return;
    const next = this.forks.shift();
    if (next === undefined) return;
    const init = this.initPid;
    next.measure.enter(init);
    // An init that never answers (stuck) does not hold every later command back.
    const timer = setTimeout(() => this.forked(next.req.id), FORK_ANSWER_MS);
    timer.unref?.();
    this.forking = { id: next.req.id, measure: next.measure, timer };
    this.leader.stdin?.write(`${JSON.stringify(next.req)}\n`);
  }

  /** The fork under way was answered: the init goes back to its own cgroup, and the next fork may go. */
  private forked(id: string): void {
    const f = this.forking;
    if (f === null || f.id !== id) return;
    clearTimeout(f.timer);
    this.forking = null;
    if (this.initPid !== null) f.measure.leave(this.initPid);
    this.nextFork();
  }

  forget(id: string): void {
    this.runs.delete(id);
  }

  /** Runs (executions, process runs, jobs) the backend has in this sandbox now. */
  get runCount(): number {
    return this.runs.size;
  }

  /** Whether the OOM killer kills in the sandbox from now on (never, without a memory cgroup). */
  watchMemory(): { oomKilled(): boolean } {
    return this.opts.watchMemory?.() ?? { oomKilled: () => false };
  }

  hostPidOf(nsPid: number): number | null {
    if (this.initPid === null) return null;
    for (const child of childrenOf(this.initPid)) {
      if (innermostPid(child) === nsPid) return child;
    }
    // Gone already (a quick command): what it left in its session still says its host
    // pid, as the session's id.
    for (const p of this.processes()) {
      if (innermostIds(p.pid)?.sid === nsPid) return p.sid;
    }
    return null;
  }

  session(sid: number): ProcEntry[] {
    return this.processes().filter((p) => innermostIds(p.pid)?.sid === sid);
  }

  /**
   * Every live process in the sandbox, its pid 1 and init included: bwrap's pid 1 and
   * what descends from it (everything of its pid namespace: an orphan there is its
   * child). Walked from it, not found by a scan of the host's /proc, which costs a
   * read per process of the machine (10–20 ms on a busy one) on every command's end.
   */
  processes(): ProcEntry[] {
    const reaper = this.reaperPid;
    if (this.namespace === null || reaper === null || this.state === "ended") return [];
    // The pid is still the sandbox's own (not reused): it is in the namespace it made.
    if (pidNamespace(reaper) !== this.namespace) return [];
    return processTree(reaper);
  }

  /** The init's host pid, once it is running. */
  get initHostPid(): number | null {
    return this.initPid;
  }

  /**
   * Ends the sandbox and everything in it (SIGKILL to bwrap's group: its pid 1 dies,
   * and with it the pid namespace). Resolves once bwrap has ended.
   */
  stop(reason: string | null = null): Promise<void> {
    if (reason !== null) this.endReason ??= reason;
    if (!this.stopping && this.state !== "ended") {
      this.stopping = true;
      this.endJoined("the sandbox stopped");
      const pid = this.leader.pid;
      if (pid !== undefined) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          this.leader.kill("SIGKILL");
        }
      }
    }
    return this.ended;
  }

  private onLine(line: string): void {
    const event = parseInitEvent(line);
    if (event === null) return;
    if (event.ev === "ready") this.onReady(event);
    else if (event.ev === "refused") this.connecting.get(event.id)?.(event.message);
    else if (event.ev === "connected") this.connecting.delete(event.id);
    else {
      if (event.ev === "started" || event.ev === "failed" || event.ev === "exit") this.forked(event.id);
      this.runs.get(event.id)?.onEvent(event);
    }
  }

  private onReady(event: Extract<InitEvent, { ev: "ready" }>): void {
    if (this.state !== "starting") return;
    const reaper = this.reaperPid;
    if (reaper === null) {
      this.pendingReady = event;
      return;
    }
    const init = childrenOf(reaper).find((c) => innermostPid(c) === event.pid);
    const entry = init === undefined ? null : readProcEntry(init);
    // Not there, or dying (it closes its descriptors before it is a zombie): not ready.
    if (init === undefined || entry === null || entry.state === "Z" || entry.exiting) {
      this.stop("the sandbox's init could not be found on the host");
      return;
    }
    this.initPid = init;
    this.namespace = pidNamespace(init);
    const attach = this.opts.attachNetwork;
    if (attach === undefined) {
      this.run();
      return;
    }
    attach(init).then(
      (network) => {
        if (this.state !== "starting") {
          network.stop();
          return;
        }
        this.network = network;
        void network.ended.then((why) => {
          if (this.state === "running") this.opts.log(`sandbox lost its network: ${why}`);
        });
        this.run();
      },
      (err: Error) => this.stop(`its network could not be set up: ${err.message}`),
    );
  }

  /** Set up: the commands asked for meanwhile go to the init. */
  private run(): void {
    if (this.state !== "starting") return;
    this.state = "running";
    clearTimeout(this.startTimer);
    for (const req of this.queue.splice(0)) this.leader.stdin?.write(`${JSON.stringify(req)}\n`);
    this.nextFork();
    this.resolveReady();
  }

  /**
   * A connection to `port` on the sandbox's loopback (a published port), joined by the
   * init; rejects when the sandbox does not run or nothing listens there.
   */
  connect(port: number): Promise<net.Socket> {
    if (this.state !== "running") return Promise.reject(new Error("the sandbox is not running"));
    const id = `c${(++this.connectCount).toString(36)}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => fail("the sandbox's init did not answer"), CONNECT_TIMEOUT_MS);
      const token = this.io.expect((socket) => {
        clearTimeout(timer);
        this.connecting.delete(id);
        // Each direction ends on its own, as the init's side does (a half-close is passed on).
        socket.allowHalfOpen = true;
        this.joined.add(socket);
        socket.once("close", () => this.joined.delete(socket));
        resolve(socket);
      });
      const fail = (why: string) => {
        clearTimeout(timer);
        this.connecting.delete(id);
        this.io.forget(token);
        reject(new Error(why));
      };
      this.connecting.set(id, fail);
      this.leader.stdin?.write(`${JSON.stringify({ op: "connect", id, port, token } satisfies InitRequest)}\n`);
    });
  }

  /** Each joined connection ends saying why (EnvironmentEndedError), before the sandbox's init is gone. */
  endJoined(why: string): void {
    for (const socket of [...this.joined]) socket.destroy(new EnvironmentEndedError(why));
    this.joined.clear();
  }

  private end(reason: string): void {
    if (this.state === "ended") return;
    const wasStarting = this.state === "starting";
    this.state = "ended";
    if (!this.stopping) this.endReason ??= reason;
    clearTimeout(this.startTimer);
    this.queue.length = 0;
    this.forks.length = 0;
    if (this.forking !== null) clearTimeout(this.forking.timer);
    this.forking = null;
    if (wasStarting) {
      // Not set up: why, unless the backend itself stopped it (a plain stop, a removal).
      const why = this.endReason ?? reason;
      if (!this.stopping || this.endReason !== null) this.startFailure = why;
      this.rejectReady(new Error(why));
    }
    for (const run of [...this.runs.values()]) run.sandboxEnded(this.startFailure);
    this.runs.clear();
    this.io.close();
    this.network?.stop();
    for (const fail of [...this.connecting.values()]) fail("the sandbox ended");
    this.endJoined(`the sandbox ended: ${reason}`);
    for (const pipe of this.leader.stdio) pipe?.destroy();
    this.opts.onEnded(this);
    if (!this.stopping && !wasStarting) this.opts.log(`sandbox ended: ${reason}`);
  }
}

/** Removes a directory the backend made for a sandbox (its io socket), ignoring what is already gone. */
export function removeRunDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
