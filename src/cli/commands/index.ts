// The top-level verbs of the command tree: what they take and teach (--help, man page,
// completions). Their run code is loaded only when one runs.

import { type Command, Option } from "commander";
import { type Bind, collect, declareChoices, declareCompletion, withExamples } from "../command.js";
import { SHELLS } from "../docs/shells.js";

export function declareLogs(program: Command, bind: Bind): void {
  const cmd = program
    .command("logs")
    .summary("replay or follow an execution's output")
    .description(
      "Replay an execution's output from its event log: raw bytes to stdout and stderr, or the events\n" +
        "as JSON Lines with --json. With -f, follow it until it ends, reconnecting (with the last\n" +
        "event id) if the stream drops. Works on finished executions too; output beyond the event\n" +
        "budget is read from the full output.",
    )
    .argument("<execution>", "execution id, or a receipt (id, key, unique prefix)")
    .option("-s, --sandbox <id>", "sandbox of a bare execution id (default: default)")
    .option("-f, --follow", "follow until the execution ends")
    .option("--after <event-id>", "start after this event id")
    .option("--json", "print events as JSON Lines: {id, type, data}")
    .action(bind(() => import("./logs.js")));
  declareCompletion(cmd, "<execution>", "receipt-id");
  withExamples(cmd, [
    { command: "sbx logs exe_4fz2hk8d", description: "everything it printed so far" },
    { command: "sbx logs exe_4fz2hk8d -f", description: "follow until it ends" },
    { command: "sbx logs rcp_7k2m9qfd --json --after 10", description: "events after id 10, as JSON Lines" },
  ]);
}

export function declareHelp(program: Command, bind: Bind): void {
  const cmd = program
    .command("help")
    .summary("help on a command or a topic (exit-codes)")
    .description("Show help for a command (`sbx help receipts show`) or a topic (`sbx help exit-codes`).")
    .argument("[words...]", "a command path or a topic")
    .option("--man", "the whole manual, sbx(1), through your pager (its roff source in a pipe)")
    .action(bind(() => import("./help-topics.js")));
  withExamples(cmd, [
    { command: "sbx help exit-codes", description: "what each exit code means" },
    { command: "sbx help --man", description: "the manual, as man sbx shows it" },
    { command: "sbx help receipts resubmit", description: "help on one command" },
  ]);
}

export function declareCancel(program: Command, bind: Bind): void {
  const cmd = program
    .command("cancel")
    .summary("cancel a running execution")
    .description(
      "Ask the backend to cancel an execution (its process group gets SIGTERM, then SIGKILL). The\n" +
        "acknowledgement is not proof: sbx says `cancelled` only once the outcome is cancelled, and\n" +
        "`cancel requested` until then. With --wait it waits for the end (exit 255 if it does not come).",
    )
    .argument("<execution>", "execution id, or a receipt (id, key, unique prefix)")
    .option("-s, --sandbox <id>", "sandbox of a bare execution id (default: default)")
    .option("--reason <text>", "why, recorded by the backend")
    .option("--wait", "wait until the execution has really ended")
    .option("--timeout <dur>", "how long --wait waits (default: 60s)")
    .option("--json", "print {execution_id, receipt_id, cancel, state, outcome, exit_code, signal}")
    .action(bind(() => import("./cancel.js")));
  declareCompletion(cmd, "<execution>", "receipt-id");
  withExamples(cmd, [
    { command: "sbx cancel exe_4fz2hk8d --wait", description: "cancel and wait until it is gone" },
    { command: "sbx cancel rcp_7k2m9qfd --reason 'wrong branch'", description: "by receipt, with a reason" },
  ]);
}

/**
 * The words the generated completions offer for values the backend knows (sandbox
 * names, process names, job ids): `sbx __complete KIND -- WORDS...`. Hidden: for the
 * scripts, not for people (and not in help, the man page or the completions).
 */
export function declareCompleteWords(program: Command, bind: Bind): void {
  const cmd = program
    .command("__complete", { hidden: true })
    .summary("words for shell completion (used by the scripts)")
    .description(
      "Print the words a shell completion offers for KIND (sandbox names, process names, job ids),\n" +
        "one per line, asked of the backend without starting it; nothing when it does not answer.",
    )
    .argument("<kind>", "sandbox-name, process-name or job-id")
    .argument("[words...]", "the command line so far, after --")
    .action(bind(() => import("./complete-words.js")));
  withExamples(cmd, [
    { command: "sbx __complete process-name -- process logs -s web", description: "the processes of web" },
  ]);
}

export function declareCompletionCommand(program: Command, bind: Bind): void {
  const cmd = program
    .command("completion")
    .summary("print a shell completion script (bash, zsh, fish)")
    .description("Print a completion script for bash, zsh or fish, generated from sbx's command tree.")
    .argument("<shell>", "bash, zsh or fish")
    .action(bind(() => import("./completion.js")));
  declareChoices(cmd, "<shell>", SHELLS);
  withExamples(cmd, [
    { command: "sbx completion bash > ~/.local/share/bash-completion/completions/sbx", description: "bash" },
    { command: 'sbx completion zsh > "${fpath[1]}/_sbx"', description: "zsh" },
    { command: "sbx completion fish > ~/.config/fish/completions/sbx.fish", description: "fish" },
  ]);
}

export function declareRecover(program: Command, bind: Bind): void {
  const cmd = program
    .command("recover")
    .summary("observe every receipt in doubt once and say what is resolved")
    .description(
      "For every receipt in doubt (dispatched, outcome_unknown, local_timeout, result_unconfirmed,\n" +
        "in_progress, record_pending) or running, observe the execution once (by execution id, or by\n" +
        "idempotency key; a jobs submission by its request id), record what was learned, and print what\n" +
        "is resolved, what is running (not in doubt: the backend says where it is) and, for the rest,\n" +
        "the next step. It never re-sends anything. Exits 0 when nothing is left in doubt, 255 otherwise.",
    )
    .option("--json", "print {resolved: [...], running: [...], in_doubt: [...]}")
    .action(bind(() => import("./recover.js")));
  withExamples(cmd, [
    { command: "sbx recover", description: "after an incident: what ran, what is still unknown" },
    { command: "sbx recover --json | jq '.in_doubt[].receipt_id'", description: "for scripts" },
  ]);
}

export function declareInit(program: Command, bind: Bind): void {
  const cmd = program
    .command("init")
    .summary("set up the backend sbx uses (interactive)")
    .description(
      "Choose the backend sbx uses: the embedded one on this machine (profile `local`, started on\n" +
        "demand) or a remote one (a profile with an API URL and a key, read hidden). On a terminal it\n" +
        "asks; elsewhere it refuses unless flags give the answers (--yes takes the defaults). A remote\n" +
        "backend is asked for its health before it is saved. The chosen profile becomes the current one.\n" +
        "A key for plain http:// to another machine is refused unless --insecure says it may travel\n" +
        "in clear (a network you trust); https:// and this machine's loopback need no such flag.",
    )
    .option("--profile-name <name>", "name of the remote profile to create or replace")
    .option("--api-url <url>", "the remote backend: https://host[:port] or unix:/path.sock")
    .option("--api-key-stdin", "read the API key from stdin")
    .option("--insecure", "let the key go over plain http:// to another machine (trusted network)")
    .option("-y, --yes", "accept the defaults without asking (the embedded backend)")
    .option("--json", "print {profile, api_url, api_key, insecure, current, backend, health}")
    .action(bind(() => import("./init.js")));
  withExamples(cmd, [
    { command: "sbx init", description: "answer a few questions" },
    { command: "sbx init --yes", description: "the embedded backend, no questions" },
    {
      command: 'sbx init --profile-name prod --api-url "$URL" --api-key-stdin <key.txt',
      description: "a remote backend, for scripts (the key from a file, never in argv)",
    },
  ]);
}

export function declareExec(program: Command, bind: Bind): void {
  const cmd = program
    .command("exec")
    .summary("run a command in a sandbox and record a receipt")
    .description(
      "Run ARGV (no shell) or --shell STRING (through /bin/sh -c, deliberately) in a sandbox.\n" +
        "Before anything is sent, the Idempotency-Key and the exact request are committed to the\n" +
        "local receipt store. The request is sent once, never retried; the answer (or its absence)\n" +
        "is classified and sbx exits with the code the classification gives (see `sbx help exit-codes`).",
    )
    .argument("[argv...]", "the command and its arguments (put them after --)")
    .option("-s, --sandbox <id>", "sandbox id or name (default: default)")
    .option("--shell <string>", "run STRING through /bin/sh -c instead of argv")
    .option("--timeout <dur>", "server-side timeout, 1s..10m (default: 2m)")
    .option("--client-timeout <dur>", "local deadline for an answer (default: timeout + 30s)")
    .option("--cwd <dir>", "working directory inside /workspace")
    .option("-e, --env <K=V>", "environment variable (repeatable)", collect)
    .option("--env-file <file>", "read K=V lines from a file")
    .option("--stdin", "send sbx's standard input to the command (one-shot)")
    .option("--idempotency-key <key>", "use this key instead of a fresh random one")
    .option("--stream", "show output live (SSE); a dropped stream is resumed, never re-sent")
    .option("--detach", "return once the command has started; print the receipt and execution ids")
    .option("-i, --interactive", "send stdin (alone: as --stdin; with -t: keys typed at the terminal)")
    .option("-t, --tty", "run on a terminal of the sandbox's, attached to yours (with -i; timeout up to 24h)")
    .option("--detach-keys <keys>", "keys that detach from -t, leaving it running (default: ctrl-p,ctrl-q)")
    .option("--fail-on-truncated", "exit 201, not 0, when the output shown is not all of it (past the output cap)")
    .addOption(new Option("--json", "print the receipt as JSON and nothing else on stdout"))
    .action(bind(() => import("./exec.js")));
  declareCompletion(cmd, "[argv...]", "command");
  declareCompletion(cmd, "--env-file", "file");
  withExamples(cmd, [
    { command: "sbx exec -- echo hello", description: "run argv in the default sandbox" },
    { command: "sbx exec --shell 'make test 2>&1 | tail -5'", description: "run a shell string, deliberately" },
    { command: "sbx exec -s build --timeout 5m --env CI=1 -- make", description: "another sandbox, longer timeout" },
    { command: "sbx exec --json -- ./deploy.sh | jq .classification", description: "a receipt for scripts" },
    { command: "sbx exec --stream -- make test", description: "live output, resumed if the stream drops" },
    { command: "sbx exec --detach -- ./long-job.sh", description: "start it and return; then sbx logs EXE -f" },
    { command: "sbx exec -it -- python3", description: "a REPL on a terminal; Ctrl-P Ctrl-Q detaches" },
  ]);
}

export function declareShell(program: Command, bind: Bind): void {
  const cmd = program
    .command("shell")
    .summary("an interactive shell in a sandbox")
    .description(
      "Open an interactive shell (bash where the sandbox has it, else sh) in /workspace on a\n" +
        "terminal of the sandbox's own: prompt, line editing, job control, full-screen programs,\n" +
        "the window size followed. It is an execution like any other (a receipt, an exit code as\n" +
        "`exec` gives it: `exit 3` exits 3). Ctrl-C is the shell's. The detach keys (Ctrl-P Ctrl-Q)\n" +
        "leave it running; `sbx attach EXE` comes back. Your terminal's mode is restored however\n" +
        "sbx ends. Needs a terminal on stdin.",
    )
    .option("-s, --sandbox <id>", "sandbox id or name (default: default)")
    .option("--cwd <dir>", "working directory inside /workspace")
    .option("-e, --env <K=V>", "environment variable (repeatable)", collect)
    .option("--timeout <dur>", "end it after this long, 1s..24h (default: 24h)")
    .option("--detach-keys <keys>", "keys that detach, leaving it running (default: ctrl-p,ctrl-q)")
    .option("--idempotency-key <key>", "use this key instead of a fresh random one")
    .action(bind(() => import("./shell.js")));
  withExamples(cmd, [
    { command: "sbx shell", description: "a shell in the default sandbox" },
    { command: "sbx shell -s ci --cwd src", description: "in sandbox ci, starting in /workspace/src" },
    { command: "sbx shell --detach-keys ctrl-x,x", description: "detach with Ctrl-X x instead" },
  ]);
}

export function declareAttach(program: Command, bind: Bind): void {
  const cmd = program
    .command("attach")
    .summary("attach this terminal to an execution on a terminal")
    .description(
      "Attach to an execution started with `sbx shell` or `sbx exec -it` that is still running\n" +
        "(detached from, or whose connection dropped). The last client to attach has the terminal:\n" +
        "one attached before is told and let go. Output starts where the terminal is now (the\n" +
        "program is asked to redraw: a resize, as tmux does), or from its first byte with --replay. Exits as `exec` would\n" +
        "once the program ends; the detach keys leave it running again.",
    )
    .argument("<execution>", "execution id, or a receipt (id, key, unique prefix)")
    .option("-s, --sandbox <id>", "sandbox of a bare execution id (default: default)")
    .option("--replay", "show the whole transcript first")
    .option("--detach-keys <keys>", "keys that detach, leaving it running (default: ctrl-p,ctrl-q)")
    .action(bind(() => import("./attach.js")));
  declareCompletion(cmd, "<execution>", "receipt-id");
  withExamples(cmd, [
    { command: "sbx attach exe_4fz2hk8d", description: "back to a detached shell" },
    { command: "sbx attach rcp_7k2m9qfd --replay", description: "by receipt, with everything it printed" },
  ]);
}

export function declareCp(program: Command, bind: Bind): void {
  const cmd = program
    .command("cp")
    .summary("copy files and directories into a sandbox or a volume, or out of it")
    .description(
      "Copy a file or a directory between this machine and a sandbox's /workspace, byte for byte\n" +
        "with modes kept (symlinks are copied as symlinks). One side is SANDBOX:PATH, where PATH\n" +
        "is under /workspace (absolute, or relative to it); the other a local path, or - for a tar\n" +
        "stream on stdin (into the sandbox) or stdout (out of it). Copied onto a directory that\n" +
        "exists, a file or directory goes inside it. Paths that lead out of /workspace (.., or\n" +
        "symlinks pointing elsewhere) are refused and nothing is written.\n" +
        "A symlink named as SANDBOX:PATH is copied as the link itself, as docker cp does; with\n" +
        "-L it is followed, where its target stays inside /workspace (refused where it leads\n" +
        "out). A local source that is a symlink is followed.\n" +
        "What is copied out belongs to you (the user running sbx cp), and setuid, setgid and\n" +
        "sticky bits are dropped, as tar does for an ordinary user; a tar stream on stdout says\n" +
        "the same. A directory is unpacked beside its destination and moved into place only once\n" +
        "it is complete: a copy that fails midway leaves nothing half-written there.\n" +
        "A named volume is volume/NAME:PATH, PATH from the volume's own / (what a sandbox sees\n" +
        "where it mounts it); the same rules hold, and an absolute symlink in a volume is never\n" +
        "followed (each sandbox mounts it elsewhere). What is copied in is the volume's group's to\n" +
        "read and write, as what its sandboxes make there. (A local path with a colon: ./a:b.)",
    )
    .argument("<source>", "local path, SANDBOX:PATH, volume/NAME:PATH, or -")
    .argument("<destination>", "SANDBOX:PATH, volume/NAME:PATH, local path, or -")
    .option("-L, --follow-link", "follow a symlink named as SANDBOX:PATH (only where it stays inside /workspace)")
    .option("--json", "print {source, destination, type, bytes, sha256, entries} (and target, for a symlink)")
    .action(bind(() => import("./cp.js")));
  withExamples(cmd, [
    { command: "sbx cp ./src default:/workspace/src", description: "copy a directory in" },
    { command: "sbx cp build.sh default:", description: "a file into /workspace" },
    { command: "sbx cp default:/workspace/out/report.html .", description: "a file out, into the current directory" },
    { command: "tar -c -C dist . | sbx cp - default:/workspace/dist", description: "a tar stream in" },
    { command: "sbx cp default:/workspace/logs - | tar -t", description: "a directory out as a tar stream" },
    { command: "sbx cp -L default:/workspace/current ./build", description: "what a symlink names, not the link" },
    { command: "sbx cp ./wheels volume/cache:/", description: "a directory into the volume cache" },
  ]);
}

export function declareVersion(program: Command, bind: Bind): void {
  const cmd = program
    .command("version")
    .summary("print the version (as --version does)")
    .description("Print sbx's version; with --json, {version, protocol}.")
    .option("--json", "print {version, protocol}")
    .action(bind(() => import("./version.js")));
  withExamples(cmd, [{ command: "sbx version", description: "the version of this sbx" }]);
}

export function declarePortForward(program: Command, bind: Bind): void {
  const cmd = program
    .command("port-forward")
    .summary("reach a port inside a sandbox from this machine")
    .description(
      "Listen on LOCAL (on 127.0.0.1 unless --address says otherwise) and join each connection to\n" +
        "PORT on the sandbox's own loopback, as kubectl port-forward does, until Ctrl-C: a server\n" +
        "inside is reachable from here also without --network, through the backend (a remote\n" +
        "profile's too). LOCAL defaults to PORT; 0 (or :PORT) picks a free port, printed. A\n" +
        "connection to a port where nothing listens, or to a sandbox that is not running, is\n" +
        "closed and said on stderr; the forward goes on. It never starts the sandbox.",
    )
    .argument("<sandbox>", "sandbox id or name")
    .argument("<ports...>", "[LOCAL:]PORT, one or more")
    .option(
      "--address <addr>",
      "local address to listen on, repeatable or comma-separated (default: 127.0.0.1)",
      collect,
    )
    .option("--json", "print JSON Lines on stdout: {event: listening|connection_failed|stopped, ...}")
    .action(bind(() => import("./port-forward.js")));
  declareCompletion(cmd, "<sandbox>", "sandbox-name");
  withExamples(cmd, [
    { command: "sbx port-forward web 8000", description: "127.0.0.1:8000 to port 8000 in web" },
    { command: "sbx port-forward web 8080:8000", description: "127.0.0.1:8080 to port 8000 in web" },
    { command: "sbx port-forward web :8000", description: "a free local port to 8000 (printed)" },
    { command: "sbx port-forward --address 0.0.0.0 web 8000", description: "listen on every address" },
  ]);
}

export function declarePort(program: Command, bind: Bind): void {
  const cmd = program
    .command("port")
    .summary("show a sandbox's published ports")
    .description(
      "Print the ports published on the host for SANDBOX (sbx sandbox create -p), as docker\n" +
        "port does: `3000/tcp -> 127.0.0.1:41234` each, the host port as bound (the one the\n" +
        "system chose for -p 0:PORT). With PORT, only its host address; a PORT that is not\n" +
        "published is refused (125). A port the backend cannot listen on now says why.",
    )
    .argument("<sandbox>", "sandbox id or name")
    .argument("[port]", "a port inside the sandbox (PORT or PORT/tcp)")
    .option("--json", "print {sandbox_id, name, ports: [{port, protocol, host_ip, host_port, listening, reason}]}")
    .action(bind(() => import("./port.js")));
  declareCompletion(cmd, "<sandbox>", "sandbox-name");
  withExamples(cmd, [
    { command: "sbx port api", description: "every published port of api" },
    { command: "sbx port api 3000", description: "the host address of port 3000 in api" },
  ]);
}

/** The tools of `sbx mcp`, for its help (the registry itself loads only when it runs; a test holds them equal). */
export const MCP_TOOL_NAMES = [
  "run_command",
  "run_process",
  "continue_process",
  "stop_process",
  "job_run",
  "job_submit",
  "job_read",
  "await",
  "cancel",
  "read_file",
  "write_file",
  "list_files",
  "receipts_in_doubt",
  "receipt_show",
  "sandbox_list",
  "sandbox_create",
  "sandbox_stop",
] as const;

export function declareMcp(program: Command, bind: Bind): void {
  const cmd = program
    .command("mcp")
    .summary("serve sandboxes to an agent (Model Context Protocol, stdio)")
    .description(
      "Run a Model Context Protocol server on stdin/stdout for an agent (Claude Code, Codex, Cursor,\n" +
        "any MCP client), against the current profile (the local backend is started on demand).\n" +
        "Its tools run commands, processes and jobs in sandboxes, each start a receipt written before\n" +
        "it is sent, as `sbx exec` writes one; a lost answer is said as such (may_have_run, the next\n" +
        "safe tool call), never as a bare error. Logs go to stderr. See docs/agents.md.\n" +
        `Tools: ${MCP_TOOL_NAMES.join(", ")}.`,
    )
    .option("-s, --sandbox <id>", "the sandbox tools act on when a call names none (default: default)")
    .option("--tools <list>", "tools to offer: names, read-only (tools that change nothing), all (default)")
    .option("--max-output-bytes <n>", "bytes of each output stream a result carries at most (default: 65536)")
    .option(
      "--manage-sandboxes",
      "offer sandbox_create and sandbox_stop (default: the agent uses the sandboxes there are)",
    )
    .action(bind(() => import("../mcp/server.js")));
  withExamples(cmd, [
    { command: "sbx mcp", description: "serve the agent that runs it (claude mcp add sbx -- sbx mcp)" },
    { command: "sbx mcp --tools read-only", description: "a review agent: receipts and sandboxes, nothing run" },
    { command: "sbx mcp -s ci --tools run_command,receipt_show", description: "one sandbox, two tools" },
    { command: "sbx mcp --manage-sandboxes", description: "the agent may also create and stop sandboxes" },
  ]);
}
