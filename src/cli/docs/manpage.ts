// The man page, sbx(1), generated from the command tree: every command with its
// arguments, options and examples, and the exit codes from help-topics. Deterministic:
// the header carries the version, never the date of the build.

import type { Command } from "commander";
import { CLASSIFICATION_HELP, EXIT_CODES, JOBS_EXIT_CODES, OTHER_COMMANDS_EXIT } from "../commands/help-topics.js";
import {
  allCommands,
  type ArgumentDoc,
  type CommandDoc,
  describeProgram,
  globalOptions,
  type OptionDoc,
} from "./tree.js";

/** The sections, in order; the tests check that each is present. */
export const MAN_SECTIONS = [
  "NAME",
  "SYNOPSIS",
  "DESCRIPTION",
  "COMMANDS",
  "OPTIONS",
  "ENVIRONMENT",
  "FILES",
  "EXIT STATUS",
  "EXAMPLES",
  "SEE ALSO",
] as const;

// Typographic characters the descriptions use, as groff names them (the page stays ASCII).
const GLYPHS: Record<string, string> = {
  "\u2026": "\\&...",
  "\u2014": "\\(em",
  "\u2013": "\\(en",
  "\u2018": "\\(oq",
  "\u2019": "\\(cq",
  "\u201c": "\\(lq",
  "\u201d": "\\(rq",
  "\u2192": "\\(->",
};

/**
 * Text for a roff line: backslashes printed as such, every `-` a minus (so flags and
 * commands copy as typed), non-ASCII as groff glyphs.
 */
export function roffEscape(text: string): string {
  let s = text.replace(/\\/g, "\\e").replace(/-/g, "\\-");
  s = s.replace(
    /[^\x00-\x7f]/gu,
    (ch) => GLYPHS[ch] ?? `\\[u${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}]`,
  );
  return s;
}

/** A line of running text: escaped, and protected when it would start with a control character. */
function textLine(text: string): string {
  const s = roffEscape(text);
  return /^[.']/.test(s) ? `\\&${s}` : s;
}

/** Running text where `code` spans are set in bold. */
function prose(text: string): string {
  const parts = text.split("`");
  // An unmatched backtick is kept as it is.
  if (parts.length % 2 === 0) return textLine(text);
  const s = parts.map((p, i) => (i % 2 === 1 ? `\\fB${roffEscape(p)}\\fR` : roffEscape(p))).join("");
  return /^[.']/.test(s) ? `\\&${s}` : s;
}

/**
 * A description as roff: lines are filled into paragraphs; blank lines separate
 * paragraphs; indented lines (tables in the text) are kept as they are.
 */
function paragraphs(text: string): string[] {
  const out: string[] = [];
  let literal = false;
  for (const raw of text.replace(/\s+$/, "").split("\n")) {
    const line = raw.replace(/\s+$/, "");
    if (line === "") {
      if (literal) out.push(".fi");
      literal = false;
      out.push(".PP");
      continue;
    }
    const indented = /^\s/.test(line);
    if (indented && !literal) out.push(".nf");
    if (!indented && literal) out.push(".fi");
    literal = indented;
    out.push(indented ? textLine(line) : prose(line));
  }
  if (literal) out.push(".fi");
  return out;
}

/** A block of preformatted help text (e.g. the fault grammar of `daemon run`). */
function literalBlock(text: string): string[] {
  return [".PP", ".nf", ...text.split("\n").map((l) => textLine(l.replace(/\s+$/, ""))), ".fi"];
}

const bold = (s: string) => `\\fB${roffEscape(s)}\\fR`;
const italic = (s: string) => `\\fI${roffEscape(s)}\\fR`;

/** `-s, --sandbox <id>` as `\fB\-s\fR, \fB\-\-sandbox\fR \fIid\fR`. */
function optionTerm(o: OptionDoc): string {
  const names = o.names.map(bold).join(", ");
  if (o.takesValue === "none" || o.valueName === undefined) return names;
  return o.takesValue === "optional" ? `${names} [${italic(o.valueName)}]` : `${names} ${italic(o.valueName)}`;
}

function optionItems(options: OptionDoc[]): string[] {
  return options.flatMap((o) => {
    const notes = [
      ...(o.choices ? [`one of: ${o.choices.join(", ")}`] : []),
      ...(o.repeatable && !/repeat/i.test(o.description) ? ["repeatable"] : []),
    ];
    return [".TP", optionTerm(o), prose([o.description, ...notes].join("; "))];
  });
}

function argumentItems(args: ArgumentDoc[]): string[] {
  return args.flatMap((a) => {
    const notes = a.choices ? [`one of: ${a.choices.join(", ")}`] : [];
    return [".TP", `${italic(a.name)}${a.variadic ? "\\&..." : ""}`, prose([a.description, ...notes].join("; "))];
  });
}

/** `[options] <id>` with the placeholders in italics. */
function usageLine(c: CommandDoc): string {
  const usage = roffEscape(c.usage).replace(/([<[])([^>\]]+)([>\]])/g, (_m, open, name) =>
    open === "<" ? `\\fI${name}\\fR` : `[\\fI${name}\\fR]`,
  );
  return `${bold(["sbx", ...c.path].join(" "))} ${usage}`;
}

function commandSection(c: CommandDoc): string[] {
  const out = [`.SS ${["sbx", ...c.path].join(" ")}`, usageLine(c)];
  if (c.aliases.length) out.push(".br", `Alias: ${c.aliases.map(bold).join(", ")}`);
  // The summary is shown too, unless the description already says it.
  const plain = (t: string) =>
    t
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, " ")
      .trim();
  if (c.summary && c.description && !plain(c.description).includes(plain(c.summary)))
    out.push(".PP", prose(`${c.summary.charAt(0).toUpperCase()}${c.summary.slice(1)}.`));
  out.push(".PP", ...paragraphs(c.description || c.summary));
  if (c.subcommands.length) {
    out.push(".PP", "Commands:");
    for (const s of c.subcommands) out.push(".TP", bold(s.name), prose(s.summary));
  }
  if (c.arguments.length) out.push(".PP", "Arguments:", ".RS", ...argumentItems(c.arguments), ".RE");
  if (c.options.length) out.push(".PP", "Options:", ".RS", ...optionItems(c.options), ".RE");
  for (const note of c.notes) out.push(...literalBlock(note));
  return out;
}

const ENVIRONMENT: ReadonlyArray<[string, string]> = [
  [
    "SBX_HOME",
    "When set, the one directory that holds everything: configuration, credentials, receipts, and the embedded backend's socket and data. Unset, configuration lives in `$XDG_CONFIG_HOME/sbx` and state in `$XDG_STATE_HOME/sbx`. A directory sbx uses must belong to you and be writable by nobody else; sbx refuses any other (exit 74). Symlinks in these paths are resolved once; one owned by another user (not you, not root) is refused (exit 74). When sbx creates a home, it says so once on stderr, with where (not with `--quiet`).",
  ],
  [
    "SBX_PROFILE",
    "The profile to use, unless `--profile` is given. The default profile is `local`, the embedded backend.",
  ],
  [
    "SBX_API_URL",
    "The backend URL (`https://host[:port]` or `unix:/path.sock`), unless `--api-url` is given; overrides the profile's URL.",
  ],
  [
    "SBX_API_KEY",
    "The API key to send, instead of the one stored for the profile. It is never written to a receipt or printed; error messages redact it. With `--api-url` or SBX_API_URL pointing elsewhere than the profile, only this key is sent there, never the profile's. A key is never sent over plain `http://` to a host other than loopback unless the profile was added with `--insecure`: sbx refuses before connecting (exit 125).",
  ],
  [
    "SBX_STORE_WAIT",
    "How long sbx waits for a receipt store that another process holds (e.g. 30s, 5m; default 2m). Past it, sbx gives up before sending anything (exit 75).",
  ],
  [
    "SBX_DAEMON_TOKEN",
    "The token `sbx daemon run --listen` requires of TCP clients, at least 32 characters (a shorter one is refused). Unset, a strong token is generated into the daemon directory's `token` file.",
  ],
  ["NO_COLOR", "When set and not empty, no colour (as `--no-color`)."],
  ["XDG_CONFIG_HOME", "Base directory for configuration when SBX_HOME is unset (default: `~/.config`)."],
  [
    "XDG_STATE_HOME",
    "Base directory for state (receipts, the daemon) when SBX_HOME is unset (default: `~/.local/state`).",
  ],
];

const FILES: ReadonlyArray<[string, string]> = [
  ["CONFIG/config.json", "Profiles, the current profile and settings (`sbx config`)."],
  ["CONFIG/credentials.json", "API keys per profile, mode 0600. Keys are read from stdin, never from a flag."],
  [
    "STATE/receipts.db",
    "The receipt store (SQLite, WAL), mode 0600: every request sbx sent, written before it was sent, with its attempts and observations.",
  ],
  [
    "STATE/daemon/daemon.sock",
    "The embedded backend's Unix socket, mode 0600. When the path would be too long for a socket, it is placed in a private directory under the system's temporary directory instead.",
  ],
  ["STATE/daemon/daemon.pid", "The process id of the running embedded backend."],
  ["STATE/daemon/daemon.log", "The output of a backend started in the background (`sbx daemon start`, or on demand)."],
  ["STATE/daemon/backend.db", "The embedded backend's own database: sandboxes, executions and their event logs."],
  [
    "STATE/daemon/token",
    "The generated TCP token of `sbx daemon run --listen`, mode 0600, when SBX_DAEMON_TOKEN is unset.",
  ],
];

function environmentSection(): string[] {
  return [".SH ENVIRONMENT", ...ENVIRONMENT.flatMap(([name, text]) => [".TP", bold(name), prose(text)])];
}

function filesSection(): string[] {
  return [
    ".SH FILES",
    prose(
      "CONFIG is `$SBX_HOME` when it is set, otherwise `$XDG_CONFIG_HOME/sbx` (`~/.config/sbx`). STATE is `$SBX_HOME` when it is set, otherwise `$XDG_STATE_HOME/sbx` (`~/.local/state/sbx`). Directories are created private to their user (0700).",
    ),
    ...FILES.flatMap(([file, text]) => [".TP", italic(file), prose(text)]),
  ];
}

function exitStatusSection(): string[] {
  return [
    ".SH EXIT STATUS",
    prose(
      "`sbx exec`, `sbx receipts wait` and `sbx receipts resubmit` exit with a code that says what is known about the command (`sbx help exit-codes`):",
    ),
    ...EXIT_CODES.flatMap((r) => [
      ".TP",
      bold(r.code),
      ...(r.classification === "-" ? [] : [`${italic(r.classification)}:`]),
      prose(r.meaning),
    ]),
    ".PP",
    prose(
      "sbx's own failures never borrow a code the command could have exited with. Before anything was sent: 75 when transient (a receipt store another process holds for longer than SBX_STORE_WAIT), 74 when the receipt store is unusable (disk full, corrupt, unreadable; the message names the file), 78 for a configuration file that does not parse, 70 for a bug. After sending, a local failure is 255 and loses nothing received: the output is printed, and an answer that cannot be stored is written to stderr as JSON.",
    ),
    ".PP",
    prose(
      "`sbx jobs submit --wait` and `sbx jobs wait` exit with what their jobs did; `sbx jobs run` exits like `sbx exec`:",
    ),
    ...JOBS_EXIT_CODES.flatMap((r) => [".TP", bold(r.code), `${italic(r.classification)}:`, prose(r.meaning)]),
    ".PP",
    prose(OTHER_COMMANDS_EXIT),
    ".SS Classifications",
    prose(
      "Every receipt carries one classification (`sbx receipts list --classification C`). Only the first four are confirmed; every other one prints, on stderr, what is known and the exact next command.",
    ),
    ...CLASSIFICATION_HELP.flatMap(([c, meaning]) => [".TP", bold(c), prose(meaning)]),
  ];
}

function examplesSection(root: CommandDoc): string[] {
  const seen = new Set<string>();
  const out = [".SH EXAMPLES"];
  for (const c of [root, ...allCommands(root)]) {
    for (const e of c.examples) {
      if (seen.has(e.command)) continue;
      seen.add(e.command);
      out.push(".TP", bold(e.command), prose(e.description));
    }
  }
  return out;
}

function nameLine(root: CommandDoc): string {
  const first = (root.description.split("\n")[0] ?? "").replace(/\.$/, "");
  return `sbx \\- ${roffEscape(first.charAt(0).toLowerCase() + first.slice(1))}`;
}

export function generateManPage(program: Command): string {
  const root = describeProgram(program);
  const version = program.version() ?? "0.0.0";
  const commands = allCommands(root);
  const lines = [
    ".\\\" Generated from sbx's command tree by `npm run generate`; do not edit.",
    `.TH SBX 1 "sbx ${version}" "sbx ${version}" "User Commands"`,
    ".nh",
    ".ad l",
    ".SH NAME",
    nameLine(root),
    ".SH SYNOPSIS",
    `${bold("sbx")} [${italic("global options")}] ${italic("command")} [${italic("options")}] [${italic("arguments")}]`,
    ".br",
    `${bold("sbx exec")} [${italic("options")}] ${bold("--")} ${italic("command")} [${italic("argument")}\\&...]`,
    ".br",
    `${bold("sbx help")} [${italic("command")}\\&...\\ |\\ ${italic("topic")}]`,
    ".SH DESCRIPTION",
    ...paragraphs(root.description),
    ".PP",
    prose(
      "A receipt is named by its id (`rcp_...`), its execution id, its idempotency key, or a unique prefix of any of them. Every command takes the global options below; `sbx help COMMAND` and `sbx COMMAND --help` describe one command.",
    ),
    ".PP",
    "Commands:",
    ...root.subcommands.flatMap((c) => [".TP", bold(c.name), prose(c.summary)]),
    ".SH COMMANDS",
    ...commands.flatMap(commandSection),
    ".SH OPTIONS",
    prose("These apply to every command."),
    ...optionItems(globalOptions(program)),
    ...environmentSection(),
    ...filesSection(),
    ...exitStatusSection(),
    ...examplesSection(root),
    ".SH SEE ALSO",
    `${bold("sbx help exit-codes")},`,
    ".BR bwrap (1),",
    ".BR sh (1),",
    ".BR sqlite3 (1)",
  ];
  return `${lines.join("\n")}\n`;
}
