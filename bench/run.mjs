#!/usr/bin/env node
// Benchmarks, each printed as a ratio against a baseline measured in the same run.
// Usage: npm run bench [-- --runs N] [-- --only startup]
// Results go to BENCHMARKS.md by hand (numbers vary by machine; ratios less so).

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const sbx = path.join(root, "bin", "sbx");
const args = process.argv.slice(2);
const runs = Number(args[args.indexOf("--runs") + 1]) || 15;
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : null;

const home = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-bench-"));
const env = { ...process.env, SBX_HOME: home, NO_COLOR: "1" };

function timeOnce(cmd, argv) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { env, stdio: ["ignore", "ignore", "pipe"] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function measure(label, cmd, argv) {
  timeOnce(cmd, argv); // warm-up
  const times = Array.from({ length: runs }, () => timeOnce(cmd, argv));
  return { label, median: median(times), min: Math.min(...times) };
}

function report(title, baseline, rows) {
  console.log(`\n## ${title} (median of ${runs} runs)`);
  console.log(`| command | median ms | min ms | ratio to ${baseline.label} |`);
  console.log("|---|---|---|---|");
  for (const r of [baseline, ...rows]) {
    console.log(
      `| ${r.label} | ${r.median.toFixed(1)} | ${r.min.toFixed(1)} | ${(r.median / baseline.median).toFixed(2)} |`,
    );
  }
}

try {
  console.log(`# sbx benchmarks — node ${process.version}, ${os.cpus().length} cores, ${new Date().toISOString()}`);
  if (!only || only === "startup") {
    const base = measure("node -e 0", process.execPath, ["-e", "0"]);
    const version = measure("sbx --version", process.execPath, ["--", sbx, "--version"]);
    // Start the daemon once, so exec measures the warm path.
    timeOnce(process.execPath, ["--", sbx, "daemon", "start"]);
    const exec = measure("sbx exec -- true (warm daemon)", process.execPath, ["--", sbx, "exec", "--", "true"]);
    const list = measure("sbx receipts list", process.execPath, ["--", sbx, "receipts", "list", "--limit", "20"]);
    report("Start-up and a warm exec", base, [version, exec, list]);
  }
} finally {
  spawnSync(process.execPath, ["--", sbx, "daemon", "stop"], { env, stdio: "ignore" });
  fs.rmSync(home, { recursive: true, force: true });
}
