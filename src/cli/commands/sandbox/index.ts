// sbx sandbox: create, list, show, stop, start, pause, resume and remove sandboxes.
// Here: the declarations of its verbs (what --help, the man page and the completions
// read); each verb's run code is its own module, loaded only when that verb runs.

import { type Command, Option } from "commander";
import { type Bind, collect, declareChoices, declareCompletion, withExamples, declareNoun } from "../../command.js";

export const ISOLATIONS = ["auto", "bwrap", "none"];

export function register(program: Command, bind: Bind): void {
  declareNoun(program, bind, {
    name: "sandbox",
    summary: "manage sandboxes",
    description:
      "A sandbox is a workspace where commands run; inside it /workspace is its own directory.\n" +
      "The embedded backend creates `default` on first use.",
    verbs: [
      declareCreate,
      declareList,
      declareShow,
      declareStats,
      declareUpdate,
      declareEgress,
      declareStop,
      declareStart,
      declarePause,
      declareResume,
      declareRm,
    ],
    examples: [
      { command: "sbx sandbox create build", description: "a sandbox named build" },
      { command: "sbx sandbox list", description: "all sandboxes" },
    ],
  });
}

function declareList(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("list")
    .alias("ls")
    .summary("list sandboxes")
    .description(
      "List the backend's sandboxes; with --label, only those whose labels satisfy every\n" +
        "selector given (KEY=VALUE, KEY!=VALUE, KEY: has it, !KEY: has it not). A selector\n" +
        "that matches nothing is said, exit 125.",
    )
    .option(
      "-l, --label <selector>",
      "only sandboxes with this label (k=v, k!=v, k, !k; repeatable: all must hold)",
      collect,
    )
    .option("--show-labels", "a LABELS column")
    .option("--json", "print {sandboxes: [...]}")
    .action(bind(() => import("./list.js")));
  withExamples(cmd, [
    { command: "sbx sandbox list", description: "all sandboxes" },
    { command: "sbx sandbox list --label team=web --label '!ci'", description: "web's sandboxes, not labelled ci" },
    { command: "sbx sandbox list --show-labels", description: "with their labels" },
  ]);
}

function declareCreate(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("create")
    .summary("create a sandbox")
    .description(
      "Create a sandbox with its own /workspace. With bwrap isolation (the default where\n" +
        "bubblewrap works) its commands see the host's system directories read-only, their\n" +
        "/workspace, a private /tmp and nothing else. Its processes share one loopback:\n" +
        "without --network that is all the network they have. --network (user) lets them\n" +
        "reach out through a user-mode stack (slirp4netns) that never reaches the host's\n" +
        "loopback services; --network host gives them the host's network itself.\n" +
        "--allow-domain (and --allow-cidr, --egress-policy) gives no route out but the\n" +
        "destinations named, through the daemon's proxy (network allow-list; every other\n" +
        "name, address, loopback and private range refused: docs/network.md).\n" +
        "--publish makes a server inside reachable from the host (127.0.0.1 unless an\n" +
        "address is given), with or without a network. With none, commands run as you, on\n" +
        "the host, and see what you see.",
    )
    .argument("[name]", "a name to refer to it by")
    .addOption(
      new Option("--isolation <kind>", "auto (bwrap where it works, else none), bwrap or none").choices(ISOLATIONS),
    )
    .option("--network [mode]", "user (the default: outbound, not the host's loopback), host or allow-list")
    .option("--no-network", "only its own loopback (needs bwrap)")
    .option("-p, --publish <[ip:]host:port>", "publish port (host port 0: any free one; repeatable)", collect)
    .option("-l, --label <key=value>", "a label to select it by (repeatable; key [prefix/]name)", collect)
    .option(
      "--idle-timeout <dur>",
      "stop its environment after this long with nothing running (1s and up; 0/off: never; default: the daemon's)",
    )
    .option(
      "-v, --volume <name:/path[:ro]>",
      "mount a named volume (sbx volume create) at /path, read-only with :ro (repeatable)",
      collect,
    );
  egressOptions(cmd, "may reach");
  cmd.option(
    "--image <ref>",
    "its root is this OCI image's filesystem, writable (oci:DIR[:TAG], oci-archive:FILE[:TAG] or a registry reference)",
  );
  limitOptions(cmd, "by default 2GiB, 1024 processes, no CPU limit, /tmp 256MiB");
  cmd.option("--json", "print the sandbox as JSON").action(bind(() => import("./create.js")));
  declareChoices(cmd, "--isolation", ISOLATIONS);
  withExamples(cmd, [
    { command: "sbx sandbox create build", description: "a sandbox named build (isolated where bwrap works)" },
    { command: "sbx cp ./src build:/workspace/src", description: "copy the project in" },
    { command: "sbx exec -s build -- make", description: "then run in it" },
    { command: "sbx sandbox create fetch --network", description: "its commands may reach out (not the host)" },
    {
      command: "sbx sandbox create ci --allow-domain pypi.org --allow-domain '*.pypi.org'",
      description: "only those names, through the daemon's proxy",
    },
    { command: "sbx sandbox create web -p 8080:8000", description: "127.0.0.1:8080 reaches port 8000 inside" },
    { command: "sbx sandbox create dev --network host", description: "the host's own network, by choice" },
    { command: "sbx sandbox create legacy --isolation none", description: "no isolation, said loudly" },
    { command: "sbx sandbox create tools --image oci:/srv/tools:2", description: "its root from an OCI image" },
    { command: "sbx sandbox create ci --memory 4g --pids 512 --cpus 2", description: "with limits of its own" },
    { command: "sbx sandbox create w1 --label team=web --label tier=ci", description: "labelled, to select later" },
    { command: "sbx sandbox create b --volume cache:/cache:ro", description: "a named volume, read-only" },
  ]);
}

/** The egress flags of create and update (docs/network.md). */
export function egressOptions(cmd: Command, verb: string): void {
  cmd
    .option(
      "--allow-domain <pattern>",
      `a name it ${verb}: pypi.org, or *.domain for every name below (repeatable)`,
      collect,
    )
    .option("--deny-domain <pattern>", "a name refused even where an allow pattern matches (repeatable)", collect)
    .option("--allow-cidr <cidr>", `an address range it ${verb}, e.g. 203.0.113.0/24 (repeatable)`, collect)
    .option("--egress-policy <file>", "a JSON file {allow_domains, deny_domains, allow_cidrs}");
}

/** The limit flags of create and update (docs/drivers.md, "Limits"). */
export function limitOptions(cmd: Command, defaults: string): void {
  cmd
    .option("--memory <size>", "memory of all its commands together, e.g. 512m, 4g; none: no limit")
    .option("--pids <n>", "processes (and threads) at once; a fork past it fails")
    .option("--cpus <n>", "CPU time as a number of cores, e.g. 0.5, 2; none: no limit")
    .option(
      "--tmp-size <size>",
      "size of /tmp, /var/tmp and /dev/shm (each a tmpfs): a write past it fails with ENOSPC",
    )
    .option("--disk <size>", "workspace disk: a file system of its own (create only; root)");
  cmd.addHelpText("after", `\nLimits: ${defaults}.\nsbx sandbox show NAME says how each is enforced here.`);
}

function declareUpdate(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("update")
    .summary("change a sandbox's limits, labels or egress policy")
    .description(
      "Change a sandbox's limits, labels or egress policy. What runs in it now gets the new\n" +
        "memory, process and CPU limits at once (cgroups); /tmp's size applies when its\n" +
        "environment next starts (sbx sandbox stop ends it). A limit not given stays; none\n" +
        "lifts one. --label k=v adds or replaces a label, --label k- removes it (as kubectl label).\n" +
        "For a sandbox with network allow-list, --allow-domain/--allow-cidr add to its\n" +
        "policy, --deny-domain refuses a name (and takes it off the allow-list), and\n" +
        "--egress-policy FILE replaces the policy: new connections follow it at once.",
    )
    .argument("<id>", "sandbox id or name")
    .option("-l, --label <key=value|key->", "set a label, or remove it with key- (repeatable)", collect)
    .option("--idle-timeout <dur>", "stop its environment after this long idle (0/off: never; default: the daemon's)");
  limitOptions(cmd, "as at create");
  egressOptions(cmd, "may reach too");
  cmd.option("--json", "print the sandbox as JSON").action(bind(() => import("./update.js")));
  declareCompletion(cmd, "<id>", "sandbox-name");
  withExamples(cmd, [
    { command: "sbx sandbox update build --memory 8g", description: "more memory, also for what runs now" },
    { command: "sbx sandbox update build --cpus none", description: "lift the CPU limit" },
    { command: "sbx sandbox update build --label team=api --label tier-", description: "relabel; tier removed" },
    { command: "sbx sandbox update ci --allow-domain github.com", description: "one more destination, at once" },
    { command: "sbx sandbox update build --idle-timeout 15m", description: "stop it after 15 minutes idle" },
  ]);
}

function declareShow(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("show")
    .summary("show one sandbox: isolation, network, workspace and its size")
    .description(
      "Show a sandbox by id or name: its isolation (and what its commands can see), network,\n" +
        "the workspace's directory on the host and its size on disk.",
    )
    .argument("<id>", "sandbox id or name")
    .option("--json", "print the sandbox as JSON")
    .action(bind(() => import("./show.js")));
  declareCompletion(cmd, "<id>", "sandbox-name");
  withExamples(cmd, [
    { command: "sbx sandbox show default", description: "isolation, network, workspace size" },
    { command: "sbx sandbox show default --json | jq .host_workspace", description: "where its files are" },
  ]);
}

function declareStats(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("stats")
    .summary("what sandboxes use now: CPU, memory, processes, /tmp, workspace, network")
    .description(
      "What each sandbox uses now, as docker stats shows containers: CPU % (of one core, over\n" +
        "the last second), memory now and at its peak against its limit, processes against\n" +
        "its limit, /tmp and workspace bytes, network bytes where it has a network. Every\n" +
        "sandbox when none is named. A figure that cannot be had here says why\n" +
        '(docs/operations.md, "Sandbox stats"). -f refreshes every second until interrupted.',
    )
    .argument("[ids...]", "sandbox ids or names")
    .option("-f, --follow", "refresh every second (JSON Lines with --json)")
    .option("--json", "print one JSON document (JSON Lines with -f)")
    .action(bind(() => import("./stats.js")));
  declareCompletion(cmd, "[ids...]", "sandbox-name");
  withExamples(cmd, [
    { command: "sbx sandbox stats", description: "every sandbox, one sample" },
    { command: "sbx sandbox stats web -f", description: "web, refreshed in place every second" },
  ]);
}

function declareEgress(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("egress")
    .summary("list a sandbox's connections through its egress proxy")
    .description(
      "List the recent connections of a sandbox with network allow-list: when, to which\n" +
        "host and port, allowed or refused and why, bytes each way (docs/network.md).\n" +
        "Kept in the daemon's memory (the last 1000), with totals since it started.",
    )
    .argument("<id>", "sandbox id or name")
    .option("-f, --follow", "then print each connection as it is decided and as it ends (JSON Lines with --json)")
    .option("--json", "print {sandbox_id, name, egress, allowed_total, denied_total, seq, connections}")
    .action(bind(() => import("./egress.js")));
  declareCompletion(cmd, "<id>", "sandbox-name");
  withExamples(cmd, [
    { command: "sbx sandbox egress ci", description: "what ci reached and what it was refused" },
    { command: "sbx sandbox egress ci -f --json", description: "each new connection of ci, one JSON line each" },
  ]);
}

function declareStop(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("stop")
    .summary("end a sandbox's environment and everything in it")
    .description(
      "End everything that runs in a sandbox: its executions are cancelled, its supervised\n" +
        "processes stopped, its jobs cancelled (queued ones too), and whatever else runs in it\n" +
        "is killed with its environment (/tmp goes with it). The workspace stays. The next\n" +
        "command in it, or `sbx sandbox start`, starts a new environment.\n" +
        "With --label instead of a name: every sandbox the selectors match, said by name and\n" +
        "asked on a terminal first (--yes: not asked; off a terminal --yes is needed).",
    )
    .argument("[id]", "sandbox id or name")
    .option(
      "-l, --label <selector>",
      "every sandbox with this label (k=v, k!=v, k, !k; repeatable: all must hold)",
      collect,
    )
    .option("-y, --yes", "with --label: do not ask")
    .option("--json", "print what was ended as JSON")
    .action(bind(() => import("./stop.js")));
  declareCompletion(cmd, "<id>", "sandbox-name");
  withExamples(cmd, [
    { command: "sbx sandbox stop web", description: "end everything running in web" },
    { command: "sbx sandbox stop web --json | jq .ended", description: "what was ended, for a script" },
    { command: "sbx sandbox stop --label team=web --yes", description: "every sandbox labelled team=web" },
  ]);
}

function declareStart(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("start")
    .summary("start a sandbox's environment now")
    .description(
      "Start a sandbox's environment now rather than at its next command (which starts it\n" +
        "anyway). Says why when it cannot start.",
    )
    .argument("<id>", "sandbox id or name")
    .option("--json", "print the sandbox as JSON")
    .action(bind(() => import("./start.js")));
  declareCompletion(cmd, "<id>", "sandbox-name");
  withExamples(cmd, [{ command: "sbx sandbox start web", description: "start web's environment" }]);
}

function declarePause(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("pause")
    .summary("freeze every process of a sandbox")
    .description(
      "Freeze every process of a running sandbox (the cgroup freezer): they use no CPU and\n" +
        "stay where they are, with their memory, /tmp, connections and terminals, until\n" +
        "`sbx sandbox resume`. Meanwhile a new command in it is refused (409 sandbox_paused),\n" +
        "timeouts keep counting, and bytes to its ports and terminals wait. Refused, saying\n" +
        "why, where no freezer holds its processes (isolation none, a daemon not root).",
    )
    .argument("<id>", "sandbox id or name")
    .option("--json", "print the sandbox as JSON")
    .action(bind(() => import("./pause.js")));
  declareCompletion(cmd, "<id>", "sandbox-name");
  withExamples(cmd, [{ command: "sbx sandbox pause build", description: "freeze build; resume it later" }]);
}

function declareResume(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("resume")
    .summary("thaw a paused sandbox")
    .description("Thaw a paused sandbox's processes: they go on where they stopped.")
    .argument("<id>", "sandbox id or name")
    .option("--json", "print the sandbox as JSON")
    .action(bind(() => import("./resume.js")));
  declareCompletion(cmd, "<id>", "sandbox-name");
  withExamples(cmd, [{ command: "sbx sandbox resume build", description: "build's processes go on" }]);
}

function declareRm(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("rm")
    .summary("remove a sandbox and its workspace")
    .description(
      "Remove a sandbox and its workspace (every file in it) with its jobs and processes.\n" +
        "When its workspace holds files, sbx says what will be lost and asks on a terminal;\n" +
        "off a terminal it is refused without --force. Refused while an execution runs or a\n" +
        "supervised process is not ended in it, unless --force: then those are cancelled and\n" +
        "stopped first. With --label instead of a name: every sandbox the selectors match,\n" +
        "said by name and asked on a terminal first (--yes: not asked; off a terminal --yes\n" +
        "is needed); one that is busy is said and left unless --force, the rest still go.",
    )
    .argument("[id]", "sandbox id or name")
    .option(
      "-l, --label <selector>",
      "every sandbox with this label (k=v, k!=v, k, !k; repeatable: all must hold)",
      collect,
    )
    .option("-y, --yes", "with --label: do not ask")
    .option("-f, --force", "remove without asking, cancelling its executions and stopping its processes first")
    .option("--json", "print {removed}")
    .action(bind(() => import("./rm.js")));
  declareCompletion(cmd, "<id>", "sandbox-name");
  withExamples(cmd, [
    { command: "sbx sandbox rm build", description: "remove the build sandbox" },
    { command: "sbx sandbox rm build --force", description: "even while something runs in it" },
    { command: "sbx sandbox rm --label tier=ci --yes", description: "every sandbox labelled tier=ci" },
  ]);
}
