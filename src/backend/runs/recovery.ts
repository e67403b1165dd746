// Restart recovery, the part every run shares (executions, supervised processes,
// jobs): each domain finds what an earlier run of the backend left unended (its own
// rows); for each, the process group it recorded is ended when it is still ours and
// left alone when its number may be anyone's now (endRecordedGroup), the domain
// settles the run as its kind does — an execution marked lost, a process started
// again by its policy or ended, a job interrupted or lost — writing what was found
// on its record, and one log line says both (recoverLeftRuns).

import { bootId, readProcEntry, readProcessStartTime, runMembers, signalProcessGroup } from "../drivers/index.js";
import type { RunKind } from "./live-runs.js";

/** A process group as recorded when its run started, to recognise it after a restart. */
interface RecordedGroup {
  pgid: number;
  /** Start time of its leader (clock ticks since boot); null when it could not be read. */
  startTime: string | null;
  /** The boot it was started in; null for records older than boot ids. */
  bootId: string | null;
}

/**
 * Whether a recorded group's leader still runs, the same process (same boot, same start
 * time): what a followed run (slurm's srun, waiting for its step) is asked.
 */
export function recordedLeaderAlive(group: RecordedGroup): boolean {
  if (group.bootId === null || group.bootId !== bootId()) return false;
  const start = readProcessStartTime(group.pgid);
  const leader = readProcEntry(group.pgid);
  return start !== null && start === group.startTime && leader !== null && leader.state !== "Z";
}

/** What restart recovery found of a recorded process group. */
export type FoundGroup =
  /** Never signalled: started in another boot, or recorded without a boot id (its number may be anyone's now). */
  | { pgid: number; ours: false; why: string }
  /**
   * Ours and gone. `reused`: its leader's pid names another process now (left alone;
   * the group had ended, since the kernel never reuses a pid that names a live group).
   */
  | { pgid: number; ours: true; running: false; reused: boolean }
  /**
   * Ours and still there: killed. `leaderAlive`: its leader (the run's own command)
   * still ran; `leftBehind`: command names of its other processes, when asked for.
   */
  | { pgid: number; ours: true; running: true; leaderAlive: boolean; leftBehind: string[] };

/**
 * Ends a process group an earlier run of the backend left, if it is still ours, and
 * says what was found. A group from another boot, or recorded without a boot id, is
 * never signalled: its number may belong to anyone now. In this boot, a leader alive
 * with another start time means the number was reused; a leader gone while members
 * remain is still our group (a pgid in use is not reused). `nameLeftBehind` reads the
 * names of the group's other processes before they are killed.
 */
function endRecordedGroup(group: RecordedGroup, opts: { nameLeftBehind?: boolean } = {}): FoundGroup {
  const { pgid } = group;
  const current = bootId();
  if (group.bootId === null || current === null) {
    return {
      pgid,
      ours: false,
      why: `process group ${pgid} was recorded without a boot id; left alone (it may not be ours any more)`,
    };
  }
  if (group.bootId !== current) {
    return {
      pgid,
      ours: false,
      why: `process group ${pgid} was started in another boot (${group.bootId}); left alone`,
    };
  }
  const startTime = readProcessStartTime(pgid);
  if (startTime !== null && group.startTime !== null && startTime !== group.startTime) {
    return { pgid, ours: true, running: false, reused: true };
  }
  const leader = readProcEntry(pgid);
  const leaderAlive = leader !== null && leader.state !== "Z";
  let leftBehind: string[] = [];
  if (opts.nameLeftBehind) {
    try {
      leftBehind = runMembers(pgid)
        .filter((p) => p.pid !== pgid)
        .map((p) => p.name);
    } catch {
      leftBehind = [];
    }
  }
  return signalProcessGroup(pgid, "SIGKILL")
    ? { pgid, ours: true, running: true, leaderAlive, leftBehind }
    : { pgid, ours: true, running: false, reused: false };
}

/** What was found of a group, as a record's `recovery` says it (docs/protocol.md). */
function sayFound(found: FoundGroup): string {
  if (!found.ours) return found.why;
  if (found.running) return `process group ${found.pgid} was still running; killed`;
  return found.reused
    ? `process group ${found.pgid}: its leader's pid now belongs to another process; left alone`
    : `process group ${found.pgid} had ended`;
}

/** What every kind's row records of its run's process group, beside its number. */
export interface RecordedRun {
  /** Start time of the group's leader (clock ticks since boot). */
  pgid_start_time: string | null;
  /** The boot the group was started in. */
  boot_id: string | null;
}

export interface LeftRunsOfKind<R extends RecordedRun> {
  kind: RunKind;
  /** What an earlier run of the backend left unended (the domain's rows), in admission order. */
  left: readonly R[];
  /** How the log names it after its kind: its id, and for a job its name ("ID (name)"). */
  label(row: R): string;
  /** The number of the process group it recorded; null when the backend stopped before it had one. */
  pgid(row: R): number | null;
  /** Name what a group's leader left behind before it is killed (FoundGroup's leftBehind). */
  nameLeftBehind?: boolean;
  /**
   * Settles the run as its kind does, with what was found of its group and that said
   * in words (null: it had none), writing it on its record; says what it became, for
   * the log.
   */
  settle(row: R, found: FoundGroup | null, said: string | null): string;
  log(line: string): void;
}

/**
 * At start-up, for each run of a kind an earlier backend left unended: its recorded
 * group is ended or left alone (endRecordedGroup), its domain settles it, and one
 * line says what it became and what was found. Returns how many there were.
 */
export function recoverLeftRuns<R extends RecordedRun>(spec: LeftRunsOfKind<R>): number {
  for (const row of spec.left) {
    const pgid = spec.pgid(row);
    const found =
      pgid === null
        ? null
        : endRecordedGroup(
            { pgid, startTime: row.pgid_start_time, bootId: row.boot_id },
            { nameLeftBehind: spec.nameLeftBehind },
          );
    const said = found === null ? null : sayFound(found);
    const became = spec.settle(row, found, said);
    spec.log(`recovery: ${spec.kind} ${spec.label(row)}: ${became}${said === null ? "" : ` — ${said}`}`);
  }
  return spec.left.length;
}
