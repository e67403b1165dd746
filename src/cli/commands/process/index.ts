// sbx process: supervised background workers (alias: sbx ps = sbx process list).
// Here: the declarations of its verbs (what --help, the man page and the completions
// read); each verb's run code is its own module, loaded only when that verb runs.

import { Command, Option } from "commander";
import { PROCESS_SIGNALS, type RestartPolicyName } from "../../../protocol/types.js";
import {
  type Bind,
  collect,
  declareChoices,
  declareCompletion,
  positiveIntArg,
  wholeNumberArg,
  withExamples,
  declareNoun,
} from "../../command.js";

export const RESTART_POLICIES: readonly RestartPolicyName[] = ["never", "on-failure", "always"];

export function register(program: Command, bind: Bind): void {
  declareNoun(program, bind, {
    name: "process",
    summary: "supervised background processes",
    description:
      "Workers that outlive sbx, supervised by the backend: restart policies with back-off, logs by\n" +
      "logical offset across restarts and rotation, stdin, signals.",
    verbs: [
      declareStart,
      declareList,
      declareShow,
      declareLogs,
      declareResult,
      declareStdin,
      declareAttach,
      declareSignal,
      declareStop,
      declareRm,
    ],
    examples: [
      { command: "sbx process start --name web -- python3 -m http.server 8000", description: "a named worker" },
      { command: "sbx process logs web -f", description: "follow its output" },
      { command: "sbx ps", description: "what runs in the default sandbox" },
    ],
  });
  const ps = configureList(
    new Command("ps")
      .summary("list supervised processes (sbx process list)")
      .description("Same as `sbx process list`."),
    bind,
  );
  program.addCommand(ps);
  withExamples(ps, [{ command: "sbx ps", description: "what runs in the default sandbox" }]);
}

function declareSignal(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("signal")
    .summary("send a signal to a process's group")
    .description(`Send a signal to the process's whole group: ${PROCESS_SIGNALS.join(", ")} (SIG prefix optional).`)
    .argument("<process>", "process id (prc_…), name, or the receipt of its start")
    .argument("<signal>", "TERM, INT, HUP, KILL, USR1 or USR2")
    .option("-s, --sandbox <id>", "sandbox (default: default)")
    .option("--run <n>", "act only if run N is current (also PROCESS@N)")
    .option("--json", "print the acknowledgement")
    .action(bind(() => import("./signal.js")));
  declareCompletion(cmd, "<process>", "process-name");
  declareChoices(cmd, "<signal>", PROCESS_SIGNALS);
  withExamples(cmd, [
    { command: "sbx process signal web HUP", description: "ask it to reload" },
    { command: "sbx process signal web@3 TERM", description: "only if run 3 is still the one running" },
  ]);
}

function declareStop(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("stop")
    .summary("stop a process: TERM, grace, KILL to its group")
    .description(
      "Stop a process (no more restarts): SIGTERM to its group, then SIGKILL after the grace. It is kept, with its logs.",
    )
    .argument("<process>", "process id (prc_…), name, or the receipt of its start")
    .option("-s, --sandbox <id>", "sandbox (default: default)")
    .option("--grace <dur>", "time between TERM and KILL, up to 60s (default: 5s)")
    .option("--run <n>", "act only if run N is current (also PROCESS@N)")
    .option("--json", "print the process record afterwards")
    .action(bind(() => import("./stop.js")));
  declareCompletion(cmd, "<process>", "process-name");
  withExamples(cmd, [{ command: "sbx process stop web --grace 10s", description: "give it 10s to shut down" }]);
}

function declareResult(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("result")
    .summary("a process's outcome, exit code and output tails")
    .description(
      "Print a process's result: outcome (pending|succeeded|failed|cancelled|timed_out|unknown),\n" +
        "exit code or signal (null until known), whether it is complete, capture state and tails.\n" +
        "With --wait, wait up to DUR for it to complete (exit 255 if it does not).",
    )
    .argument("<process>", "process id (prc_…), name, or the receipt of its start")
    .option("-s, --sandbox <id>", "sandbox (default: default)")
    .option("--wait <dur>", "wait up to DUR for the process to complete")
    .option("--json", "print the result document")
    .action(bind(() => import("./result.js")));
  declareCompletion(cmd, "<process>", "process-name");
  withExamples(cmd, [{ command: "sbx process result prc_9qm3x7ta --wait 5m", description: "wait for it to finish" }]);
}

function declareAttach(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("attach")
    .summary("attach this terminal to a process started with --tty")
    .description(
      "Attach to a supervised process's terminal (started with --tty): keys go to its current\n" +
        "run, output flows on across restarts (each run has a terminal of its own). The last\n" +
        "client to attach has the terminal; one attached before is told and let go. Output\n" +
        "starts where the terminal is now (the program is asked to redraw: a resize), or from what is\n" +
        "kept with --replay. The detach keys (Ctrl-P Ctrl-Q) leave it running; when it ends\n" +
        "for good sbx exits as `exec` would for its outcome.",
    )
    .argument("<process>", "process id (prc_…), name, or the receipt of its start")
    .option("-s, --sandbox <id>", "sandbox (default: default)")
    .option("--replay", "show what is kept of the transcript first")
    .option("--detach-keys <keys>", "keys that detach, leaving it running (default: ctrl-p,ctrl-q)")
    .action(bind(() => import("./attach.js")));
  declareCompletion(cmd, "<process>", "process-name");
  withExamples(cmd, [
    { command: "sbx process attach repl", description: "back to a REPL started with --tty" },
    { command: "sbx process attach -s web srv --replay", description: "with what it printed so far" },
  ]);
}

function declareStdin(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("stdin")
    .summary("send bytes to a process's stdin")
    .description(
      "Send bytes (sbx's stdin, or --file) to a process started with --stdin; binary-safe.\n" +
        "--eof closes its stdin afterwards.",
    )
    .argument("<process>", "process id (prc_…), name, or the receipt of its start")
    .option("-s, --sandbox <id>", "sandbox (default: default)")
    .option("--file <file>", "send this file instead of stdin")
    .option("--eof", "close the process's stdin after these bytes")
    .option("--run <n>", "act only if run N is current (also PROCESS@N)")
    .option("--json", "print {process_id, generation, bytes_written, eof}")
    .action(bind(() => import("./stdin.js")));
  declareCompletion(cmd, "<process>", "process-name");
  declareCompletion(cmd, "--file", "file");
  withExamples(cmd, [
    { command: "printf 'job 1\\n' | sbx process stdin worker", description: "one line to a worker" },
    { command: "sbx process stdin prc_9qm3x7ta --file input.bin --eof", description: "a file, then end of input" },
  ]);
}

function declareLogs(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("logs")
    .summary("read a process's output by offset (-f to follow)")
    .description(
      "Read a process's output: both streams by default, its stdout to stdout and its stderr to\n" +
        "stderr (marked in red on a terminal), or one with --stream, from a logical byte offset\n" +
        "(monotonic over all restarts and rotations; --offset and --limit need --stream). Raw bytes\n" +
        "by default (binary-safe); --text (the default on a terminal) decodes UTF-8 without\n" +
        "splitting a character between reads; --json prints each read as {stream, offset,\n" +
        "next_offset, data (base64), eof, rotated, oldest_offset, generation}. With -f it follows\n" +
        "with server long-polls until the process has ended and everything was read, and says on\n" +
        "stderr when bytes were rotated away before they could be read.",
    )
    .argument("<process>", "process id (prc_…), name, or the receipt of its start")
    .option("-s, --sandbox <id>", "sandbox (default: default)")
    .addOption(
      new Option("--stream <name>", "only stdout or only stderr (default: both)").choices(["stdout", "stderr"]),
    )
    .option("--offset <n>", "start at this logical byte offset (default: 0)")
    .option("--limit <n>", "read at most N bytes", positiveIntArg)
    .option("-f, --follow", "follow until the process ends")
    .option("--text", "decode as UTF-8 text")
    .option("--raw", "raw bytes, even on a terminal")
    .option("--json", "one JSON document per read (JSON Lines)")
    .action(bind(() => import("./logs.js")));
  declareChoices(cmd, "--stream", ["stdout", "stderr"]);
  declareCompletion(cmd, "<process>", "process-name");
  withExamples(cmd, [
    { command: "sbx process logs web -f", description: "follow both streams until it ends" },
    { command: "sbx process logs prc_9qm3x7ta --stream stderr --offset 1048576", description: "stderr from 1 MiB on" },
    { command: "sbx process logs prc_9qm3x7ta --json | jq .next_offset", description: "offsets for scripts" },
  ]);
}

function declareShow(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("show")
    .summary("show a process's state")
    .description("Show a supervised process: state, restarts, outcome, pid.")
    .argument("<process>", "process id (prc_…), name, or the receipt of its start")
    .option("-s, --sandbox <id>", "sandbox (default: default)")
    .option("--json", "print the process record")
    .action(bind(() => import("./show.js")));
  declareCompletion(cmd, "<process>", "process-name");
  withExamples(cmd, [{ command: "sbx process show web", description: "by name" }]);
}

function declareStart(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("start")
    .summary("start a supervised background process")
    .description(
      "Start a worker that outlives sbx, supervised by the backend with a restart policy. The start\n" +
        "is sent once with an Idempotency-Key and recorded as a receipt (like exec). Prints the\n" +
        "process id (prc_…). Restart policies act while the daemon runs: on-failure restarts a run that exits non-zero\n" +
        "or is killed, always restarts every run. When the daemon stops (sbx daemon stop, a reboot),\n" +
        "it ends every process (end_reason backend_shutdown); when it starts again, only --restart\n" +
        "always brings a process back. An on-failure or never process stays ended: a daemon that\n" +
        "stops is not a failure of the process. Start it again with sbx process start.",
    )
    .argument("[argv...]", "the command and its arguments (put them after --)")
    .option("-s, --sandbox <id>", "sandbox id or name (default: default)")
    .option(
      "--name <name>",
      "a name to refer to it by (one process's until it exits: another start with it is refused)",
    )
    .option("--shell <string>", "run STRING through /bin/sh -c instead of argv")
    .option("--stdin", "give it a stdin pipe to write to later (sbx process stdin)")
    .option("--tty", "each run on a terminal of the sandbox's (attach: sbx process attach; implies --stdin)")
    .addOption(
      new Option("--restart <policy>", "never, on-failure or always (default: never)").choices(RESTART_POLICIES),
    )
    .option("--max-restarts <n>", "restarts allowed before it stays exited (default: 5)", wholeNumberArg)
    .option("--backoff <dur>", "first back-off, doubling per restart (default: 1s)")
    .option("--max-backoff <dur>", "longest back-off (default: 30s)")
    .option("--timeout <dur>", "limit on its whole life, up to 24h (default: none)")
    .option("--cwd <dir>", "working directory inside /workspace")
    .option("-e, --env <K=V>", "environment variable (repeatable)", collect)
    .option("--env-file <file>", "read K=V lines from a file")
    .option("--idempotency-key <key>", "use this key instead of a fresh random one")
    .option("--json", "print the receipt (process_id: the process started)")
    .action(bind(() => import("./start.js")));
  declareChoices(cmd, "--restart", RESTART_POLICIES);
  declareCompletion(cmd, "[argv...]", "command");
  declareCompletion(cmd, "--env-file", "file");
  withExamples(cmd, [
    { command: "sbx process start --name web -- python3 -m http.server 8000", description: "a named worker" },
    {
      command: "sbx process start --restart on-failure --max-restarts 3 -- ./worker.sh",
      description: "restarted when it fails",
    },
    { command: "sbx process start --stdin -- cat", description: "a worker that reads what you send it" },
    { command: "sbx process start --tty --name repl -- python3", description: "a REPL to attach to later" },
  ]);
}

function declareRm(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("rm")
    .summary("stop (if running) and remove a process")
    .description("Stop a process if it runs (TERM, grace, KILL) and remove it and its logs.")
    .argument("<process>", "process id (prc_…), name, or the receipt of its start")
    .option("-s, --sandbox <id>", "sandbox (default: default)")
    .option("--grace <dur>", "time between TERM and KILL, up to 60s (default: 5s)")
    .action(bind(() => import("./rm.js")));
  declareCompletion(cmd, "<process>", "process-name");
  withExamples(cmd, [{ command: "sbx process rm web", description: "stop and forget it" }]);
}

function declareList(noun: Command, bind: Bind): void {
  const cmd = configureList(
    noun.command("list").summary("list supervised processes").description("List a sandbox's supervised processes."),
    bind,
  );
  withExamples(cmd, [
    { command: "sbx process list", description: "processes of the default sandbox" },
    { command: "sbx ps --json", description: "the same, as JSON" },
    { command: "sbx ps -A", description: "the processes of every sandbox" },
  ]);
}

function configureList(cmd: Command, bind: Bind): Command {
  return cmd
    .option("-s, --sandbox <id>", "sandbox id or name (default: default)")
    .option("-A, --all-sandboxes", "every sandbox's processes, with a SANDBOX column (`sandbox` in --json)")
    .option("--json", "print {processes: [...]}")
    .action(bind(() => import("./list.js")));
}
