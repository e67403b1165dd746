// Shell completions generated from the commander tree: every command path, alias and
// option, enumerated values (declareChoices, Option.choices), receipt ids read from the
// local store at completion time, and the command line after `sbx exec --`.
// The scripts are deterministic: no times, no absolute paths.

import type { Command } from "commander";
import type { ValueCompletion } from "../command.js";
import {
  allCommands,
  type ArgumentDoc,
  type CommandDoc,
  describeProgram,
  globalOptions,
  type OptionDoc,
  optionsAt,
} from "./tree.js";

import { SHELLS, type Shell } from "./shells.js";

/** Where each completion is installed; also printed in the scripts' headers. */
export const INSTALL: Record<Shell, string> = {
  bash: "sbx completion bash > ~/.local/share/bash-completion/completions/sbx",
  zsh: 'sbx completion zsh > "${fpath[1]}/_sbx"   # or any directory in $fpath, then restart zsh',
  fish: "sbx completion fish > ~/.config/fish/completions/sbx.fish",
};

/** The command the scripts run to list receipt ids: piped, it prints TSV with a header row. */
const RECEIPT_IDS_COMMAND = "sbx receipts list --limit 50";
/** The command the scripts run for what the backend knows: KIND, then the line so far after --. */
const BACKEND_WORDS_COMMAND = "sbx __complete";

interface Tree {
  root: CommandDoc;
  commands: CommandDoc[];
  globals: OptionDoc[];
}

function readTree(program: Command): Tree {
  const root = describeProgram(program);
  const commands = [root, ...allCommands(root)];
  const tree = { root, commands, globals: globalOptions(program) };
  checkWords(tree);
  return tree;
}

const PLAIN_WORD = /^[A-Za-z0-9_][A-Za-z0-9_.:@%+=,-]*$/;

/** Names and enumerated values go into scripts unquoted; refuse anything that would need quoting. */
function checkWords(tree: Tree): void {
  const words = tree.commands.flatMap((c) => [
    ...(c.path.length ? [c.name, ...c.aliases] : []),
    ...optionsAt(tree.globals, c).flatMap((o) => [...o.names.map((n) => n.replace(/^-+/, "")), ...(o.choices ?? [])]),
    ...c.arguments.flatMap((a) => a.choices ?? []),
  ]);
  const bad = words.find((w) => !PLAIN_WORD.test(w));
  if (bad !== undefined) throw new Error(`completion: ${JSON.stringify(bad)} is not a plain word`);
}

const key = (c: CommandDoc) => c.path.join(" ");
const oneLine = (s: string) => s.replace(/\s*\n\s*/g, " ").trim();

/** What a value completes to: listed words, or something computed when completing. */
type ValueSpec = { kind: "words"; words: readonly string[] } | { kind: ValueCompletion };

function valueSpecOf(x: OptionDoc | ArgumentDoc): ValueSpec | undefined {
  if (x.choices !== undefined && x.choices.length > 0) return { kind: "words", words: x.choices };
  return x.completes === undefined ? undefined : { kind: x.completes };
}

function header(comment: string, shell: Shell): string[] {
  return [
    `${comment} ${shell} completion for sbx`,
    `${comment} Generated from sbx's command tree by \`npm run generate\`; do not edit.`,
    `${comment} Install: ${INSTALL[shell]}`,
  ];
}

export function generateCompletion(program: Command, shell: Shell): string {
  const generate = { bash, zsh, fish }[shell];
  if (generate === undefined)
    throw new Error(`no completion for ${JSON.stringify(shell)}: one of ${SHELLS.join(", ")}`);
  return `${generate(readTree(program)).join("\n")}\n`;
}

// ---------------------------------------------------------------------------------
// bash: one `complete -F` function over generated lookup tables.

const bashWord = (s: string) => `"${s.replace(/["\\$`]/g, "\\$&")}"`;

function bash(tree: Tree): string[] {
  const out = [...header("#", "bash"), ""];

  out.push("# _sbx_subcommand PATH WORD: succeeds when WORD names a command under PATH; REPLY is its path.");
  out.push("_sbx_subcommand() {");
  out.push('  case "$1|$2" in');
  for (const c of tree.commands) {
    for (const s of c.subcommands) {
      const pats = [s.name, ...s.aliases].map((n) => bashWord(`${key(c)}|${n}`)).join(" | ");
      out.push(`    ${pats}) REPLY=${bashWord(key(s))} ;;`);
    }
  }
  out.push("    *) return 1 ;;");
  out.push("  esac");
  out.push("}");
  out.push("");

  out.push("# _sbx_spec PATH: the subcommands, options, options that read a value, and arguments at PATH.");
  out.push("_sbx_spec() {");
  out.push('  case "$1" in');
  for (const c of tree.commands) {
    const opts = optionsAt(tree.globals, c);
    const args = c.arguments;
    out.push(`    ${bashWord(key(c))})`);
    out.push(`      _sbx_commands=${bashWord(c.subcommands.flatMap((s) => [s.name, ...s.aliases]).join(" "))}`);
    out.push(`      _sbx_options=${bashWord(opts.flatMap((o) => o.names).join(" "))}`);
    out.push(
      `      _sbx_valued=${bashWord(
        opts
          .filter((o) => o.takesValue === "required")
          .flatMap((o) => o.names)
          .join(" "),
      )}`,
    );
    out.push(`      _sbx_nargs=${args.length} _sbx_variadic=${args.at(-1)?.variadic ? 1 : 0}`);
    out.push("      ;;");
  }
  out.push("  esac");
  out.push("}");
  out.push("");

  out.push("# _sbx_values PATH TARGET: how the value of option TARGET (or of argument #N) completes.");
  out.push("_sbx_values() {");
  out.push("  _sbx_kind=none _sbx_words=");
  out.push('  case "$1|$2" in');
  for (const c of tree.commands) {
    const targets: [string, ValueSpec | undefined][] = [
      ...optionsAt(tree.globals, c).flatMap((o) =>
        o.names.map((n): [string, ValueSpec | undefined] => [n, valueSpecOf(o)]),
      ),
      ...c.arguments.map((a, i): [string, ValueSpec | undefined] => [`#${i}`, valueSpecOf(a)]),
    ];
    for (const [target, v] of targets) {
      if (v === undefined) continue;
      const set =
        v.kind === "words" ? `_sbx_kind=words _sbx_words=${bashWord(v.words.join(" "))}` : `_sbx_kind=${v.kind}`;
      out.push(`    ${bashWord(`${key(c)}|${target}`)}) ${set} ;;`);
    }
  }
  out.push("  esac");
  out.push("}");
  out.push("");

  out.push(
    "# Receipt ids from the local store: the first column of piped `receipts list`, header skipped.",
    "# Bounded (50) and silent when sbx is missing or fails.",
    "_sbx_receipt_ids() {",
    "  local id rest header=1",
    "  while IFS=$'\\t' read -r id rest; do",
    "    if ((header)); then header=0; continue; fi",
    "    printf '%s\\n' \"$id\"",
    `  done < <(command ${RECEIPT_IDS_COMMAND} 2>/dev/null </dev/null)`,
    "}",
    "",
    "# What the backend knows (sandbox names, process names, job ids), given the line so far",
    "# (its -s picks the sandbox). Never starts the daemon; silent when it cannot be asked.",
    "_sbx_backend_words() {",
    `  command ${BACKEND_WORDS_COMMAND} "$1" -- "\${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null </dev/null`,
    "}",
    "",
    "# _sbx_reply: COMPREPLY from the lines on stdin (mapfile is not in bash 3.2).",
    "_sbx_reply() {",
    "  local line",
    "  COMPREPLY=()",
    '  while IFS= read -r line; do COMPREPLY+=("$line"); done',
    "}",
    "",
    "# _sbx_complete_value PREFIX: fills COMPREPLY from _sbx_kind/_sbx_words for $cur.",
    "_sbx_complete_value() {",
    '  case "$_sbx_kind" in',
    '    words) _sbx_reply < <(compgen -W "$_sbx_words" -- "$cur") ;;',
    '    receipt-id) _sbx_reply < <(compgen -W "$(_sbx_receipt_ids)" -- "$cur") ;;',
    '    sandbox-name | process-name | job-id) _sbx_reply < <(compgen -W "$(_sbx_backend_words "$_sbx_kind")" -- "$cur") ;;',
    "    file)",
    "      compopt -o filenames 2>/dev/null",
    '      _sbx_reply < <(compgen -f -- "$cur")',
    "      ;;",
    "    *) COMPREPLY=() ;;",
    "  esac",
    '  if [[ -n $1 ]]; then COMPREPLY=("${COMPREPLY[@]/#/$1}"); fi',
    "}",
    "",
    "# _sbx_command_line N: completes words N.. as a command line of their own (sbx exec -- ...).",
    "_sbx_command_line() {",
    "  if declare -F _command_offset >/dev/null; then",
    '    _command_offset "$1"',
    "  elif ((COMP_CWORD == $1)); then",
    '    _sbx_reply < <(compgen -c -- "$cur" | sort -u)',
    "  else",
    "    compopt -o default 2>/dev/null",
    '    _sbx_reply < <(compgen -f -- "$cur")',
    "  fi",
    "}",
    "",
    "_sbx() {",
    '  local cur="${COMP_WORDS[COMP_CWORD]}" path="" word REPLY',
    "  local _sbx_commands _sbx_options _sbx_valued _sbx_nargs _sbx_variadic _sbx_kind _sbx_words",
    "  local -i i npos=0 first=0 skip=0 glue=0 dashdash=0",
    "  COMPREPLY=()",
    "  for ((i = 1; i < COMP_CWORD; i++)); do",
    '    word="${COMP_WORDS[i]}"',
    "    # bash splits --option=value at the '=': the word after it belongs to the option.",
    '    if [[ $word == "=" ]]; then glue=1 skip=0; continue; fi',
    "    if ((glue)); then glue=0; continue; fi",
    "    if ((skip)); then skip=0; continue; fi",
    "    if ((dashdash)); then npos+=1; continue; fi",
    '    case "$word" in',
    "      --) dashdash=i first=i+1 ;;",
    "      --*=*) ;;",
    "      -?*)",
    '        _sbx_spec "$path"',
    '        if [[ " $_sbx_valued " == *" $word "* ]]; then skip=1; fi',
    "        ;;",
    "      *)",
    '        if ((npos == 0)) && _sbx_subcommand "$path" "$word"; then',
    '          path="$REPLY"',
    "        else",
    "          ((npos == 0)) && first=i",
    "          npos+=1",
    "        fi",
    "        ;;",
    "    esac",
    "  done",
    '  _sbx_spec "$path"',
    "",
    "  # The value of an option: `--opt value`, `--opt=value` split at '=', or `--opt=value` whole.",
    '  local option="" prefix=""',
    '  if [[ $cur == "=" ]] && ((skip)); then',
    '    option="${COMP_WORDS[COMP_CWORD - 1]}" cur=""',
    "  elif ((glue)) && ((COMP_CWORD >= 3)); then",
    '    option="${COMP_WORDS[COMP_CWORD - 2]}"',
    "  elif ((skip)); then",
    '    option="${COMP_WORDS[COMP_CWORD - 1]}"',
    "  elif ((!dashdash)) && [[ $cur == --*=* ]]; then",
    '    option="${cur%%=*}" prefix="${cur%%=*}=" cur="${cur#*=}"',
    "  fi",
    "  if [[ -n $option ]]; then",
    '    _sbx_values "$path" "$option"',
    '    _sbx_complete_value "$prefix"',
    "    return 0",
    "  fi",
    "",
    "  if ((!dashdash)) && [[ $cur == -* ]]; then",
    '    _sbx_reply < <(compgen -W "$_sbx_options" -- "$cur")',
    "    return 0",
    "  fi",
    "  if ((npos == 0 && !dashdash)) && [[ -n $_sbx_commands ]]; then",
    '    _sbx_reply < <(compgen -W "$_sbx_commands" -- "$cur")',
    "    return 0",
    "  fi",
    "",
    "  # A positional argument; the last one may repeat.",
    "  local -i index=npos",
    "  if ((index >= _sbx_nargs)); then",
    "    ((_sbx_variadic)) || return 0",
    "    index=_sbx_nargs-1",
    "  fi",
    '  _sbx_values "$path" "#$index"',
    "  if [[ $_sbx_kind == command ]]; then",
    "    ((first)) || first=COMP_CWORD",
    '    _sbx_command_line "$first"',
    "  else",
    '    _sbx_complete_value ""',
    "  fi",
    "  return 0",
    "}",
    "",
    "complete -F _sbx sbx",
  );
  return out;
}

// ---------------------------------------------------------------------------------
// zsh: a native #compdef file, one _arguments function per command.

/** Text inside a single-quoted zsh word. */
const zq = (s: string) => s.replace(/'/g, "'\\''");
/** An _arguments description in [...]. */
const zDesc = (s: string) => oneLine(s).replace(/[\\[\]]/g, "\\$&");
/** An _arguments message or _describe name (colons separate fields). */
const zField = (s: string) => s.replace(/[\\:]/g, "\\$&");
const zFunc = (c: CommandDoc) => ["_sbx", ...c.path].join("_").replace(/[^A-Za-z0-9_]/g, "_");

function zAction(v: ValueSpec | undefined): string {
  if (v === undefined) return " ";
  switch (v.kind) {
    case "words":
      return `(${v.words.join(" ")})`;
    case "receipt-id":
      return "_sbx_receipt_ids";
    case "sandbox-name":
    case "process-name":
    case "job-id":
      return `_sbx_backend_words ${v.kind}`;
    case "file":
      return "_files";
    case "command":
      return "_sbx_command_line";
  }
}

function zOptionSpecs(opts: OptionDoc[]): string[] {
  return opts.flatMap((o) => {
    const group = opts.filter((p) => p.attribute === o.attribute).flatMap((p) => p.names);
    const exclusion = o.repeatable ? "*" : `(${group.join(" ")})`;
    const value =
      o.takesValue === "none"
        ? ""
        : `:${o.takesValue === "optional" ? ":" : ""}${zField(o.valueName ?? "value")}:${zAction(valueSpecOf(o))}`;
    return o.names.map((n) => `'${zq(`${exclusion}${n}[${zDesc(o.description)}]${value}`)}'`);
  });
}

function zArgumentSpecs(args: ArgumentDoc[]): string[] {
  return args.map((a, i) => {
    const v = valueSpecOf(a);
    if (a.variadic) {
      // The rest of the line as a command of its own: `sbx exec -- make test`.
      if (v?.kind === "command") return "'*::arguments:_sbx_command_line'";
      return `'*:${zq(zField(a.name))}:${zq(zAction(v))}'`;
    }
    return `'${i + 1}:${a.required ? "" : ":"}${zq(zField(a.name))}:${zq(zAction(v))}'`;
  });
}

function zsh(tree: Tree): string[] {
  const out = ["#compdef sbx", ...header("#", "zsh"), ""];
  out.push(
    "# Receipt ids from the local store: the first column of piped `receipts list`, header skipped.",
    "# Bounded (50) and silent when sbx is missing or fails.",
    "_sbx_receipt_ids() {",
    "  local -a ids",
    `  ids=(\${\${(f)"$(_call_program receipt-ids ${RECEIPT_IDS_COMMAND} 2>/dev/null </dev/null)"}[2,-1]%%$'\\t'*})`,
    "  _wanted receipt-ids expl 'receipt id' compadd -a ids",
    "}",
    "",
    "# What the backend knows (sandbox names, process names, job ids), given the line so far",
    "# (its -s picks the sandbox). Never starts the daemon; silent when it cannot be asked.",
    "# The kind is the last argument: _arguments puts its own options (-J …) before it.",
    "_sbx_backend_words() {",
    "  local kind=${argv[-1]}",
    "  local -a found",
    `  found=(\${(f)"$(_call_program $kind ${BACKEND_WORDS_COMMAND} $kind -- \${(q)words[2,CURRENT-1]} 2>/dev/null </dev/null)"})`,
    '  _wanted $kind expl "${kind//-/ }" compadd -a found',
    "}",
    "",
    "# The arguments as a command line of their own (sbx exec -- make test); the -- is not part of it.",
    "_sbx_command_line() {",
    "  if [[ $words[1] == -- ]]; then",
    "    shift words",
    "    (( CURRENT-- ))",
    "  fi",
    "  _normal",
    "}",
  );
  for (const c of tree.commands) {
    const name = ["sbx", ...c.path].join(" ");
    const specs = [...zOptionSpecs(optionsAt(tree.globals, c))];
    out.push("");
    out.push(`${zFunc(c)}() {`);
    if (c.subcommands.length === 0) {
      specs.push(...zArgumentSpecs(c.arguments));
      out.push("  _arguments -s -S \\");
      out.push(specs.map((s) => `    ${s}`).join(" \\\n"));
      out.push("}");
      continue;
    }
    // (-): once the subcommand is named, the options that follow are the subcommand's.
    specs.push("'(-): :->command'", "'(-)*:: :->argument'");
    out.push('  local curcontext="$curcontext" state state_descr line ret=1');
    out.push("  typeset -A opt_args");
    out.push("  _arguments -C -s \\");
    out.push(`${specs.map((s) => `    ${s}`).join(" \\\n")} && ret=0`);
    out.push("  case $state in");
    out.push("    (command)");
    out.push("      local -a commands=(");
    for (const s of c.subcommands) {
      for (const n of [s.name, ...s.aliases]) {
        const what = n === s.name ? s.summary : `${s.summary} (alias of ${s.name})`;
        out.push(`        '${zq(`${zField(n)}:${oneLine(what)}`)}'`);
      }
    }
    out.push("      )");
    out.push(`      _describe -t commands '${zq(`${name} command`)}' commands && ret=0`);
    out.push("      ;;");
    out.push("    (argument)");
    out.push(`      curcontext="\${curcontext%:*:*}:${["sbx", ...c.path].join("-")}-$words[1]:"`);
    out.push("      case $words[1] in");
    for (const s of c.subcommands) {
      out.push(`        (${[s.name, ...s.aliases].join("|")}) ${zFunc(s)} && ret=0 ;;`);
    }
    out.push("      esac");
    out.push("      ;;");
    out.push("  esac");
    out.push("  return ret");
    out.push("}");
  }
  out.push(
    "",
    "# Autoloaded from $fpath, this file is the body of _sbx: run it. Sourced, register it.",
    'if [[ "$funcstack[1]" == _sbx ]]; then',
    '  _sbx "$@"',
    "elif (( $+functions[compdef] )); then",
    "  compdef _sbx sbx",
    "fi",
  );
  return out;
}

// ---------------------------------------------------------------------------------
// fish: `complete -c sbx` lines whose conditions ask where on the command line we are.

/** A single-quoted fish string. */
const fq = (s: string) => `'${s.replace(/[\\']/g, "\\$&")}'`;

function fish(tree: Tree): string[] {
  const out = [...header("#", "fish"), ""];
  out.push("# __sbx_subcommand PATH WORD: succeeds when WORD names a command under PATH; sets __sbx_next.");
  out.push("function __sbx_subcommand --argument-names path word");
  out.push('    switch "$path|$word"');
  for (const c of tree.commands) {
    for (const s of c.subcommands) {
      out.push(`        case ${[s.name, ...s.aliases].map((n) => fq(`${key(c)}|${n}`)).join(" ")}`);
      out.push(`            set -g __sbx_next ${fq(key(s))}`);
    }
  }
  out.push("        case '*'");
  out.push("            return 1");
  out.push("    end");
  out.push("end");
  out.push("");
  out.push("# __sbx_takes_value PATH OPTION: whether OPTION at PATH reads the next word as its value.");
  out.push("function __sbx_takes_value --argument-names path option");
  out.push('    switch "$path|$option"');
  const valued = tree.commands.flatMap((c) =>
    optionsAt(tree.globals, c)
      .filter((o) => o.takesValue === "required")
      .flatMap((o) => o.names.map((n) => fq(`${key(c)}|${n}`))),
  );
  for (let i = 0; i < valued.length; i += 6)
    out.push(`        case ${valued.slice(i, i + 6).join(" ")}`, "            return 0");
  out.push("    end");
  out.push("    return 1");
  out.push("end");
  out.push(
    "",
    "# Reads the command line before the cursor: the command path, the arguments after it,",
    "# whether -- was seen, and whether the previous word is an option waiting for its value.",
    "function __sbx_walk",
    "    set -g __sbx_path ''",
    "    set -g __sbx_args",
    "    set -g __sbx_dashdash 0",
    "    set -g __sbx_pending 0",
    "    for word in (commandline -opc)[2..-1]",
    "        if test $__sbx_pending = 1",
    "            set __sbx_pending 0",
    "        else if test $__sbx_dashdash = 1",
    "            set -a __sbx_args $word",
    '        else if test "$word" = --',
    "            set __sbx_dashdash 1",
    "        else if string match -qr -- '^--.*=' $word",
    "            continue",
    "        else if string match -qr -- '^-.' $word",
    '            __sbx_takes_value "$__sbx_path" $word; and set __sbx_pending 1',
    '        else if test (count $__sbx_args) = 0; and __sbx_subcommand "$__sbx_path" $word',
    "            set __sbx_path $__sbx_next",
    "        else",
    "            set -a __sbx_args $word",
    "        end",
    "    end",
    "end",
    "",
    "# __sbx_at PATH: the command line is at PATH, before any -- (options apply).",
    "function __sbx_at",
    "    __sbx_walk",
    '    test "$__sbx_path" = "$argv[1]"; and test $__sbx_dashdash = 0',
    "end",
    "",
    "# __sbx_arg PATH N [more]: the word being typed is argument N at PATH (or any after it, with more).",
    "function __sbx_arg",
    "    __sbx_walk",
    '    test "$__sbx_path" = "$argv[1]"; and test $__sbx_pending = 0; or return 1',
    '    if test "$argv[3]" = more',
    "        test (count $__sbx_args) -ge $argv[2]",
    "    else",
    "        test (count $__sbx_args) -eq $argv[2]",
    "    end",
    "end",
    "",
    "# Receipt ids from the local store: the first column of piped `receipts list`, header skipped.",
    "# Bounded (50) and silent when sbx is missing or fails.",
    "function __sbx_receipt_ids",
    `    set -l rows (command ${RECEIPT_IDS_COMMAND} 2>/dev/null </dev/null)`,
    "    string replace -r -- '\\t.*' '' $rows[2..-1]",
    "end",
    "",
    "# What the backend knows (sandbox names, process names, job ids), given the line so far",
    "# (its -s picks the sandbox). Never starts the daemon; silent when it cannot be asked.",
    "function __sbx_backend_words",
    `    command ${BACKEND_WORDS_COMMAND} $argv[1] -- (commandline -opc)[2..-1] 2>/dev/null </dev/null`,
    "end",
    "",
    "# The arguments as a command line of their own (sbx exec -- make test).",
    "function __sbx_command_line",
    "    __sbx_walk",
    "    complete -C (string join ' ' -- (string escape -- $__sbx_args) (commandline -ct))",
    "end",
    "",
    "complete -c sbx -f",
  );

  const valueFlags = (v: ValueSpec | undefined): string[] => {
    if (v === undefined) return [];
    switch (v.kind) {
      case "words":
        return ["-a", fq(v.words.join(" "))];
      case "receipt-id":
        return ["-a", fq("(__sbx_receipt_ids)")];
      case "sandbox-name":
      case "process-name":
      case "job-id":
        return ["-a", fq(`(__sbx_backend_words ${v.kind})`)];
      case "file":
        return ["-F"];
      case "command":
        return ["-a", fq("(__sbx_command_line)")];
    }
  };
  const optionLine = (cond: string, o: OptionDoc) =>
    [
      "complete -c sbx",
      ...(cond === "" ? [] : ["-n", fq(cond)]),
      ...(o.short ? ["-s", o.short.slice(1)] : []),
      ...(o.long ? ["-l", o.long.slice(2)] : []),
      // -x: a value follows and it is not a file name; -r with -F: a file name follows.
      ...(o.takesValue === "required" ? [o.completes === "file" ? "-r" : "-x"] : []),
      ...valueFlags(valueSpecOf(o)),
      "-d",
      fq(oneLine(o.description)),
    ].join(" ");

  for (const c of tree.commands) {
    const at = `"${key(c)}"`;
    out.push("", `# ${["sbx", ...c.path].join(" ")}`);
    for (const s of c.subcommands) {
      for (const n of [s.name, ...s.aliases]) {
        const what = n === s.name ? s.summary : `${s.summary} (alias of ${s.name})`;
        out.push(`complete -c sbx -n ${fq(`__sbx_arg ${at} 0`)} -a ${n} -d ${fq(oneLine(what))}`);
      }
    }
    for (const o of optionsAt(tree.globals, c)) out.push(optionLine(`__sbx_at ${at}`, o));
    c.arguments.forEach((a, i) => {
      const flags = valueFlags(valueSpecOf(a));
      if (flags.length === 0) return;
      const cond = `__sbx_arg ${at} ${i}${a.variadic ? " more" : ""}`;
      // A command line of its own brings its own descriptions.
      const what = a.completes === "command" ? [] : ["-d", fq(oneLine(a.description))];
      out.push(["complete -c sbx -n", fq(cond), ...flags, ...what].join(" "));
    });
  }
  return out;
}
