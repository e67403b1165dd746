#!/usr/bin/env node
// What a command costs the backend: one `POST /sandbox/default/execute {command: ["true"]}`
// over the daemon's Unix socket (no CLI start-up in it), against two checkouts' daemons
// in turns — e.g. this one (a live sandbox the command enters) and another (a bwrap
// built per command). Each daemon in its own SBX_HOME; medians of N rounds.
//
//   node bench/enter-cost.mjs OTHER_CHECKOUT [--runs N]
//
// Prints one line per checkout and the ratio; record it in BENCHMARKS.md with the load.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const other = process.argv[2];
if (!other) {
  process.stderr.write("usage: node bench/enter-cost.mjs OTHER_CHECKOUT [--runs N]\n");
  process.exit(2);
}
const at = process.argv.indexOf("--runs");
const runs = at > 0 ? Number(process.argv[at + 1]) : 41;

function daemon(checkout) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-enter-cost-"));
  const sbx = (args) =>
    spawnSync(process.execPath, [path.join(checkout, "bin", "sbx"), ...args], {
      env: { ...process.env, SBX_HOME: home },
      encoding: "utf8",
    });
  const started = sbx(["exec", "--", "true"]);
  if (started.status !== 0) throw new Error(`${checkout}: ${started.stderr}`);
  const status = JSON.parse(sbx(["daemon", "status", "--json"]).stdout);
  return { checkout, home, socket: status.socket, stop: () => sbx(["daemon", "stop"]) };
}

function execute(socketPath) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ command: ["true"] });
    const t0 = process.hrtime.bigint();
    const req = http.request(
      {
        socketPath,
        method: "POST",
        path: "/api/v1/sandbox/default/execute",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let text = "";
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () => {
          if (res.statusCode !== 200 || JSON.parse(text).exit_code !== 0) reject(new Error(text));
          else resolve(Number(process.hrtime.bigint() - t0) / 1e6);
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

const subjects = [daemon(here), daemon(path.resolve(other))];
try {
  for (const s of subjects) await execute(s.socket);
  const times = subjects.map(() => []);
  for (let i = 0; i < runs; i++) {
    for (const [j, s] of subjects.entries()) times[j].push(await execute(s.socket));
  }
  const [mine, theirs] = times.map(median);
  for (const [j, s] of subjects.entries()) {
    console.log(`${s.checkout}: median ${median(times[j]).toFixed(1)} ms, min ${Math.min(...times[j]).toFixed(1)} ms`);
  }
  console.log(
    `ratio (this / other): ${(mine / theirs).toFixed(2)}; load ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
} finally {
  for (const s of subjects) {
    s.stop();
    fs.rmSync(s.home, { recursive: true, force: true });
  }
}
