// One command entered into a live sandbox (docs/drivers.md, "Entering"), as the
// backend sees it: a SandboxChild whose leader is not a child of the backend but of
// the sandbox's init. Its streams are the connections the init opened for it (handed
// over by the io socket), its start and exit are what the init reports, and its host
// pid is looked up from the pid the init reports (among the init's own children).
//
// The command is a session of its own inside the sandbox; "the run" is every process
// of that session. Signals go to each of its process groups from the host, by the
// host's /proc, so that a stopped or busy init never keeps a timeout or a cancel from
// working. What the init reports is a command's own business (the sandbox is one
// trust domain): at worst it misreports a command of its own sandbox.
//
// A command on a terminal (`tty`) has one connection, its stdout token's: the
// terminal's master side, which the init holds inside the sandbox. What comes from it
// is the run's output (one stream, reported as stdout); what is written to the run's
// stdin goes into it as typed keys, and its end is the terminal's EOF character.

import { EventEmitter } from "node:events";
import type net from "node:net";
import { PassThrough, Writable } from "node:stream";
import type { InitEvent, InitRequest } from "../../../sandbox-init/init.js";
import type { TerminalSize } from "../../../platform/pty.js";
import type { CommandEnd, LeaderProcess, SandboxChild, TerminalControl } from "../driver.js";
import type { CommandMeasure } from "../limits/usage.js";
import { innermostPid, type ProcEntry, signalProcessGroup } from "../proc.js";
import type { StreamSocket } from "./io-socket.js";

/** What a run needs of its sandbox. */
export interface EnvironmentPort {
  /** The sandbox's leader (bwrap): the process group whose end ends the sandbox, and every run in it. */
  readonly leaderPid: number;
  readonly io: StreamSocket;
  /** Sends a request to the init once the sandbox is ready. */
  request(req: InitRequest): void;
  /** Takes back the requests of a run not yet sent to the init (the sandbox still starts); false when none was waiting. */
  withdraw(id: string): boolean;
  /** The host pid of the init's child with this pid inside the sandbox, or null. */
  hostPidOf(nsPid: number): number | null;
  /** Whether the OOM killer killed in the sandbox from now on (a command watches from its request). */
  watchMemory(): { oomKilled(): boolean };
  /** How the command with this id is measured (its cgroup, made now: limits/usage.ts). */
  measure(id: string): CommandMeasure;
  /**
   * Sends a request that forks the command (a spawn, or a held one's proceed): its init
   * is moved into the command's cgroup around the fork, one fork at a time.
   */
  requestFork(req: InitRequest, measure: CommandMeasure): void;
  /** The live processes of the sandbox in the session whose leader has pid `sid` inside the sandbox. */
  session(sid: number): ProcEntry[];
  /** The run has ended: the sandbox forgets it. */
  forget(id: string): void;
}

/** What the run asks to start. */
export interface EnteredCommand {
  id: string;
  argv: string[];
  env: Record<string, string>;
  /** The working directory as the command sees it. */
  cwd: string;
  stdin: boolean;
  /** Start it on a pseudo-terminal the init opens inside the sandbox, this size. */
  tty?: TerminalSize;
}

type Phase = "held" | "requested" | "started" | "exited";

/** How long an exit waits for output connections the init opened but the backend has not read yet. */
const OUTPUT_WAIT_MS = 10_000;
/** End of input on a terminal: its EOF character (^D at the start of a line). */
const TERMINAL_EOF = Buffer.from([0x04]);

export class EnteredRun extends EventEmitter implements SandboxChild, LeaderProcess {
  readonly stdin: LateSocketWritable | null;
  readonly reportsCommandPid = true;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  /** The command's host pid once the init reported its start (null also when it ended before it was seen). */
  commandPid: number | null = null;
  /** The command's pid inside the sandbox (its session's id there), once started. */
  private sessionId: number | null = null;
  private phase: Phase = "held";
  /** The init was asked to get it ready (prepare): its go is a `proceed`, its end before that a `discard`. */
  private prepared = false;
  /** The stdin connection, arrived before the command started: given to stdin at the start. */
  private inputUntilStarted: net.Socket | null = null;
  private readonly tokens: { stdin: string | null; stdout: string; stderr: string | null };
  private readonly sockets: net.Socket[] = [];
  /** The outputs whose connection arrived. */
  private readonly attached = new Set<PassThrough>();
  private pendingSignals: NodeJS.Signals[] = [];
  private exitStatus: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private openOutputs = 2;
  /** Set while the command's exit waits for its output connections to arrive. */
  private exitWaitsForOutputs: (() => void) | null = null;
  private closed = false;
  /** Why the sandbox could not be set up, when it could not and this command never ran. */
  private startFailure: string | null = null;
  /** The sandbox's OOM kills when the command was asked for: more at its end, and it was killed, is memory. */
  private memory: { oomKilled(): boolean } | null = null;
  /** How the command is measured, from its proceed (limits/usage.ts). */
  private usage: CommandMeasure | null = null;
  /** The last signal the backend sent the run (a run ended before its command started reads as that). */
  private lastDelivered: NodeJS.Signals | null = null;
  readonly started: Promise<boolean>;
  /** Set for a command on a terminal: its window size, sent to the init. */
  readonly terminal?: TerminalControl;
  private resolveStarted!: (started: boolean) => void;
  /** The terminal's size: asked for at the start, and each resize since. */
  private terminalSize: TerminalSize | null;

  constructor(
    private readonly sandbox: EnvironmentPort,
    private readonly command: EnteredCommand,
  ) {
    super();
    this.started = new Promise((resolve) => {
      this.resolveStarted = resolve;
    });
    const io = sandbox.io;
    this.terminalSize = command.tty ?? null;
    if (command.tty !== undefined) {
      // One connection, both ways; nothing ever comes on stderr.
      this.stdin = new LateSocketWritable(TERMINAL_EOF);
      this.tokens = {
        stdin: null,
        stdout: io.expect((s) => {
          this.attachOutput(s, this.stdout);
          this.attachInput(s, false);
        }),
        stderr: null,
      };
      this.stderr.end();
      this.terminal = { resize: (size) => this.resize(size) };
    } else {
      this.stdin = command.stdin ? new LateSocketWritable() : null;
      this.tokens = {
        stdin: this.stdin === null ? null : io.expect((s) => this.attachInput(s, true)),
        stdout: io.expect((s) => this.attachOutput(s, this.stdout)),
        stderr: io.expect((s) => this.attachOutput(s, this.stderr)),
      };
    }
    for (const out of [this.stdout, this.stderr]) {
      out.once("end", () => this.outputEnded());
      // The backend let go of the stream (release): so does the connection.
      out.once("close", () => {
        if (!out.readableEnded) this.outputEnded();
      });
    }
    this.stdin?.on("error", () => {});
  }

  get process(): LeaderProcess {
    return this;
  }

  /** The sandbox's leader: the group that, ended, ends this run with its sandbox. */
  get pid(): number {
    return this.sandbox.leaderPid;
  }

  get pgid(): number {
    return this.sandbox.leaderPid;
  }

  get stdio(): ReadonlyArray<{ destroy(): unknown } | null> {
    return [this.stdin, this.stdout, this.stderr, { destroy: () => this.dropConnections() }];
  }

  unref(): void {
    // Nothing of the backend's event loop is held by a run but its streams.
  }

  /**
   * Has the init get the held command ready — its program found, its streams connected —
   * while the backend stores its admission; proceed() then only says go. A command on
   * a terminal is asked for whole at proceed() (its size may change until then).
   */
  prepare(): void {
    if (this.phase !== "held" || this.prepared || this.command.tty !== undefined) return;
    this.prepared = true;
    this.sandbox.request({ ...this.spawnRequest(), held: true });
  }

  proceed(): void {
    if (this.phase !== "held") return;
    this.phase = "requested";
    this.memory = this.sandbox.watchMemory();
    this.usage = this.sandbox.measure(this.command.id);
    this.sandbox.requestFork(this.prepared ? { op: "proceed", id: this.command.id } : this.spawnRequest(), this.usage);
  }

  private spawnRequest(): Extract<InitRequest, { op: "spawn" }> {
    return {
      op: "spawn",
      id: this.command.id,
      argv: this.command.argv,
      env: this.command.env,
      cwd: this.command.cwd,
      stdin: this.tokens.stdin,
      stdout: this.tokens.stdout,
      stderr: this.tokens.stderr,
      ...(this.terminalSize !== null && { tty: this.terminalSize }),
    };
  }

  /** A new window size for the terminal: sent with the spawn when not asked for yet, else on its own. */
  private resize(size: TerminalSize): void {
    this.terminalSize = { cols: size.cols, rows: size.rows };
    if (this.phase === "requested" || this.phase === "started") {
      this.sandbox.request({ op: "resize", id: this.command.id, ...this.terminalSize });
    }
  }

  /** What the init said about this run. */
  onEvent(event: InitEvent): void {
    if (event.ev === "started" && this.phase === "requested") {
      this.phase = "started";
      this.sessionId = event.pid;
      const input = this.inputUntilStarted;
      this.inputUntilStarted = null;
      if (input !== null && !input.destroyed && this.stdin !== null && !this.stdin.destroyed) this.stdin.attach(input);
      this.commandPid = this.sandbox.hostPidOf(event.pid);
      if (this.commandPid !== null) this.emit("command-pid", this.commandPid);
      this.resolveStarted(true);
      const pending = this.pendingSignals;
      this.pendingSignals = [];
      for (const sig of pending) this.signal(sig);
    } else if (event.ev === "failed" && this.phase === "requested") {
      // Nothing ran: a shell's answer, on the command's stderr.
      const notFound = event.code === "ENOENT";
      const why = notFound
        ? "command not found"
        : event.code === "EACCES"
          ? "permission denied"
          : event.code === "EISDIR"
            ? "is a directory"
            : event.message;
      this.dropConnections();
      // On a terminal, said on it (its one stream); otherwise on stderr.
      const said = this.command.tty === undefined ? this.stderr : this.stdout;
      if (!said.writableEnded)
        said.write(`sbx: ${this.command.argv[0] ?? ""}: ${why}${this.command.tty ? "\r" : ""}\n`);
      this.endOutputs();
      // The sandbox was there; the program was not: as a shell says it.
      this.resolveStarted(true);
      this.exited(notFound ? 127 : 126, null);
    } else if (event.ev === "exit" && this.phase === "started") {
      // The init reaps a command before it says it exited: while its leader still runs,
      // the line is not the init's (a command of the sandbox can write to the init's
      // stdout, /proc/2/fd/1) and is not believed.
      if (this.leaderAlive()) return;
      this.exited(event.code, event.signal as NodeJS.Signals | null);
    }
  }

  /** Whether the command itself (its session's leader) is still a live process of the sandbox. */
  private leaderAlive(): boolean {
    const sid = this.sessionId;
    if (sid === null) return false;
    return this.sandbox.session(sid).some((p) => p.state !== "Z" && innermostPid(p.pid) === sid);
  }

  /**
   * The sandbox ended (stopped, or its init died): whatever of this run had not ended
   * ended with it, killed. `signal` is the one delivered to it, if any.
   */
  sandboxEnded(startFailure: string | null): void {
    if (this.phase === "exited") {
      // Its exit waited for output connections that will not come now.
      if (this.exitWaitsForOutputs !== null) {
        this.forgetTokens();
        for (const out of [this.stdout, this.stderr]) {
          if (!this.attached.has(out) && !out.writableEnded && !out.destroyed) out.end();
        }
        this.exitWaitsForOutputs();
      }
      return;
    }
    // Streams already connected end as their last holders die with the sandbox; the
    // others never will be.
    this.forgetTokens();
    for (const out of [this.stdout, this.stderr]) {
      if (!this.attached.has(out) && !out.writableEnded && !out.destroyed) out.end();
    }
    if (this.phase !== "started" && startFailure !== null && this.lastDelivered === null) {
      // The command never ran: its sandbox could not be set up (main's sandbox_start_failed).
      this.startFailure = startFailure;
      this.exited(null, null);
      return;
    }
    this.exited(null, this.phase === "started" ? "SIGKILL" : (this.lastDelivered ?? "SIGKILL"));
  }

  signal(signal: NodeJS.Signals): boolean {
    this.lastDelivered = signal;
    // Asked for while the sandbox still starts: taken back, it never runs.
    if (this.phase === "requested" && this.sandbox.withdraw(this.command.id)) this.phase = "held";
    switch (this.phase) {
      case "held":
        // Never asked for: it ends here, as if killed before it could run; what the
        // init got ready for it is let go.
        if (this.prepared && !this.sandbox.withdraw(this.command.id)) {
          this.sandbox.request({ op: "discard", id: this.command.id });
        }
        this.phase = "exited";
        this.sandbox.forget(this.command.id);
        this.forgetTokens();
        this.endOutputs();
        this.exitStatus = { code: null, signal };
        this.resolveStarted(false);
        queueMicrotask(() => {
          this.emit("exit", null, signal);
          this.maybeClose();
        });
        return true;
      case "requested":
        this.pendingSignals.push(signal);
        return true;
      default: {
        const groups = new Set(this.members_().map((p) => p.pgid));
        let sent = false;
        for (const g of groups) sent = signalProcessGroup(g, signal) || sent;
        return sent;
      }
    }
  }

  onOutput(listener: (stream: "stdout" | "stderr", chunk: Buffer) => void): void {
    this.stdout.on("data", (chunk: Buffer) => listener("stdout", chunk));
    this.stderr.on("data", (chunk: Buffer) => listener("stderr", chunk));
  }

  /** What the init reported is the command's own status (it is the command's parent). */
  commandEnd(code: number | null, signal: NodeJS.Signals | null, done: (end: CommandEnd) => void): void {
    const startFailure = this.startFailure;
    if (startFailure !== null) {
      done({ code: null, signal: null, startFailure, endReason: null, usage: null });
      return;
    }
    const usage = this.usage?.read() ?? null;
    // Killed (SIGKILL, or a shell's 128+9 for the child it ran) by nobody here while the
    // kernel's OOM killer killed in the command's own cgroup (or, where it has none, in
    // its sandbox's): memory ended it.
    const killed = signal === "SIGKILL" || (code === 128 + 9 && signal === null);
    const oom = usage?.oom_kills == null ? this.memory?.oomKilled() === true : usage.oom_kills > 0;
    if (killed && this.lastDelivered !== "SIGKILL" && oom) {
      done({ code: null, signal: "SIGKILL", startFailure: null, endReason: "out_of_memory", usage });
      return;
    }
    done({ code, signal, startFailure: null, endReason: null, usage });
  }

  members(): string[] {
    return this.members_().map((p) => p.name);
  }

  private members_(): ProcEntry[] {
    return this.sessionId === null ? [] : this.sandbox.session(this.sessionId);
  }

  private attachOutput(socket: net.Socket, into: PassThrough): void {
    if (this.closed || into.destroyed || into.writableEnded) {
      socket.destroy();
      return;
    }
    this.sockets.push(socket);
    this.attached.add(into);
    socket.on("error", () => {});
    socket.pipe(into);
    this.exitWaitsForOutputs?.();
  }

  /** `own`: the connection is stdin's alone (its reads are dropped); a terminal's is read as output. */
  private attachInput(socket: net.Socket, own: boolean): void {
    const stdin = this.stdin;
    if (stdin === null || this.closed || stdin.destroyed) {
      if (own) socket.destroy();
      return;
    }
    if (own) {
      this.sockets.push(socket);
      socket.on("error", () => {});
      // Whatever the command writes to its stdin is not read.
      socket.on("data", () => {});
      // Written to only once the command has it: until the init started it, the init
      // holds this connection (the command's got ready while its admission is stored),
      // and what the init's runtime reads of it before handing it on would be lost.
      if (this.phase !== "started") {
        this.inputUntilStarted = socket;
        return;
      }
    }
    stdin.attach(socket);
  }

  private exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.phase === "exited") return;
    const ran = this.phase === "started";
    // Read now, while its cgroup is there: what it used until its end (kept for commandEnd).
    this.usage?.read();
    this.phase = "exited";
    this.exitStatus = { code, signal };
    // Started already resolved it (true) when the command ran.
    this.resolveStarted(false);
    // Its streams' connections may still be on their way (the init opened them before
    // it started the command, but the backend has not read their tokens yet): its exit
    // is told once they are here, so that what follows an exit (the leader-exit linger,
    // then letting go of the streams) never drops output that was already written.
    const outputs = [this.stdout, this.stderr];
    if (ran && !outputs.every((o) => this.attached.has(o) || o.writableEnded || o.destroyed)) {
      this.exitWaitsForOutputs = () => {
        if (!outputs.every((o) => this.attached.has(o) || o.writableEnded || o.destroyed)) return;
        this.exitWaitsForOutputs = null;
        clearTimeout(timer);
        this.emit("exit", code, signal);
        this.maybeClose();
      };
      // A connection that never comes (the init died between opening and announcing it).
      const timer = setTimeout(() => {
        this.forgetTokens();
        for (const o of outputs) if (!this.attached.has(o) && !o.writableEnded) o.end();
        this.exitWaitsForOutputs?.();
      }, OUTPUT_WAIT_MS);
      timer.unref?.();
      return;
    }
    this.emit("exit", code, signal);
    this.maybeClose();
  }

  private outputEnded(): void {
    this.openOutputs--;
    this.maybeClose();
  }

  private maybeClose(): void {
    if (this.closed || this.exitStatus === null || this.openOutputs > 0) return;
    this.closed = true;
    this.usage?.done();
    this.sandbox.forget(this.command.id);
    this.forgetTokens();
    this.stdin?.destroy();
    this.emit("close", this.exitStatus.code, this.exitStatus.signal);
  }

  private endOutputs(): void {
    for (const out of [this.stdout, this.stderr]) {
      if (!out.writableEnded && !out.destroyed) out.end();
    }
  }

  private forgetTokens(): void {
    const io = this.sandbox.io;
    io.forget(this.tokens.stdin);
    io.forget(this.tokens.stdout);
    io.forget(this.tokens.stderr);
  }

  private dropConnections(): void {
    this.forgetTokens();
    for (const s of this.sockets) {
      s.unpipe();
      s.destroy();
    }
    this.sockets.length = 0;
  }
}

/**
 * A command's stdin before and after its connection arrives: writes wait here until
 * the connection takes them (each write's callback once the socket has written it),
 * so writableLength counts what the command has not been given yet, as a pipe's does.
 */
export class LateSocketWritable extends Writable {
  private socket: net.Socket | null = null;
  private waiting: Array<() => void> = [];

  /** `endWith`: what ends the input instead of closing the connection (a terminal's EOF character). */
  constructor(private readonly endWith: Buffer | null = null) {
    super();
  }

  attach(socket: net.Socket): void {
    this.socket = socket;
    for (const go of this.waiting.splice(0)) go();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.whenAttached((socket) => {
      if (socket.destroyed) callback(new Error("stdin is closed"));
      else socket.write(chunk, (err) => callback(err ?? null));
    });
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.whenAttached((socket) => {
      if (this.endWith === null) socket.end();
      else if (!socket.destroyed) socket.write(this.endWith);
      callback();
    });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.waiting = [];
    this.socket?.destroy();
    callback(error);
  }

  private whenAttached(go: (socket: net.Socket) => void): void {
    const socket = this.socket;
    if (socket !== null) go(socket);
    else this.waiting.push(() => go(this.socket as net.Socket));
  }
}
