// sbx jobs: one-shot commands with dependencies, queue keys, idempotent admission by
// request id, followed to the end (docs/protocol.md, "Jobs").
// Here: the declarations of its verbs (what --help, the man page and the completions
// read); each verb's run code is its own module, loaded only when that verb runs.

import { type Command, Option } from "commander";
import { JOB_STATUSES } from "../../../protocol/jobs.js";
import { type Bind, collect, declareChoices, declareCompletion, withExamples, declareNoun } from "../../command.js";

export const SANDBOX_FLAG = ["-s, --sandbox <id>", "sandbox id or name (default: default)"] as const;

export function register(program: Command, bind: Bind): void {
  declareNoun(program, bind, {
    name: "jobs",
    summary: "one-shot jobs with dependencies and queue keys",
    description:
      "Jobs are one-shot commands run by the backend: a submission of several, with dependencies\n" +
      "(all_succeeded or all_terminal) and queue keys (one at a time, in order), is admitted once\n" +
      "per request id and followed to the end. A job interrupted by a backend restart is never\n" +
      "resumed: it says so (interrupted, lost).",
    verbs: [declareSubmit, declareRun, declareList, declareShow, declareLogs, declareWait, declareCancel],
    examples: [
      { command: "sbx jobs submit pipeline.json --wait", description: "a CI pipeline, followed to the end" },
      { command: "sbx jobs run -- make test", description: "one job, like exec" },
      { command: "sbx jobs list --status failed", description: "what failed" },
    ],
  });
}

function declareRun(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("run")
    .summary("run one command as a job and wait for it, like exec")
    .description(
      "Run ARGV (no shell) or --shell STRING as one job: submitted once as a receipt (a fresh\n" +
        "request id), its output followed as it comes, and sbx exits like exec: the command's exit\n" +
        "code, 128+S for a signal, 124 timed out, 130 cancelled, 255 interrupted or lost, 125 refused.\n" +
        "Unlike exec, a job may run up to an hour, waits its turn behind a --queue-key, and the\n" +
        "backend's concurrency limit. Ctrl-C stops following; the job keeps running.",
    )
    .argument("[argv...]", "the command and its arguments (put them after --)")
    .option(...SANDBOX_FLAG)
    .option("--name <name>", "the job's name (default: run)")
    .option("--timeout <dur>", "server-side timeout, 1s..1h (default: 30m)")
    .option("--shell <string>", "run STRING through /bin/sh -c instead of argv")
    .option("--cwd <dir>", "working directory inside /workspace")
    .option("-e, --env <K=V>", "environment variable (repeatable)", collect)
    .option("--env-file <file>", "read K=V lines from a file")
    .option("--queue-key <key>", "run one at a time with other jobs of this key")
    .option("--json", "print the submission document with the job's output (stdout, stderr)")
    .action(bind(() => import("./run.js")));
  declareCompletion(cmd, "[argv...]", "command");
  declareCompletion(cmd, "--env-file", "file");
  withExamples(cmd, [
    { command: "sbx jobs run -- make test", description: "one job, output as it comes, exit like exec" },
    { command: "sbx jobs run --name migrate --timeout 45m -- ./migrate.sh", description: "a long step, named" },
    { command: "sbx jobs run --queue-key deploy -- ./deploy.sh", description: "never two deploys at once" },
  ]);
}

function declareList(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("list")
    .summary("list jobs (by request, by status)")
    .description("List a sandbox's jobs in the order they were accepted, without their output.")
    .option(...SANDBOX_FLAG)
    .option("-A, --all-sandboxes", "every sandbox's jobs, with a SANDBOX column (`sandbox` in --json)")
    .option("--request <id>", "only the jobs of this request id")
    .addOption(new Option("--status <status>", "only jobs with this status").choices(JOB_STATUSES))
    .option("--json", "print {jobs: [...]} as the API lists them")
    .action(bind(() => import("./list.js")));
  declareChoices(cmd, "--status", JOB_STATUSES);
  withExamples(cmd, [
    { command: "sbx jobs list", description: "every job of the default sandbox" },
    { command: "sbx jobs list --request ci-1234", description: "the jobs of one submission" },
    { command: "sbx jobs list --status failed --json", description: "failed jobs, for scripts" },
    { command: "sbx jobs list -A", description: "the jobs of every sandbox" },
  ]);
}

function declareSubmit(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("submit")
    .summary("submit a file of jobs with dependencies")
    .description(
      "Submit FILE (or - for stdin): the API's request body, {request_id, jobs: [{job_id?, name, command,\n" +
        "working_dir?, env?, stdin?, timeout_ms?, depends_on?, dependency_policy?, queue_key?}]}. A\n" +
        "missing request_id gets a fresh one (printed). The submission is a receipt: its request_id is\n" +
        "its idempotency identity, committed before it is sent, and it is sent once; the same request\n" +
        "again admits nothing new. Prints the admitted jobs; with --wait, waits for all of them (server-\n" +
        "side waits, repeated) and exits 0 when all succeeded, 1 when any failed, was cancelled, timed\n" +
        "out or had a dependency fail, 255 when any is interrupted or lost, 124 when --timeout (default\n" +
        "1h) passed first (the jobs keep running), 125 when the submission was refused (nothing admitted).",
    )
    .argument("<file>", "a JSON file of jobs, or - for stdin")
    .option(...SANDBOX_FLAG)
    .option("--wait", "wait until every job has ended; exit with what they did")
    .option("--timeout <dur>", "with --wait: stop waiting after this long (default: 1h; exit 124, nothing cancelled)")
    .option(
      "--json",
      "print {receipt_id, request_id, sandbox_id, classification, error, jobs, waited, timed_out, exit}",
    )
    .action(bind(() => import("./submit.js")));
  declareCompletion(cmd, "<file>", "file");
  withExamples(cmd, [
    { command: "sbx jobs submit pipeline.json --wait", description: "submit and follow every job to its end" },
    { command: "sbx jobs submit pipeline.json", description: "submit and return; the job ids are printed" },
    {
      command: 'jq -n \'{jobs: [{name: "hi", command: "echo hi"}]}\' | sbx jobs submit - -q',
      description: "from stdin; -q prints only the jobs' rows, for scripts",
    },
    { command: "sbx jobs submit ci.json --wait --timeout 20m", description: "stop waiting after 20m (exit 124)" },
  ]);
}

function declareLogs(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("logs")
    .summary("print a job's output (-f to follow)")
    .description(
      "Print a job's kept output as it was produced: its stdout on stdout and its stderr on stderr,\n" +
        "raw. Past the job's output budget the backend keeps the first and the last part; sbx says on\n" +
        "stderr where bytes are missing. With -f it follows the job (server-side waits) until it has\n" +
        "ended and everything was read. --json prints each chunk as {seq, stream, offset, data} (JSON Lines).",
    )
    .argument("<job>", "job id")
    .option(...SANDBOX_FLAG)
    .option("-f, --follow", "follow until the job has ended")
    .option("--json", "one JSON document per output chunk (JSON Lines)")
    .action(bind(() => import("./logs.js")));
  declareCompletion(cmd, "<job>", "job-id");
  withExamples(cmd, [
    { command: "sbx jobs logs job_3f2a -f", description: "follow a running job's output" },
    { command: "sbx jobs logs job_3f2a > out.txt 2> err.txt", description: "the two streams apart" },
  ]);
}

function declareShow(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("show")
    .summary("show a job")
    .description(
      "Show a job: status, exit, why it ended as it did, dependencies, times. With --json, the job as\n" +
        "the API returns it, with every kept output chunk {seq, stream, offset, data (base64)}.",
    )
    .argument("<job>", "job id")
    .option(...SANDBOX_FLAG)
    .option("--json", "print the job record with all of its output chunks")
    .action(bind(() => import("./show.js")));
  declareCompletion(cmd, "<job>", "job-id");
  withExamples(cmd, [
    { command: "sbx jobs show job_3f2a", description: "status, exit and why" },
    { command: "sbx jobs show job_3f2a --json | jq .status", description: "for scripts" },
  ]);
}

function declareWait(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("wait")
    .summary("wait for jobs to end")
    .description(
      "Wait until every named job (and, with --request, every job of that request) has ended, with\n" +
        "server-side waits of at most 25 s, repeated. Exits 0 when all succeeded, 1 when any failed, was\n" +
        "cancelled, timed out or had a dependency fail, 255 when any is interrupted or lost (in doubt),\n" +
        "124 when --timeout (default 1h) passed first. Stopping the wait never cancels a job.",
    )
    .argument("[jobs...]", "job ids")
    .option(...SANDBOX_FLAG)
    .option("--request <id>", "every job of this request id")
    .option("--timeout <dur>", "stop waiting after this long (default: 1h; exit 124, the jobs keep running)")
    .option("--json", "print {jobs: [...], timed_out, exit}")
    .action(bind(() => import("./wait.js")));
  declareCompletion(cmd, "[jobs...]", "job-id");
  withExamples(cmd, [
    { command: "sbx jobs wait --request ci-1234", description: "every job of a submission" },
    { command: "sbx jobs wait job_3f2a job_9c1d --timeout 10m", description: "some jobs, at most 10 minutes" },
  ]);
}

function declareCancel(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("cancel")
    .summary("cancel a job (and what depends on it)")
    .description(
      "Cancel a job. One that has not started is cancelled at once; a running one is\n" +
        "cancel_requested: its process group gets SIGTERM, then SIGKILL after a grace, and it is\n" +
        "cancelled once the group is gone. Jobs depending on it then follow their policy\n" +
        "(all_succeeded: dependency_failed; all_terminal: they run), unless --dependents cancels them too.",
    )
    .argument("<job>", "job id")
    .option(...SANDBOX_FLAG)
    .option("--dependents", "also cancel every job that depends on it, directly or not")
    .option("--json", "print {job_id, status, dependents: [{job_id, name, status}]}")
    .action(bind(() => import("./cancel.js")));
  declareCompletion(cmd, "<job>", "job-id");
  withExamples(cmd, [
    { command: "sbx jobs cancel job_3f2a", description: "its dependents then follow their policy" },
    { command: "sbx jobs cancel job_3f2a --dependents", description: "and everything that depends on it" },
  ]);
}
