#!/usr/bin/env node
// Terminal sessions (docs/protocol.md, "Terminals"), each next to a baseline measured
// in the same run, in turns:
//   - keystroke echo: one byte typed at a terminal, its echo back (median of 200), through
//     `sbx exec -it -- cat` (the echo is the sandbox terminal's own) and through a local
//     `script -qc cat` (a PTY without sbx);
//   - 100 MiB of `cat` through the terminal (`sbx exec -it`), through `sbx exec --stream`, and
//     through a local `script -qc cat` (a PTY without sbx).
// For the Node entry and the release binary, each on a daemon of its own, and in a
// sandbox of each driver: `none` (the terminal opened by the backend) and `bwrap` (opened
// inside the sandbox by its init, the keys and output through its io socket). The outer
// terminal is node-pty's, as the tests' is. The table goes to stdout and into
// BENCHMARKS.md between `<!-- bench:terminal -->` markers.
//
// Usage: node bench/terminal.mjs [--keys N] [--mib N] [--runs N] [--no-write]

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const pty = require("node-pty");
const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const keys = Number(flag("--keys")) || 200;
const mib = Number(flag("--mib")) || 100;
const runs = Number(flag("--runs")) || 3;
const write = !args.includes("--no-write");

const binary = path.join(root, "dist", "release", "sbx");
const RUNTIMES = [
  { name: "Node", argv: [process.execPath, "--", path.join(root, "bin", "sbx")] },
  ...(fs.existsSync(binary) ? [{ name: "binary", argv: [binary] }] : []),
];
/** bwrap where it runs here (a sandbox of it is created; where it cannot, the row is left out, said on stderr). */
const ISOLATIONS = ["none", ...(spawnSync("bwrap", ["--version"]).status === 0 ? ["bwrap"] : [])];
if (!ISOLATIONS.includes("bwrap")) console.error("terminal bench: bwrap is not installed here: no bwrap rows");
const quote = (a) => `'${String(a).replace(/'/g, "'\\''")}'`;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** A command line on a new terminal; resolves once it shows `ready`. */
function onTerminal(line, env, ready) {
  const t = pty.spawn("/bin/sh", ["-c", line], { cols: 80, rows: 24, env, encoding: null });
  let seen = Buffer.alloc(0);
  const listeners = new Set();
  t.onData((d) => {
    seen = Buffer.concat([seen, d]).subarray(-4096);
    for (const l of listeners) l(d);
  });
  const exited = new Promise((resolve) => t.onExit(resolve));
  const shown = new Promise((resolve, reject) => {
    const check = () => {
      if (seen.includes(ready)) {
        listeners.delete(check);
        resolve();
      }
    };
    listeners.add(check);
    exited.then(() => reject(new Error(`${line} ended before it showed ${ready}: ${seen.toString()}`)));
  });
  return { t, shown, exited, listeners };
}

/** Median ms from typing one byte to seeing it echoed, over `keys` bytes. */
async function echoLatency(line, env) {
  const s = onTerminal(line, env, "READY");
  await s.shown;
  const times = [];
  for (let i = 0; i < keys; i++) {
    const key = String.fromCharCode(97 + (i % 26));
    const echoed = new Promise((resolve) => {
      const l = (d) => {
        if (d.includes(key)) {
          s.listeners.delete(l);
          resolve();
        }
      };
      s.listeners.add(l);
    });
    const t0 = process.hrtime.bigint();
    s.t.write(key);
    await echoed;
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  s.t.write("\x04");
  s.t.kill("SIGKILL");
  return median(times);
}

/** Wall ms of a command line on a terminal until it ends (its output read as it comes). */
async function onTerminalWall(line, env) {
  const t0 = process.hrtime.bigint();
  const s = onTerminal(line, env, "\u0000never");
  s.shown.catch(() => {});
  await s.exited;
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function wall(line, env) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync("/bin/sh", ["-c", line], { env, stdio: ["ignore", "ignore", "pipe"] });
  if (r.status !== 0) throw new Error(`${line}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const rows = [];
for (const rt of RUNTIMES) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-bench-tty-"));
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    SBX_HOME: home,
    NO_COLOR: "1",
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
  };
  const sbx = rt.argv.map(quote).join(" ");
  try {
    for (const isolation of ISOLATIONS) {
      const tt = `tt-${isolation}`;
      wall(`${sbx} sandbox create ${tt} --isolation ${isolation} >/dev/null 2>&1`, env);
      const show = spawnSync("/bin/sh", ["-c", `${sbx} sandbox show ${tt} --json`], { env, encoding: "utf8" });
      const workspace = JSON.parse(show.stdout).host_workspace;
      // The file `cat` prints: lines of text, as a log would be.
      const big = path.join(workspace, "big.txt");
      const lineText = `${"0123456789abcdef".repeat(4)}\n`;
      const block = Buffer.from(lineText.repeat(Math.floor((1024 * 1024) / lineText.length) + 1)).subarray(
        0,
        1024 * 1024,
      );
      const fd = fs.openSync(big, "w");
      for (let i = 0; i < mib; i++) fs.writeSync(fd, block);
      fs.closeSync(fd);
      // The sandbox's own file (a bwrap sandbox of a root daemon runs as a uid of its own).
      const owner = fs.statSync(workspace);
      fs.chownSync(big, owner.uid, owner.gid);

      const echo = { sbx: [], script: [] };
      const cat = { tty: [], stream: [], script: [] };
      for (let r = 0; r < runs; r++) {
        echo.sbx.push(await echoLatency(`${sbx} exec -it -s ${tt} -- sh -c 'echo READY; exec cat'`, env));
        echo.script.push(await echoLatency(`script -qec "sh -c 'echo READY; exec cat'" /dev/null`, env));
        cat.tty.push(await onTerminalWall(`${sbx} exec -it -s ${tt} -- cat big.txt`, env));
        cat.stream.push(wall(`${sbx} exec -s ${tt} --stream -- cat big.txt`, env));
        cat.script.push(await onTerminalWall(`script -qec ${quote(`cat ${quote(big)}`)} /dev/null`, env));
      }
      rows.push({
        runtime: rt.name,
        isolation,
        echoSbx: median(echo.sbx),
        echoScript: median(echo.script),
        catTty: median(cat.tty),
        catStream: median(cat.stream),
        catScript: median(cat.script),
      });
      fs.rmSync(big, { force: true });
    }
  } finally {
    spawnSync("/bin/sh", ["-c", `${sbx} daemon stop >/dev/null 2>&1`], { env });
    fs.rmSync(home, { recursive: true, force: true });
  }
}

const f = (ms) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(0));
const table = [
  `Load when measured: ${os.loadavg()[0].toFixed(1)} (1 min), ${os.cpus().length} cores; medians of ${runs} runs (echo: each run the median of ${keys} keys).`,
  "",
  "| runtime | isolation | echo via sbx exec -it (ms) | echo via local script (ms) | added (ms) | cat " +
    `${mib} MiB via -it (ms) | via --stream (ms) | -it / --stream | via local script (ms) |`,
  "|---|---|---|---|---|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| ${r.runtime} | ${r.isolation} | ${f(r.echoSbx)} | ${f(r.echoScript)} | ${f(r.echoSbx - r.echoScript)} | ${f(r.catTty)} | ${f(r.catStream)} | ${(r.catTty / r.catStream).toFixed(2)}× | ${f(r.catScript)} |`,
  ),
].join("\n");
console.log(table);
if (write) {
  const file = path.join(root, "BENCHMARKS.md");
  const text = fs.readFileSync(file, "utf8");
  const begin = "<!-- bench:terminal -->";
  const end = "<!-- /bench:terminal -->";
  const i = text.indexOf(begin);
  const j = text.indexOf(end);
  if (i >= 0 && j > i) {
    fs.writeFileSync(file, `${text.slice(0, i + begin.length)}\n${table}\n${text.slice(j)}`);
  } else console.error(`BENCHMARKS.md has no ${begin} … ${end} markers: not written`);
}
