// sbx run: a sandbox for one command, as `docker run --rm` (docs/images.md, "sbx run").
// Here: its declaration (help, man page, completions); the run code is run.ts.

import { type Command, Option } from "commander";
import { type Bind, collect, declareChoices, declareCompletion, withExamples } from "../../command.js";
import { egressOptions, ISOLATIONS, limitOptions } from "../sandbox/index.js";

export function declareRun(program: Command, bind: Bind): void {
  const cmd = program
    .command("run")
    .summary("create a sandbox, run one command in it, remove it")
    .description(
      "Create a sandbox (from an image with --image), run ARGV (or --shell STRING) in it as\n" +
        "`sbx exec` does (a receipt, the exit code its classification gives), then remove the\n" +
        "sandbox and its workspace, saying so, unless --keep. A create that is refused leaves\n" +
        "nothing and exits as `sbx sandbox create` would. The receipt stays after the sandbox\n" +
        "is gone.",
    )
    .argument("[argv...]", "the command and its arguments (put them after --)")
    .option("--name <name>", "the sandbox's name (default: run- and 8 random letters)")
    .option("--image <ref>", "its root is this OCI image's filesystem, writable (as sandbox create --image)")
    .option("--keep", "keep the sandbox afterwards (say how to remove it)")
    .addOption(
      new Option("--isolation <kind>", "auto (bwrap where it works, else none), bwrap or none").choices(ISOLATIONS),
    )
    .option("--network [mode]", "user (outbound, not the host's loopback), host or allow-list")
    .option("--no-network", "only its own loopback (needs bwrap)")
    .option("-p, --publish <[ip:]host:port>", "publish port (host port 0: any free one; repeatable)", collect)
    .option("-l, --label <key=value>", "a label on the sandbox (repeatable)", collect)
    .option(
      "-v, --volume <name:/path[:ro]>",
      "mount a named volume at /path, read-only with :ro (repeatable)",
      collect,
    );
  egressOptions(cmd, "may reach");
  limitOptions(cmd, "as sandbox create's");
  cmd
    .option("--shell <string>", "run STRING through /bin/sh -c instead of argv")
    .option("--timeout <dur>", "server-side timeout, 1s..10m (default: 2m)")
    .option("--client-timeout <dur>", "local deadline for an answer (default: timeout + 30s)")
    .option("--cwd <dir>", "working directory (default: the image's WorkingDir, else /workspace)")
    .option("-e, --env <K=V>", "environment variable (repeatable)", collect)
    .option("--env-file <file>", "read K=V lines from a file")
    .option("-i, --stdin", "send sbx's standard input to the command (one-shot)")
    .option("--stream", "show output live (SSE)")
    .option("--fail-on-truncated", "exit 201, not 0, when the output shown is not all of it")
    .addOption(new Option("--json", "print the receipt as JSON and nothing else on stdout"))
    .action(bind(() => import("./run.js")));
  declareChoices(cmd, "--isolation", ISOLATIONS);
  declareCompletion(cmd, "[argv...]", "command");
  declareCompletion(cmd, "--env-file", "file");
  withExamples(cmd, [
    { command: "sbx run --image python:3.12-slim -- python3 --version", description: "one command in an image" },
    { command: "sbx run --image oci-archive:tools.tar:2 --shell 'make && make test'", description: "offline" },
    { command: "sbx run --keep --name try -- ls /", description: "keep the sandbox to look at afterwards" },
    { command: "sbx run --json -- ./check.sh | jq .classification", description: "the receipt, for scripts" },
  ]);
}
