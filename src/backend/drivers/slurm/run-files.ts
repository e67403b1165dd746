// What a run on the Slurm driver leaves on the shared directory (docs/drivers.md,
// "Slurm", "A daemon restart"): one directory per run, <shared>/.sbx-slurm/runs/<name>/,
//
//   out, err  the command's stdout and stderr, written by slurmstepd on the node
//             (srun --output/--error): the daemon reads them by offset as they grow
//   status    how the command ended ("exit N" or "signal N"), written on the node by
//             the step's wrapper (STEP_WRAPPER) once the command ended, renamed into place
//   job       the allocation's job id, written before srun starts
//   srun      srun's own messages (srun runs on the daemon's machine, its stderr is this
//             file, not a pipe to the daemon: a killed daemon does not take srun with it)
//
// So a run's end is known without the daemon that started it: a restarted daemon reads
// `status`, and the output the killed one had not copied yet is still in `out`/`err`.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * The command's parent on the node (perl, Essential on Debian and present on every
 * cluster node in practice; POSIX sh cannot tell an exit from a signal): forks the
 * command, ignores the signals scancel --signal sends the whole step (the command gets
 * them itself), waits, writes `status` (tmp + rename), then ends as the command did
 * (the same signal raised on itself, or the same exit code) for srun to report it.
 * Arguments: the status file, then the command.
 */
export const STEP_WRAPPER = [
  "use POSIX (); use Config;",
  "my $s = shift @ARGV;",
  "my @sigs = qw(TERM INT HUP QUIT USR1 USR2 ALRM CONT);",
  "$SIG{$_} = sub {} for @sigs;",
  "my $pid = fork;",
  'defined $pid or do { print STDERR "sbx: fork: $!\\n"; POSIX::_exit(126) };',
  "if ($pid == 0) { $SIG{$_} = 'DEFAULT' for @sigs; exec { $ARGV[0] } @ARGV; " +
    'print STDERR "sbx: $ARGV[0]: $!\\n"; POSIX::_exit(127) }',
  "my $r; do { $r = waitpid($pid, 0) } while ($r == -1 && $!{EINTR});",
  "my $st = $?;",
  "my $line = ($st & 127) ? 'signal ' . ($st & 127) : 'exit ' . ($st >> 8);",
  'if (open(my $f, ">", "$s.tmp")) { print $f "$line\\n"; close $f; rename "$s.tmp", $s }',
  "if ($st & 127) { my $n = $st & 127; my $name = (split ' ', $Config{sig_name})[$n]; " +
    "$SIG{$name} = 'DEFAULT' if $name; kill $n, $$; POSIX::_exit(128 + $n) }",
  "POSIX::_exit($st >> 8);",
].join("\n");

export type StepStatus = { code: number; signal: null } | { code: null; signal: NodeJS.Signals };

/** The files of one run. */
export class RunFiles {
  constructor(readonly dir: string) {}

  static under(sharedDir: string, name: string): RunFiles {
    return new RunFiles(path.join(sharedDir, ".sbx-slurm", "runs", name));
  }

  get out(): string {
    return path.join(this.dir, "out");
  }
  get err(): string {
    return path.join(this.dir, "err");
  }
  get status(): string {
    return path.join(this.dir, "status");
  }
  get job(): string {
    return path.join(this.dir, "job");
  }
  get srun(): string {
    return path.join(this.dir, "srun");
  }

  create(): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  exists(): boolean {
    return fs.existsSync(this.dir);
  }

  /** srun was started (its messages' file exists): the command may have run. */
  srunStarted(): boolean {
    return fs.existsSync(this.srun);
  }

  /** How the command ended, as the wrapper wrote it; null while it runs (or when it never wrote it). */
  readStatus(): StepStatus | null {
    let text: string;
    try {
      text = fs.readFileSync(this.status, "utf8");
    } catch {
      return null;
    }
    const m = /^(exit|signal) (\d+)\s*$/.exec(text);
    if (m === null) return null;
    const n = Number(m[2]);
    if (m[1] === "exit") return { code: n, signal: null };
    const name = signalName(n);
    return name === null ? { code: 128 + n, signal: null } : { code: null, signal: name };
  }

  jobId(): string | null {
    try {
      const id = fs.readFileSync(this.job, "utf8").trim();
      return /^\d+$/.test(id) ? id : null;
    } catch {
      return null;
    }
  }

  /** srun's own lines (srun: …, slurmstepd: …). */
  srunSaid(): string[] {
    try {
      return fs
        .readFileSync(this.srun, "utf8")
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l !== "");
    } catch {
      return [];
    }
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export function signalName(n: number): NodeJS.Signals | null {
  const found = Object.entries(os.constants.signals).find(([, v]) => v === n)?.[0];
  return (found as NodeJS.Signals | undefined) ?? null;
}

/** Reads a growing file from where the last read stopped. */
export class FileTail {
  offset: number;

  constructor(
    readonly file: string,
    offset = 0,
  ) {
    this.offset = offset;
  }

  /** What was appended since the last read (empty when nothing, or no file yet). */
  read(): Buffer {
    let fd: number;
    try {
      fd = fs.openSync(this.file, "r");
    } catch {
      return Buffer.alloc(0);
    }
    try {
      const chunks: Buffer[] = [];
      for (;;) {
        const buf = Buffer.alloc(64 * 1024);
        const n = fs.readSync(fd, buf, 0, buf.length, this.offset);
        if (n === 0) break;
        this.offset += n;
        chunks.push(buf.subarray(0, n));
      }
      return Buffer.concat(chunks);
    } finally {
      fs.closeSync(fd);
    }
  }
}
