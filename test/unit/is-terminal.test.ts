// isTerminal (src/platform/stdio.ts) as the release binary asks it: on Bun through the
// native check node:tty's isatty calls, without loading node:tty. It must say what
// isatty(3) says — a terminal on a real PTY (script(1) gives one), never on /dev/null
// (a character device that is not a terminal), a pipe or a file — and agree with
// node:tty's own answer in the same process.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { BUN } from "../support/binary.js";
import { REPO_ROOT } from "../support/cli.js";
import { itNeeding } from "../support/requirements.js";
import { tempDir } from "../support/temp.js";

const SCRIPT = `
import fs from "node:fs";
import { isTerminal } from ${JSON.stringify(path.join(REPO_ROOT, "src", "platform", "stdio.ts"))};
const ours = [0, 1, 2].map((fd) => isTerminal(fd));
// node:tty only after ours were asked (loading it first would prove nothing about the binding).
const tty = await import("node:tty");
const theirs = [0, 1, 2].map((fd) => tty.isatty(fd));
fs.writeFileSync(process.argv[2], JSON.stringify({ bun: typeof Bun !== "undefined", ours, theirs }));
`;

interface Answer {
  bun: boolean;
  ours: boolean[];
  theirs: boolean[];
}

function setUp(): { dir: string; script: string; out: string } {
  const dir = tempDir("sbx-is-terminal-");
  const script = path.join(dir, "check.ts");
  fs.writeFileSync(script, SCRIPT);
  return { dir, script, out: path.join(dir, "answer.json") };
}

const read = (file: string) => JSON.parse(fs.readFileSync(file, "utf8")) as Answer;

itNeeding(["bun", "script"], "Bun: stdin, stdout and stderr on a PTY are terminals", () => {
  const { script, out } = setUp();
  const ran = spawnSync("script", ["-qec", `${BUN} ${script} ${out}`, "/dev/null"], {
    encoding: "utf8",
    cwd: REPO_ROOT,
    timeout: 60_000,
  });
  expect(ran.status, ran.stderr).toBe(0);
  expect(read(out)).toEqual({ bun: true, ours: [true, true, true], theirs: [true, true, true] });
});

itNeeding("bun", "Bun: /dev/null, a pipe and a file are not terminals", () => {
  const { dir, script, out } = setUp();
  const file = fs.openSync(path.join(dir, "stderr.txt"), "w");
  try {
    const ran = spawnSync(BUN, [script, out], { stdio: ["ignore", "pipe", file], cwd: REPO_ROOT, timeout: 60_000 });
    expect(ran.status, fs.readFileSync(path.join(dir, "stderr.txt"), "utf8")).toBe(0);
  } finally {
    fs.closeSync(file);
  }
  expect(read(out)).toEqual({ bun: true, ours: [false, false, false], theirs: [false, false, false] });
});
