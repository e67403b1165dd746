// Commits in an SQLite database's write-ahead log, read from the file as the disk has
// it (https://www.sqlite.org/fileformat2.html, "The WAL File Format"): how many
// durable transactions a piece of work cost, without asking the code that made them.
// Each commit ends with a frame whose "database size after commit" field is not zero;
// frames of the current log carry the header's salts (older frames left in a log that
// was restarted carry other salts and are not counted).

import fs from "node:fs";

const HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
const MAGIC = [0x377f0682, 0x377f0683];

export interface WalState {
  /** Salt-1 of the log: it changes when the log restarts (after a checkpoint). */
  salt: number;
  commits: number;
}

/** The commits in `${db}-wal` so far (salt 0, no commits: no log yet). */
export function walState(db: string): WalState {
  let wal: Buffer;
  try {
    wal = fs.readFileSync(`${db}-wal`);
  } catch {
    return { salt: 0, commits: 0 };
  }
  if (wal.length < HEADER_BYTES) return { salt: 0, commits: 0 };
  if (!MAGIC.includes(wal.readUInt32BE(0))) throw new Error(`${db}-wal is not a write-ahead log`);
  const pageSize = wal.readUInt32BE(8);
  const [salt1, salt2] = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  let commits = 0;
  for (let at = HEADER_BYTES; at + FRAME_HEADER_BYTES + pageSize <= wal.length; at += FRAME_HEADER_BYTES + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) break;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  return { salt: salt1, commits };
}

/** How many commits `work` added to the log (it must not restart meanwhile). */
export async function commitsDuring(db: string, work: () => Promise<void>): Promise<number> {
  const before = walState(db);
  await work();
  const after = walState(db);
  if (after.salt !== before.salt) throw new Error(`${db}-wal was restarted (checkpointed) meanwhile: count again`);
  return after.commits - before.commits;
}
