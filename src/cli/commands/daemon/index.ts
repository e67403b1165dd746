// sbx daemon: the embedded backend.
// Here: the declarations of its verbs (what --help, the man page and the completions
// read); each verb's run code is its own module, loaded only when that verb runs.

import type { Command } from "commander";
import { FAULT_SPEC_HELP } from "../../../backend/http/fault-spec-help.js";
import { type Bind, withExamples, declareNoun } from "../../command.js";

/** How retention works, for --help (docs/protocol.md, "Retention"). */
export const RETENTION_HELP = [
  "Retention: finished executions (record, events, output) and exited processes",
  "(record, logs) older than --retain go, checked at start-up and every 10",
  "minutes. --retain is never shorter than --key-retention: a record some receipt",
  "may still be in doubt about stays readable, by id or by idempotency key, as",
  "long as its key is kept. Past --retain-size, the oldest finished executions'",
  "output files go first (records, tails and exit codes stay), then records past",
  "the key window. Nothing still running is touched. `sbx daemon status` shows",
  "what is kept and its size.",
].join("\n");

export function register(program: Command, bind: Bind): void {
  declareNoun(program, bind, {
    name: "daemon",
    summary: "run, start, stop and inspect the embedded backend",
    description:
      "The embedded backend serves the same /api/v1 as a remote one, on a Unix socket private to its\n" +
      "user. sbx starts it on demand for the local profile (it exits after 10 idle minutes with\n" +
      "nothing running); these commands manage it by hand.",
    verbs: [declareRun, declareStart, declareStop, declareStatus],
    examples: [
      { command: "sbx daemon status", description: "is the embedded backend running?" },
      { command: "sbx daemon stop", description: "stop it (the next command starts it again)" },
    ],
  });
}

function declareRun(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("run")
    .summary("run the embedded backend in the foreground")
    .description(
      "Serve /api/v1 on the Unix socket in the state directory (mode 0600), and optionally on TCP\n" +
        "with --listen, where a token is required (SBX_DAEMON_TOKEN of at least 32 characters, or a\n" +
        "generated one in the daemon directory's `token` file). TCP is plain http, without TLS: from\n" +
        "another machine, clients send the token only through a profile added with --insecure (or\n" +
        "put TLS in front). Stops cleanly on SIGTERM or Ctrl-C.",
    )
    .option("--listen <host:port>", "also listen on TCP (requires the token)")
    .option("--faults <spec>", "inject faults (see below) to rehearse recovery")
    .option("--idle-exit <dur>", "exit after this long idle with nothing running")
    .option(
      "--sandbox-idle-timeout <dur>",
      "stop a sandbox's environment after this long with nothing running in it, unless it sets its own (default: off)",
    )
    .option("--key-retention <dur>", "how long idempotency keys are kept (default: 7d)")
    .option("--process-log-segment <size>", "rotate process log files at this size (default: 8MiB)")
    .option("--process-log-keep <size>", "process log bytes kept per stream (default: 64MiB)")
    .option("--execution-output-max <size>", "execution output kept on disk per stream (default: 256MiB)")
    .option(
      "--retain <dur>",
      "keep finished executions and exited processes this long (default: 30d; never less than --key-retention)",
    )
    .option("--retain-size <size>", "keep at most this much; the oldest finished outputs go first (default: 5GiB)")
    .option("--job-concurrency <n>", "jobs running at once per sandbox; the rest wait queued (default: 4)")
    .option("--job-output-max <size>", "output kept per job: its first and last halves (default: 8MiB)")
    .option(
      "--driver <name>",
      "where sandboxes run: local (bwrap or none, default) or slurm (allocations on a cluster)",
    )
    .option("--slurm-partition <name>", "the Slurm partition sandboxes are allocated in (default: the cluster's)")
    .option("--slurm-account <name>", "the Slurm account allocations are charged to (default: the user's)")
    .option("--slurm-shared-dir <dir>", "a directory every node sees at the same path; with --driver slurm")
    .action(bind(() => import("./run.js")));
  cmd.addHelpText("after", `\n${RETENTION_HELP}\n`);
  cmd.addHelpText("after", `\n${FAULT_SPEC_HELP}\n`);
  withExamples(cmd, [
    { command: "sbx daemon run", description: "in the foreground, Ctrl-C to stop" },
    {
      command: "sbx daemon run --faults 'execute:not_started:once'",
      description: "the next exec gets 503 not_started",
    },
    { command: "sbx daemon run --job-concurrency 8", description: "run up to 8 jobs at once per sandbox" },
    {
      command: "SBX_HOME=/nfs/sbx sbx daemon run --driver slurm --slurm-shared-dir /nfs",
      description: "sandboxes as Slurm allocations, workspaces on the shared directory",
    },
    {
      command: "SBX_DAEMON_TOKEN=... sbx daemon run --listen 0.0.0.0:7070",
      description: "a shared backend for a team",
    },
  ]);
}

function declareStop(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("stop")
    .summary("stop the local daemon")
    .description(
      "Ask the daemon to stop (SIGTERM) and wait until it has. Running commands are ended (TERM, then\n" +
        "KILL) and recorded as such.",
    )
    .action(bind(() => import("./stop.js")));
  withExamples(cmd, [{ command: "sbx daemon stop", description: "stop it" }]);
}

function declareStatus(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("status")
    .summary("say whether the local daemon is running (exit 75 when not)")
    .description(
      "Ask the local daemon's socket for its health, the isolation new sandboxes get, and what it\n" +
        "keeps: executions and processes, their size against --retain-size, and how long finished\n" +
        "work is kept (--retain). Exits 0 when it answers, 75 when it does not (as for any backend that\n" +
        "cannot be reached).",
    )
    .option("--json", "print {running, pid, socket, version, started_at, isolation, storage}")
    .action(bind(() => import("./status.js")));
  withExamples(cmd, [{ command: "sbx daemon status", description: "is it up?" }]);
}

function declareStart(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("start")
    .summary("start the local daemon in the background")
    .description("Start `sbx daemon run` in the background (output in daemon.log) and wait until it answers.")
    .option("--idle-exit <dur>", "exit after this long idle with nothing running (default: never)")
    .option("--sandbox-idle-timeout <dur>", "stop idle sandboxes' environments after this long (default: off)")
    .action(bind(() => import("./start.js")));
  withExamples(cmd, [{ command: "sbx daemon start", description: "start it ahead of time" }]);
}
