// Terminal sessions as a user has them (sbx shell, exec -it, attach), on a real
// pseudo-terminal (test/support/outer-terminal.ts) running the process users run — bin/sbx
// on Node, or the release binary (SBX_TEST_BINARY): a prompt, a /dev/pts terminal of
// the sandbox's, the window size followed, Ctrl-C the program's, vi, the exit status
// as sbx's, detach and attach, every byte through both ways, and the user's terminal
// mode (stty -g) the same after every way out, the daemon killed included. Each in a
// sandbox of both drivers: `none`, and a bwrap sandbox's live environment, where the
// terminal is opened inside the sandbox by its init and the shell is one more process
// of that environment (its process table, its stop, its syscall filter).

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeHome, removeHome, runSbx, sbxEnv } from "../support/cli.js";
import { daemonPids, stopDaemon } from "../support/daemon.js";
import { runMain } from "../support/in-process.js";
import { OuterTerminal, SBX_COMMAND as SBX, sbxSession, shellQuote as quote } from "../support/outer-terminal.js";
import { describeNeeding, itNeeding } from "../support/requirements.js";
import { until } from "../support/wait.js";

/** Whether `sleep 100` runs in the sandbox (its commands carry its id in their environment). */
function sleepingIn(sandboxId: string): boolean {
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, "utf8") !== "sleep\x00100\x00") continue;
      if (fs.readFileSync(`/proc/${entry}/environ`, "utf8").split("\0").includes(`SBX_SANDBOX_ID=${sandboxId}`)) {
        return true;
      }
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return false;
}

function readLog(home: string): string {
  try {
    return fs.readFileSync(path.join(home, "daemon", "daemon.log"), "utf8");
  } catch {
    return "";
  }
}

/** TIOCSTI (push a byte into a terminal's input), the same number on x86_64 and aarch64. */
const TIOCSTI = 0x5412;

function terminalSessions(isolation: "none" | "bwrap"): void {
  let home: string;
  let workspace: string;
  let sandboxId: string;
  let run = 0;
  const terminals: OuterTerminal[] = [];

  beforeAll(async () => {
    home = makeHome("sbx-term-");
    // Spawned: a daemon of its own, in its own process (one test kills it).
    const result = await runSbx(["sandbox", "create", "tt", "--isolation", isolation, "--json"], { home });
    expect(result.code, result.stderr + readLog(home)).toBe(0);
    const shown = await runSbx(["sandbox", "show", "tt", "--json"], { home });
    const doc = JSON.parse(shown.stdout) as { host_workspace: string; sandbox_id: string };
    workspace = doc.host_workspace;
    sandboxId = doc.sandbox_id;
  });
  afterAll(async () => {
    for (const t of terminals) t.kill();
    await stopDaemon(home);
    removeHome(home);
  });

  /** `sbx ARGS` on a new terminal, as a user's shell runs it (test/support/outer-terminal.ts). */
  function session(args: string, opts: { cols?: number; rows?: number } = {}) {
    const s = sbxSession(path.join(home, `session-${++run}`), args, {
      cwd: home,
      env: { ...sbxEnv(home), TERM: "xterm-256color" },
      ...opts,
    });
    terminals.push(s.t);
    return s;
  }

  it("sbx shell: a prompt, a /dev/pts terminal, its size following the window, Ctrl-C the shell's, exit 3 is sbx's 3, the mode restored", async () => {
    const s = session("shell -s tt", { cols: 91, rows: 27 });
    await s.t.waitFor(/[$#] $/m, "the shell's prompt");
    s.t.type("tty; stty size\r");
    await s.t.waitFor(/\/dev\/pts\/\d+\r\n27 91\r\n/, "tty and stty size");
    s.t.resize(120, 40);
    // The window size reaches sbx as SIGWINCH, the sandbox's terminal as a resize message.
    await until(
      async () => {
        s.t.type("echo size-is-$(stty size | tr ' ' x)\r");
        const m = await s.t.waitFor(/size-is-(\d+x\d+)/, "stty size");
        return m[1] === "40x120";
      },
      30_000,
      "stty size to follow the resize",
    ).catch((err) => {
      throw new Error(`${(err as Error).message}: ${JSON.stringify(s.t.text().slice(-400))}`);
    });
    s.t.type("sleep 100\r");
    await until(() => sleepingIn(sandboxId), 30_000, "sleep 100 to run in the sandbox");
    s.t.type("\x03");
    await s.t.waitFor("^C", "Ctrl-C echoed by the sandbox's terminal");
    await until(() => !sleepingIn(sandboxId), 30_000, "sleep 100 to end");
    s.t.type("echo survived-$((40+2))\r");
    await s.t.waitFor("survived-42", "the shell after Ctrl-C");
    s.t.type("exit 3\r");
    const end = await s.over();
    expect(end.code).toBe(3);
    expect(end.after).toBe(end.before);
  });

  itNeeding("vi", "vi opens a file, writes it and quits", async () => {
    fs.writeFileSync(path.join(workspace, "notes.txt"), "first\n");
    // The sandbox's own file (a bwrap sandbox of a root daemon runs as a uid of its own).
    const owner = fs.statSync(workspace);
    fs.chownSync(path.join(workspace, "notes.txt"), owner.uid, owner.gid);
    const s = session("exec -it -s tt -- vi notes.txt");
    await s.t.waitFor("notes.txt", "vi showing the file");
    s.t.type("Gosecond\x1b");
    s.t.type(":wq\r");
    const end = await s.over();
    expect(end.code).toBe(0);
    expect(fs.readFileSync(path.join(workspace, "notes.txt"), "utf8")).toBe("first\nsecond\n");
    expect(end.sameMode).toBe(true);
  });

  it("detach with Ctrl-P Ctrl-Q leaves the shell running; sbx attach comes back to it", async () => {
    const s = session("shell -s tt");
    await s.t.waitFor(/[$#] $/m, "the shell's prompt");
    s.t.type("cd /tmp; echo before-$((1+1))\r");
    await s.t.waitFor("before-2", "the shell's answer");
    s.t.type("\x10\x11");
    await s.t.waitFor(/detached from (exe_[0-9a-z]+); it keeps running/, "the detach");
    const executionId = /detached from (exe_[0-9a-z]+)/.exec(s.t.text())![1]!;
    const end = await s.over();
    expect(end.code).toBe(0);
    expect(end.sameMode).toBe(true);

    const back = session(`attach ${executionId} -s tt`);
    await back.t.waitFor(`attached to ${executionId}`, "the attach");
    back.t.type("pwd; echo after-attach-$((6*7))\r");
    await back.t.waitFor(/\/tmp\r\nafter-attach-42/, "the same shell, still in /tmp");
    back.t.type("exit 0\r");
    const again = await back.over();
    expect(again.code).toBe(0);
    expect(again.sameMode).toBe(true);
  });

  it("sbx attach asks the program to redraw: it gets SIGWINCH though the window has the size it had", async () => {
    // A full-screen program's way: it draws again on SIGWINCH (here, a line with the size).
    const program = `trap 'echo redrawn-$(stty size | tr " " x)' WINCH; echo ready; while :; do sleep 1 & wait $!; done`;
    const size = { cols: 100, rows: 30 };
    const s = session(`exec -it -s tt -- sh -c ${quote(program)}`, size);
    await s.t.waitFor("ready", "the program to start");
    s.t.type("\x10\x11");
    await s.t.waitFor(/detached from (exe_[0-9a-z]+); it keeps running/, "the detach");
    const executionId = /detached from (exe_[0-9a-z]+)/.exec(s.t.text())![1]!;
    expect((await s.over()).code).toBe(0);

    // The same size as before: only a nudge makes the kernel signal a change.
    const back = session(`attach ${executionId} -s tt`, size);
    await back.t.waitFor(`attached to ${executionId}`, "the attach");
    await back.t.waitFor("redrawn-30x100", "the program to redraw at the window's size, nothing typed");
    back.t.type("\x03");
    const end = await back.over();
    expect(end.sameMode).toBe(true);
  });

  it("all 256 byte values go in and come back out unchanged", async () => {
    const program = `stty raw -echo; echo READY; head -c 256 > got; printf '<<'; cat got; printf '>>'`;
    const s = session(`exec -it -s tt --detach-keys ctrl-q,ctrl-p -- sh -c ${quote(program)}`);
    await s.t.waitFor("READY", "the program in raw mode");
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    s.t.type(all);
    await s.t.waitFor(">>", "the bytes back");
    const end = await s.over();
    expect(end.code).toBe(0);
    expect(fs.readFileSync(path.join(workspace, "got")).equals(all)).toBe(true);
    const drawn = s.t.bytes();
    const start = drawn.indexOf("<<") + 2;
    expect(drawn.subarray(start, start + 256).equals(all)).toBe(true);
    expect(end.sameMode).toBe(true);
  });

  // What the client does with its own terminal does not depend on the driver: once, on `none`.
  const clientOnly = isolation === "none";

  if (clientOnly)
    it.each(["SIGTERM", "SIGHUP"] as const)(
      "%s to sbx: it ends restoring the mode, the shell keeps running",
      async (sig) => {
        const s = session("shell -s tt");
        await s.t.waitFor(/[$#] $/m, "the shell's prompt");
        process.kill(await s.pid(), sig);
        await s.t.waitFor(new RegExp(`${sig}: detached from exe_`), "sbx to say so");
        const end = await s.over();
        expect(end.code).toBe(sig === "SIGTERM" ? 143 : 129);
        expect(end.sameMode).toBe(true);
      },
    );

  if (clientOnly)
    it("the daemon killed (-9) while attached: sbx says so, exits 255, the mode restored", async () => {
      const s = session("shell -s tt");
      await s.t.waitFor(/[$#] $/m, "the shell's prompt");
      const [daemon] = daemonPids(home);
      expect(daemon).toBeDefined();
      process.kill(daemon!, "SIGKILL");
      await s.t.waitFor("the connection to the backend ended", "sbx to notice");
      const end = await s.over();
      expect(end.code).toBe(255);
      expect(end.sameMode).toBe(true);
    });

  it("sbx process start --tty, then sbx process attach: typed at, detached from, and its restart attached again", async () => {
    const program = 'echo "run-$SBX_PROCESS_GENERATION"; read line; echo "got-$line"; exit 1';
    const started = await runSbx(
      [
        "process",
        "start",
        "-s",
        "tt",
        "--tty",
        "--name",
        "repl",
        "--restart",
        "on-failure",
        "--max-restarts",
        "1",
        "--backoff",
        "100ms",
        "--",
        "sh",
        "-c",
        program,
      ],
      { home },
    );
    expect(started.code, started.stderr).toBe(0);
    expect(started.stderr).toContain("attach: sbx process attach prc_");
    const s = session("process attach repl -s tt --replay");
    await s.t.waitFor("run-0", "the first run's output");
    s.t.type("first\r");
    await s.t.waitFor("got-first", "the first run's answer");
    // Its policy starts it again, on a terminal of its own: the same session goes on.
    await s.t.waitFor("run-1", "the second run");
    s.t.type("\x10\x11");
    await s.t.waitFor("detached from prc_", "the detach");
    expect((await s.over()).code).toBe(0);
    const back = session("process attach repl -s tt");
    await back.t.waitFor("attached to prc_", "the attach");
    back.t.type("second\r");
    await back.t.waitFor("got-second", "the second run's answer");
    // Its restart budget spent, it ended for good: sbx exits as exec would (1).
    const end = await back.over();
    expect(end.code).toBe(1);
    expect(end.sameMode).toBe(true);
  });

  if (clientOnly)
    it("-t with stdin from a pipe is refused before anything is sent", async () => {
      const r = await runMain(["exec", "-it", "-s", "tt", "--", "sh"], { home, input: "echo hi\n" });
      expect(r.code).toBe(125);
      expect(r.stderr).toContain("the input device is not a TTY");
      const list = await runMain(["receipts", "list", "--json"], { home });
      expect(list.stdout).not.toContain('"sh"]');
    });

  if (isolation !== "bwrap") return;

  it("the shell is in the sandbox's environment: ps shows a process the sandbox runs, one hostname, one /tmp", async () => {
    const started = await runSbx(
      [
        "process",
        "start",
        "-s",
        "tt",
        "--name",
        "neighbour",
        "--",
        "sh",
        "-c",
        "echo here > /tmp/neighbour-was; exec sleep 300",
      ],
      { home },
    );
    expect(started.code, started.stderr).toBe(0);
    const s = session("shell -s tt");
    await s.t.waitFor(/[$#] $/m, "the shell's prompt");
    s.t.type("ps -eo pid,args | grep -c '[s]leep 300'; cat /tmp/neighbour-was; hostname; echo pid-$$\r");
    // (bash's bracketed-paste switch may come before the first answer: \x1b[?2004l\r)
    const m = await s.t.waitFor(/\r(\d+)\r\nhere\r\n(\S+)\r\npid-(\d+)\r\n/, "ps, /tmp and hostname inside");
    expect(m[1]).toBe("1");
    expect(m[2]).toBe("sbx");
    // A pid of the sandbox's own pid namespace (its init is 2), never the host's.
    expect(Number(m[3])).toBeLessThan(1000);
    s.t.type("exit 0\r");
    expect((await s.over()).code).toBe(0);
    expect((await runSbx(["process", "stop", "neighbour", "-s", "tt"], { home })).code).toBe(0);
  });

  itNeeding(
    ["root", "perl"],
    "attack: TIOCSTI from the sandbox's terminal pushes nothing into any terminal, the user's included; the host is unchanged",
    async () => {
      const marker = path.join(home, `tiocsti-${process.pid}`);
      const typed = `touch ${marker}\n`;
      // Into fd 0, 1, 2 and /dev/tty: each refused; what it would have typed, after sbx
      // exits, would be read by the user's shell from the outer terminal.
      const program = [
        `open(my $t, "+<", "/dev/tty") or die "tty: $!";`,
        `for my $fh (\\*STDIN, \\*STDOUT, \\*STDERR, $t) {`,
        `  for my $c (split //, ${JSON.stringify(typed)}) {`,
        `    if (!ioctl($fh, ${TIOCSTI}, $c)) { print "refused: $!\\n"; last }`,
        `    print "pushed\\n"; last`,
        `  }`,
        `}`,
      ].join(" ");
      const dir = path.join(home, `attack-${++run}`);
      fs.mkdirSync(dir);
      // After sbx, whatever input waits in the outer terminal is read without waiting (min 0 time 0).
      const script = [
        `${SBX} exec -it -s tt -- perl -e ${quote(program)}`,
        `echo "sbx-exit=$?"`,
        "stty -icanon min 0 time 0",
        `head -c 4096 > ${quote(`${dir}/pending`)}`,
        "echo attack-over",
      ].join("; ");
      const t = new OuterTerminal(script, { cwd: home, env: { ...sbxEnv(home), TERM: "xterm-256color" } });
      terminals.push(t);
      await t.waitFor("attack-over", "the attack and the read of the outer terminal's input");
      const text = t.text();
      expect(text).toContain("sbx-exit=0");
      expect(text.match(/refused: Operation not permitted/g)?.length).toBe(4);
      expect(text).not.toContain("pushed");
      expect(fs.readFileSync(`${dir}/pending`, "utf8")).toBe("");
      expect(fs.existsSync(marker)).toBe(false);
    },
  );

  it("sandbox stop ends the terminal session with the environment: sbx says so, the mode restored", async () => {
    const s = session("shell -s tt");
    await s.t.waitFor(/[$#] $/m, "the shell's prompt");
    s.t.type("echo ready-$((2+3))\r");
    await s.t.waitFor("ready-5", "the shell");
    const stopped = await runSbx(["sandbox", "stop", "tt"], { home });
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stderr).toMatch(/\d+ executions? cancelled/);
    await s.t.waitFor(/exe_[0-9a-z]+\) was cancelled/, "sbx to say its execution ended");
    const end = await s.over();
    expect(end.code).toBe(130);
    expect(end.sameMode).toBe(true);
  });
}

describeNeeding("pty", "terminal sessions on a real terminal, sandbox isolation none", () => terminalSessions("none"));
describeNeeding(["pty", "bwrap"], "terminal sessions on a real terminal, in a bwrap sandbox's environment", () =>
  terminalSessions("bwrap"),
);
