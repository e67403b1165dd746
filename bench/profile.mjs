#!/usr/bin/env node
// Where a command's time goes on Node: runs `node --cpu-prof bin/sbx ARGS` and prints
// the profile's self time grouped by where the code lives (Node's module loader, a
// package, a layer of sbx), so that a change can be profiled before and after.
// Usage: node bench/profile.mjs [--runs N] -- ARGS...   (SBX_HOME is taken from the environment)

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
const opts = dash < 0 ? [] : argv.slice(0, dash);
const args = dash < 0 ? argv : argv.slice(dash + 1);
const runs = Number(opts[opts.indexOf("--runs") + 1]) || 5;

/** The group a profile node's self time is counted in. */
export function groupOf(url, fn) {
  if (!url) return fn.startsWith("(") ? fn : "(native)";
  if (url.startsWith("node:internal/modules/esm") || url.startsWith("node:internal/modules/"))
    return "node: module loader";
  if (url.startsWith("node:")) return `node: ${url.slice(5).split("/").slice(0, 2).join("/")}`;
  const file = url.startsWith("file://") ? fileURLToPath(url) : url;
  const nm = file.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const parts = file.slice(nm + 13).split("/");
    return `pkg: ${parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  const rel = path.relative(root, file);
  if (rel.startsWith("dist/")) {
    const parts = rel.split("/");
    return `sbx: ${parts.slice(1, Math.min(parts.length - 1, 3)).join("/") || parts[1]}`;
  }
  return rel;
}

/** Self time (ms) per group, from one .cpuprofile. */
export function summarize(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const n = byId.get(profile.samples[i]);
    const g = groupOf(n.callFrame.url, n.callFrame.functionName);
    self.set(g, (self.get(g) ?? 0) + (dt[i] ?? 0) / 1000);
  }
  return { totalMs: (profile.endTime - profile.startTime) / 1000, self };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-prof-"));
const totals = new Map();
let wall = 0;
for (let r = 0; r < runs; r++) {
  const out = path.join(dir, String(r));
  const res = spawnSync(
    process.execPath,
    ["--cpu-prof", "--cpu-prof-dir", out, "--cpu-prof-interval", "100", "--", path.join(root, "bin", "sbx"), ...args],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  if (res.status !== 0) console.error(`exit ${res.status}`);
  const file = fs.readdirSync(out)[0];
  const { totalMs, self } = summarize(JSON.parse(fs.readFileSync(path.join(out, file), "utf8")));
  wall += totalMs;
  for (const [g, ms] of self) totals.set(g, (totals.get(g) ?? 0) + ms);
}
fs.rmSync(dir, { recursive: true, force: true });
console.log(`sbx ${args.join(" ")}: profiled ${(wall / runs).toFixed(1)} ms (mean of ${runs}), self time by group:`);
for (const [g, ms] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, 18)) {
  console.log(`  ${(ms / runs).toFixed(1).padStart(7)} ms  ${((ms / wall) * 100).toFixed(0).padStart(3)}%  ${g}`);
}
