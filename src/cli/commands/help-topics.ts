// sbx help [TOPIC|COMMAND...]: help on a command, or on a topic such as exit-codes.

import type { Command } from "commander";
import { completeTree, type RunFn } from "../command.js";
import type { Context } from "../context.js";
import { UsageError } from "../../common/errors.js";
import { ExitCodes } from "../../common/exit-codes.js";

export interface ExitCodeRow {
  code: string;
  classification: string;
  meaning: string;
}

/** The classification table (docs/classification.md), as users read it. Also feeds the man page. */
export const EXIT_CODES: readonly ExitCodeRow[] = [
  { code: "0", classification: "succeeded", meaning: "the command ran and exited 0" },
  { code: "0", classification: "running", meaning: "exec --detach: the command started and keeps running" },
  { code: "1-123", classification: "failed", meaning: "the command ran and exited with this code (and only then)" },
  { code: "128+S", classification: "failed", meaning: "the command was killed by signal S (SIGKILL: 137)" },
  { code: "124", classification: "timed_out", meaning: "the backend killed it at its --timeout" },
  { code: "130", classification: "cancelled", meaning: "it was cancelled (also: the first Ctrl-C, once confirmed)" },
  {
    code: "75",
    classification: "not_started",
    meaning: "nothing ran: the backend was busy or unreachable, or the receipt store stayed busy; safe to resubmit",
  },
  {
    code: "74",
    classification: "-",
    meaning:
      "the receipt store is unusable (disk full, corrupt, unreadable; the file is named), or a directory sbx uses belongs to another user or others may write it; nothing was sent. Also sbx cp out onto a local disk that is full or cannot be written: the disk is named, nothing is left there",
  },
  {
    code: "125",
    classification: "rejected",
    meaning:
      "refused before anything ran: bad input, configuration, an id or name that matches nothing (or, as a prefix, several), a 4xx, or a sandbox that could not be set up",
  },
  { code: "78", classification: "-", meaning: "a configuration file does not parse or validate; nothing was sent" },
  { code: "70", classification: "-", meaning: "an internal error (a bug in sbx); --verbose shows the details" },
  {
    code: String(ExitCodes.stdoutClosed),
    classification: "running",
    meaning:
      "exec --stream whose stdout was closed (| head -1): sbx stopped following and left the command running (stderr says how to follow it), as a process killed by SIGPIPE exits",
  },
  {
    code: String(ExitCodes.outputIncomplete),
    classification: "succeeded",
    meaning:
      "exec --fail-on-truncated: it exited 0, but the output shown is not all of it (past the backend's output cap); stderr says how much is missing",
  },
  {
    code: "255",
    classification:
      "outcome_unknown, result_unconfirmed, in_progress, record_pending, local_timeout, dispatched, running",
    meaning:
      "in doubt: it may have run (running: no result yet); see `sbx receipts show ID` and `sbx receipts wait ID`. Also a local failure after sending (the answer is printed on stderr)",
  },
];

/** `sbx jobs submit --wait` and `sbx jobs wait` (docs/classification.md, "Jobs"). Also feeds the man page. */
export const JOBS_EXIT_CODES: readonly ExitCodeRow[] = [
  { code: "0", classification: "succeeded", meaning: "every job succeeded" },
  {
    code: "1",
    classification: "failed, cancelled, timed_out, dependency_failed",
    meaning: "a job ended without succeeding",
  },
  {
    code: "255",
    classification: "interrupted, lost",
    meaning: "in doubt: the backend lost a job (it outranks a failure); see `sbx jobs show JOB`",
  },
  { code: "124", classification: "-", meaning: "the local --timeout passed first; nothing was cancelled" },
  { code: "125", classification: "rejected", meaning: "the submission was refused (e.g. job_id_conflict, a cycle)" },
];

export const CLASSIFICATION_HELP: ReadonlyArray<[string, string]> = [
  ["succeeded", "confirmed: outcome succeeded, exit code 0"],
  ["failed", "confirmed: non-zero exit code, or killed by a signal"],
  [
    "admitted",
    "a jobs submission (sbx jobs submit) was admitted; its jobs' ends are observations of their own (sbx jobs list --request ID). Exit 0",
  ],
  ["timed_out", "confirmed: killed by the backend at its timeout"],
  ["cancelled", "confirmed: cancelled"],
  ["running", "the backend knows the execution and says it still runs (exec --detach). Not in doubt: wait"],
  ["record_pending", "it ran; the backend keeps the result but has not published it yet. Do not resubmit: wait"],
  [
    "outcome_unknown",
    "it may have run: no usable answer (dropped connection, gateway error, malformed body, lost process), or a running execution the backend no longer has (record_gone: its sandbox removed)",
  ],
  ["result_unconfirmed", "409: admitted, but the stored result could not be confirmed. Wait for it"],
  ["in_progress", "409: the same key is still being admitted. Wait"],
  ["local_timeout", "the client's deadline (--client-timeout) passed, or Ctrl-C twice; it may still run. Wait"],
  ["dispatched", "sent, but sbx died before recording any answer. Wait"],
  ["not_started", "nothing ran (503 not_started, connection refused). Safe: sbx receipts resubmit ID"],
  [
    "rejected",
    "the backend refused the request (400/401/403/404/422, or 409 job_id_conflict / request_id_conflict for jobs), or could not set up its sandbox (sandbox_start_failed); nothing ran",
  ],
];

/** How every command other than exec, receipts wait/resubmit and the jobs ones exits. Also feeds the man page. */
export const OTHER_COMMANDS_EXIT =
  "Other commands exit 0 on success, and their failures use only these codes of sbx's own, never a code a command could have exited with: 125 when refused (bad input, an unknown or ambiguous id, a 4xx); 75 when the backend cannot be reached or a read fails (nothing changed; safe to repeat), and for `sbx daemon status` when the daemon is not running; 255 when a change (stop, signal, cancel, rm) may have been made but its answer was lost; 130 when cancelled; 74, 78 and 70 as above.";

const WIDTH = 80;

/** TEXT in lines of at most 80 columns: the first after FIRST, the others after INDENT spaces. */
function wrap(text: string, first: string, indent: number): string {
  const lines: string[] = [];
  let line = first;
  for (const word of text.split(" ")) {
    const blank = line.trim() === "" || line.endsWith(" ");
    if (!blank && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = " ".repeat(indent) + word;
    } else {
      line += blank ? word : ` ${word}`;
    }
  }
  lines.push(line);
  return lines.join("\n");
}

const codeRow = (r: ExitCodeRow) =>
  `${wrap(r.classification, `  ${r.code.padEnd(6)} `, 9)}\n${wrap(r.meaning, " ".repeat(9), 9)}`;

export function exitCodesText(): string {
  const lines = [
    "sbx exec (and receipts wait/resubmit) exit with a code that says what is known:",
    "",
    ...EXIT_CODES.map(codeRow),
    "",
    "Classifications (receipts list --classification C):",
    "",
    ...CLASSIFICATION_HELP.map(([c, m]) => wrap(m, `  ${c.padEnd(19)}`, 21)),
    "",
    wrap(
      "sbx jobs submit --wait and sbx jobs wait exit with what their jobs did (sbx jobs run exits like exec; a submission is a receipt whose classification is that of the submission):",
      "",
      0,
    ),
    "",
    ...JOBS_EXIT_CODES.map(codeRow),
    "",
    wrap(
      "Every classification that is not confirmed prints one line on stderr with what is known and the exact next command. sbx never retries a mutation by itself; resubmitting is an explicit `sbx receipts resubmit ID`, with the original key and body bytes.",
      "",
      0,
    ),
    "",
    wrap(
      "sbx's own failures never borrow a code the command could have exited with: before anything was sent, 75 when it is transient and 74 when the receipt store is unusable; 78 for a configuration file that does not parse; 70 for a bug. After sending, a local failure is 255 and loses nothing received: the output is printed, and an answer that cannot be stored goes to stderr as JSON.",
      "",
      0,
    ),
    "",
    wrap(
      `sbx receipts verify exits 0 when the receipt history is intact and ${ExitCodes.notIntact} when it is not: an entry changed, deleted, moved or inserted, or a bundle whose signature or content does not verify. ${ExitCodes.notIntact} is above every signal's 128+N, so it is never a command's own code.`,
      "",
      0,
    ),
    "",
    wrap(
      "Ctrl-C during exec asks the backend to cancel the execution and waits for it (130 once it is cancelled); a second Ctrl-C stops waiting (255: it may still be running).",
      "",
      0,
    ),
    "",
    wrap(OTHER_COMMANDS_EXIT, "", 0),
  ];
  return `${lines.join("\n")}\n`;
}

export const TOPICS: Record<string, { summary: string; text: () => string }> = {
  "exit-codes": { summary: "exit codes and classifications", text: exitCodesText },
};

export async function run(opts: { words: string[]; man?: boolean }, ctx: Context, program: Command): Promise<number> {
  if (opts.man === true) {
    if (opts.words.length > 0) {
      throw new UsageError("--man shows the whole manual: name no command or topic with it", "sbx help --man");
    }
    const { showManual } = await import("./manual.js");
    return showManual(ctx, program);
  }
  const [first] = opts.words;
  if (first === undefined) {
    ctx.io.writeOut(program.helpInformation());
    ctx.io.out(
      `\nHelp topics:\n${Object.entries(TOPICS)
        .map(([k, t]) => `  sbx help ${k.padEnd(12)} ${t.summary}`)
        .join("\n")}`,
    );
    return ExitCodes.ok;
  }
  const topic = TOPICS[first];
  if (topic) {
    ctx.io.writeOut(topic.text());
    return ExitCodes.ok;
  }
  let cmd: Command | undefined = program;
  for (const w of opts.words) {
    cmd = cmd?.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (!cmd) {
      throw new UsageError(
        `no help for ${JSON.stringify(opts.words.join(" "))}`,
        `topics: ${Object.keys(TOPICS).join(", ")}; or a command`,
      );
    }
  }
  ctx.io.writeOut(cmd!.helpInformation());
  return ExitCodes.ok;
}

/** Bound to `sbx help` by the command tree (loaded when that command runs). */
export const action: RunFn = async (ctx, c) => run({ words: c.args, man: c.opts().man === true }, ctx, completeTree(c));
