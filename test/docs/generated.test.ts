// The man page and completions are generated from the command tree; these tests fail
// when the shipped files drift from it, and load each script in its shell.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { EXIT_CODES, CLASSIFICATION_HELP } from "../../src/cli/commands/help-topics.js";
import { generateCompletion } from "../../src/cli/docs/completions.js";
import { COMPLETION_FILES, docsProgram, generatedFiles } from "../../src/cli/docs/generate.js";
import { MAN_SECTIONS, roffEscape } from "../../src/cli/docs/manpage.js";
import { allCommands, describeProgram } from "../../src/cli/docs/tree.js";
import { createBufferIO } from "../../src/cli/io/io.js";
import { main } from "../../src/cli/main.js";
import { tempDir } from "../support/temp.js";
import { itNeeding } from "../support/requirements.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const program = docsProgram();
const files = generatedFiles(program);
const man = files["man/sbx.1"]!;
const bashScript = files[COMPLETION_FILES.bash]!;
const zshScript = files[COMPLETION_FILES.zsh]!;
const fishScript = files[COMPLETION_FILES.fish]!;
const commands = allCommands(describeProgram(program));
const paths = commands.map((c) => c.path.join(" "));

const tmp = tempDir("sbx-docs-");
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/**
 * A stand-in `sbx` on PATH whose `receipts list` prints piped TSV, as the real one does,
 * and whose `__complete KIND -- WORDS` answers as the backend would: the processes of
 * sandbox web when the words say `-s web`.
 */
function fakeSbxBin(): string {
  const bin = path.join(tmp, "bin");
  fs.mkdirSync(bin, { recursive: true });
  const script = [
    "#!/bin/sh",
    'if [ "$1 $2" = "receipts list" ]; then',
    "  printf 'RECEIPT\\tCLASSIFICATION\\tEXIT\\tSANDBOX\\tCOMMAND\\tCREATED\\n'",
    "  printf 'rcp_0mhx1\\tsucceeded\\t0\\tdefault\\techo hi\\t2025-01-01T00:00:00Z\\n'",
    "  printf 'rcp_0mhx2\\tfailed\\t1\\tdefault\\tfalse\\t2025-01-01T00:00:01Z\\n'",
    "  printf 'rcp_9zzz\\tdispatched\\t-\\tdefault\\tmake\\t2025-01-01T00:00:02Z\\n'",
    "fi",
    'if [ "$1" = "__complete" ]; then',
    '  kind="$2"; shift 2; [ "$1" = "--" ] && shift',
    '  case "$kind" in',
    "    sandbox-name) printf 'default\\nweb\\n' ;;",
    '    process-name) case " $* " in *" -s web "*) echo server ;; *) echo worker ;; esac ;;',
    "    job-id) printf 'job_1a2b\\njob_1a9c\\ndeploy-1\\n' ;;",
    "  esac",
    "fi",
  ].join("\n");
  fs.writeFileSync(path.join(bin, "sbx"), `${script}\n`, { mode: 0o755 });
  return bin;
}

const shellQuote = (w: string) => `'${w.replace(/'/g, "'\\''")}'`;

/** Runs the generated bash completion for each command line (the last word is being completed). */
function bashComplete(lines: string[][]): string[][] {
  const file = path.join(tmp, "sbx.bash");
  fs.writeFileSync(file, bashScript);
  const script = [
    `source ${shellQuote(file)}`,
    "_t() {",
    '  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()',
    "  _sbx 2>/dev/null",
    '  printf "%s\\n" "${COMPREPLY[*]}"',
    "}",
    ...lines.map((words) => `_t ${words.map(shellQuote).join(" ")}`),
  ].join("\n");
  const r = spawnSync("bash", ["--norc", "--noprofile", "-c", script], {
    encoding: "utf8",
    env: { PATH: `${fakeSbxBin()}:${process.env.PATH ?? "/usr/bin:/bin"}`, HOME: tmp },
  });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  return r.stdout
    .replace(/\n$/, "")
    .split("\n")
    .map((l) => (l === "" ? [] : l.split(" ")));
}

describe("shipped files", () => {
  for (const [rel, content] of Object.entries(files)) {
    it(`${rel} is what the command tree generates`, () => {
      const file = path.join(ROOT, rel);
      const shipped = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
      if (shipped === content) return;
      const why =
        shipped === null
          ? "is missing"
          : `differs at line ${shipped.split("\n").findIndex((l, i) => l !== content.split("\n")[i]) + 1}`;
      expect.fail(`${rel} ${why} from what the command tree generates: run npm run generate`);
    });
  }

  it("sbx completion SHELL prints exactly the shipped scripts", async () => {
    for (const [shell, rel] of Object.entries(COMPLETION_FILES)) {
      const io = createBufferIO();
      const code = await main(["completion", shell], io, { SBX_HOME: path.join(tmp, "home"), NO_COLOR: "1" });
      expect(io.stderrText()).toBe("");
      expect(code).toBe(0);
      expect(io.stdoutText() === files[rel], `sbx completion ${shell} differs from ${rel}`).toBe(true);
    }
  });

  it("is deterministic: the same tree gives the same bytes, with no absolute paths", () => {
    expect(generatedFiles(docsProgram())).toEqual(files);
    for (const [rel, content] of Object.entries(files)) {
      expect(content.includes(ROOT), rel).toBe(false);
      expect(content.includes(os.homedir()), rel).toBe(false);
    }
  });
});

describe("man page", () => {
  it("has every section, in order", () => {
    const headings = man
      .split("\n")
      .filter((l) => l.startsWith(".SH "))
      .map((l) => l.slice(4));
    expect(headings).toEqual([...MAN_SECTIONS]);
  });

  it("documents every command path", () => {
    expect(paths.length).toBeGreaterThan(20);
    const missing = paths.filter((p) => !man.includes(`\n.SS sbx ${p}\n`));
    expect(missing).toEqual([]);
  });

  it("lists every exit code and classification under EXIT STATUS", () => {
    const section = man.slice(man.indexOf(".SH EXIT STATUS"), man.indexOf(".SH EXAMPLES"));
    for (const row of EXIT_CODES) expect(section).toContain(`.TP\n\\fB${roffEscape(row.code)}\\fR\n`);
    for (const [c] of CLASSIFICATION_HELP) expect(section).toContain(`\\fB${roffEscape(c)}\\fR`);
  });

  it("carries the version, not a date, in its header", () => {
    expect(man.split("\n")[1]).toBe(`.TH SBX 1 "sbx ${program.version()}" "sbx ${program.version()}" "User Commands"`);
  });

  it("escapes roff: control characters at line start, backslashes, minus signs", () => {
    expect(roffEscape("--json")).toBe("\\-\\-json");
    expect(roffEscape("a\\b")).toBe("a\\eb");
    expect(roffEscape("rcp_\u2026")).toBe("rcp_\\&...");
    const bodyLines = man.split("\n").filter((l) => !l.startsWith(".") && !l.startsWith("\\"));
    expect(bodyLines.filter((l) => l.startsWith("'"))).toEqual([]);
    expect(man).not.toMatch(/[^\x00-\x7f]/);
    expect(man).not.toMatch(/\n\n/);
  });

  itNeeding("groff", "renders with groff -man -ww without a warning", () => {
    const r = spawnSync("groff", ["-man", "-ww", "-z"], { input: man, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});

describe("completions", () => {
  it("name every command path in each shell", () => {
    const missing = (
      script: string,
      test: (lines: string[], parent: string, c: (typeof commands)[number]) => boolean,
    ) =>
      commands.filter((c) => !test(script.split("\n"), c.path.slice(0, -1).join(" "), c)).map((c) => c.path.join(" "));
    // bash: the word leads from its parent to its path, and the path has a spec.
    expect(
      missing(
        bashScript,
        (lines, parent, c) =>
          lines.some((l) => l.includes(`"${parent}|${c.name}"`) && l.endsWith(`REPLY="${c.path.join(" ")}" ;;`)) &&
          lines.includes(`    "${c.path.join(" ")}")`),
      ),
    ).toEqual([]);
    // zsh: a function per command, dispatched from its parent.
    expect(
      missing(
        zshScript,
        (lines, _parent, c) =>
          lines.includes(`_sbx_${c.path.join("_").replace(/[^A-Za-z0-9_]/g, "_")}() {`) &&
          lines.some((l) => l.trim().startsWith(`(${[c.name, ...c.aliases].join("|")}) _sbx_`)),
      ),
    ).toEqual([]);
    // fish: offered as a subcommand where its parent is.
    expect(
      missing(fishScript, (lines, parent, c) =>
        lines.some((l) => l.startsWith(`complete -c sbx -n '__sbx_arg "${parent}" 0' -a ${c.name} -d `)),
      ),
    ).toEqual([]);
  });

  it("bash: subcommands at two levels, aliases, option values and receipt ids", () => {
    const [
      top,
      receipts,
      listPrefix,
      classification,
      classificationF,
      equals,
      isolation,
      shell,
      ids,
      idPrefix,
      options,
    ] = bashComplete([
      ["sbx", "rece"],
      ["sbx", "receipts", ""],
      ["sbx", "sandbox", "l"],
      ["sbx", "receipts", "list", "--classification", ""],
      ["sbx", "--json", "receipts", "list", "--classification", "f"],
      ["sbx", "receipts", "list", "--classification", "=", "out"],
      ["sbx", "sandbox", "create", "--isolation", ""],
      ["sbx", "completion", ""],
      ["sbx", "receipts", "show", ""],
      ["sbx", "receipts", "wait", "--timeout", "30s", "rcp_0m"],
      ["sbx", "receipts", "list", "--l"],
    ]);
    expect(top).toEqual(["receipts"]);
    expect(receipts).toEqual([
      "list",
      "show",
      "wait",
      "refresh",
      "resubmit",
      "export",
      "prune",
      "verify",
      "key",
      "timeline",
    ]);
    expect(listPrefix).toEqual(["list", "ls"]);
    expect(classification).toContain("outcome_unknown");
    expect(classification).toContain("local_timeout");
    expect(classificationF).toEqual(["failed"]);
    expect(equals).toEqual(["outcome_unknown"]);
    expect(isolation).toEqual(["auto", "bwrap", "none"]);
    expect(shell).toEqual(["bash", "zsh", "fish"]);
    expect(ids).toEqual(["rcp_0mhx1", "rcp_0mhx2", "rcp_9zzz"]);
    expect(idPrefix).toEqual(["rcp_0mhx1", "rcp_0mhx2"]);
    expect(options).toEqual(["--limit"]);
  });

  it("bash: sandbox names, process names (of the -s sandbox) and job ids, from the backend", () => {
    const [sandboxes, sandboxFlag, sandboxEq, processes, processesOfWeb, jobs, jobsWait] = bashComplete([
      ["sbx", "sandbox", "show", ""],
      ["sbx", "exec", "-s", "w"],
      ["sbx", "jobs", "list", "--sandbox", "=", "d"],
      ["sbx", "process", "logs", ""],
      ["sbx", "process", "logs", "-s", "web", ""],
      ["sbx", "jobs", "show", "job_1a"],
      ["sbx", "jobs", "wait", "job_1a2b", "dep"],
    ]);
    expect(sandboxes).toEqual(["default", "web"]);
    expect(sandboxFlag).toEqual(["web"]);
    expect(sandboxEq).toEqual(["default"]);
    expect(processes).toEqual(["worker"]);
    expect(processesOfWeb).toEqual(["server"]);
    expect(jobs).toEqual(["job_1a2b", "job_1a9c"]);
    expect(jobsWait).toEqual(["deploy-1"]);
  });

  it("bash: after `sbx exec --` the words complete as a command line of their own", () => {
    const [afterDashDash, optionsAfter, optionsBefore] = bashComplete([
      ["sbx", "exec", "--json", "--", "bas"],
      ["sbx", "exec", "--", "ls", "--cla"],
      ["sbx", "exec", "--cl"],
    ]);
    expect(afterDashDash).toContain("bash");
    expect(optionsAfter).toEqual([]);
    expect(optionsBefore).toEqual(["--client-timeout"]);
  });

  itNeeding("zsh", "zsh: the #compdef file parses", () => {
    expect(zshScript.startsWith("#compdef sbx\n")).toBe(true);
    const file = path.join(tmp, "_sbx");
    fs.writeFileSync(file, zshScript);
    const r = spawnSync("zsh", ["-n", file], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  itNeeding("fish", "fish: parses, and completes subcommands and receipt ids", () => {
    const file = path.join(tmp, "sbx.fish");
    fs.writeFileSync(file, fishScript);
    expect(spawnSync("fish", ["--no-config", "-n", file], { encoding: "utf8" }).stderr).toBe("");
    const complete = (line: string) => {
      const r = spawnSync(
        "fish",
        ["--no-config", "-c", `source ${shellQuote(file)}; complete -C ${shellQuote(line)}`],
        {
          encoding: "utf8",
          env: { PATH: `${fakeSbxBin()}:${process.env.PATH ?? "/usr/bin:/bin"}`, HOME: tmp },
        },
      );
      expect(r.stderr).toBe("");
      return r.stdout
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => l.split("\t")[0]);
    };
    expect(complete("sbx receipts l")).toEqual(["list"]);
    expect(complete("sbx rece")).toEqual(["receipts"]);
    expect(complete("sbx receipts list --classification o")).toEqual(["outcome_unknown"]);
    expect(complete("sbx receipts show rcp_0")).toEqual(["rcp_0mhx1", "rcp_0mhx2"]);
    expect(complete("sbx sandbox rm w")).toEqual(["web"]);
    expect(complete("sbx process stop -s web s")).toEqual(["server"]);
    expect(complete("sbx jobs cancel job_1a")).toEqual(["job_1a2b", "job_1a9c"]);
  });

  it("refuses to generate for an unknown shell", () => {
    expect(() => generateCompletion(program, "tcsh" as "bash")).toThrow();
  });
});
