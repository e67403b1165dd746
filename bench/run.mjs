#!/usr/bin/env node
// Benchmarks, each printed as a ratio against a baseline measured in the same run.
// Usage: npm run bench [-- --runs N] [-- --only startup|sse|process|isolation|concurrency|jobs] [-- --concurrency N]
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

/** Two commands measured in turns, so that a busy moment of the machine weighs on both alike. */
function measurePair(a, b) {
  timeOnce(a.cmd, a.argv);
  timeOnce(b.cmd, b.argv);
  const ta = [];
  const tb = [];
  for (let i = 0; i < runs; i++) {
    ta.push(timeOnce(a.cmd, a.argv));
    tb.push(timeOnce(b.cmd, b.argv));
  }
  const row = (label, times) => ({ label, median: median(times), min: Math.min(...times) });
  return [row(a.label, ta), row(b.label, tb)];
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

/** Runs sbx, returning stdout (throws on a non-zero exit). */
function sbxOut(argv, opts = {}) {
  const r = spawnSync(process.execPath, ["--", sbx, ...argv], { env, maxBuffer: 1 << 30, ...opts });
  if (r.status !== 0) throw new Error(`sbx ${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r.stdout.toString();
}

/** Wall time of one shell pipeline (stdout to /dev/null). */
function timeShell(script) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync("/bin/sh", ["-c", script], { env, stdio: ["ignore", "ignore", "pipe"] });
  if (r.status !== 0) throw new Error(`${script}: exit ${r.status}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function throughputRows(title, bytes, rows) {
  const mb = bytes / 1e6;
  console.log(`\n## ${title}`);
  console.log("| reader | ms | MB/s | ratio to cat (time) |");
  console.log("|---|---|---|---|");
  const base = rows[0].ms;
  for (const r of rows)
    console.log(
      `| ${r.label} | ${r.ms.toFixed(0)} | ${(mb / (r.ms / 1000)).toFixed(1)} | ${(r.ms / base).toFixed(2)} |`,
    );
}

function workspaceOf(sandbox = "default") {
  return JSON.parse(sbxOut(["sandbox", "show", sandbox, "--json"])).host_workspace;
}

/**
 * N copies of a command started at once: wall time until the last exits, and how
 * many exited 0 with the right stdout (`echo nI` gives `nI`).
 */
function concurrently(n, cmd, argvOf) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-bench-conc-"));
  const quote = (a) => `'${String(a).replace(/'/g, "'\\''")}'`;
  const lines = Array.from({ length: n }, (_, i) => {
    const argv = argvOf(i).map(quote).join(" ");
    return `( ${quote(cmd)} ${argv} > ${dir}/out.${i} 2>/dev/null; echo $? > ${dir}/rc.${i} ) &`;
  });
  const ms = timeShell(`${lines.join("\n")}\nwait`);
  let ok = 0;
  for (let i = 0; i < n; i++) {
    const rc = fs.readFileSync(`${dir}/rc.${i}`, "utf8").trim();
    const out = fs.readFileSync(`${dir}/out.${i}`, "utf8");
    if (rc === "0" && (out === `n${i}\n` || out === "")) ok++;
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return { ms, ok };
}

function rssKiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : Number.NaN;
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
    const rows = [version, exec, list];
    // The release binary, when built (npm run build:binary).
    const binary = path.join(root, "dist", "release", "sbx");
    if (fs.existsSync(binary)) {
      rows.push(measure("release binary: sbx --version", binary, ["--version"]));
      rows.push(measure("release binary: sbx exec -- true (warm daemon)", binary, ["exec", "--", "true"]));
    }
    report("Start-up and a warm exec", base, rows);
  }
  if (!only || only === "sse") {
    // SSE replay of an execution with 50 MB of output, next to cat of the same bytes.
    const size = 50 * 1024 * 1024;
    sbxOut(["exec", "--", "sh", "-c", `head -c ${size} /dev/urandom > big.bin`]);
    const doc = JSON.parse(sbxOut(["exec", "--json", "--timeout", "5m", "--", "cat", "big.bin"]));
    const file = path.join(workspaceOf(), "big.bin");
    const cat = timeShell(`cat '${file}' > /dev/null`);
    const replay = timeShell(`node -- '${sbx}' logs ${doc.execution_id} > /dev/null`);
    const follow = timeShell(`node -- '${sbx}' logs ${doc.execution_id} -f > /dev/null`);
    const check = spawnSync("/bin/sh", ["-c", `node -- '${sbx}' logs ${doc.execution_id} -f | cmp - '${file}'`], {
      env,
    });
    throughputRows(
      `Replay of an execution with ${size / 1048576} MiB of output (identical bytes: ${check.status === 0})`,
      size,
      [
        { label: "cat big.bin", ms: cat },
        { label: "sbx logs EXE (event pages + full output)", ms: replay },
        { label: "sbx logs EXE -f (SSE + full output)", ms: follow },
      ],
    );
  }
  if (!only || only === "process") {
    // logs -f of a process writing 200 MB, next to cat of the same bytes.
    const size = 200 * 1024 * 1024;
    const prc = sbxOut(["process", "start", "--", "sh", "-c", `head -c ${size} /dev/zero | tr '\\0' x`]).trim();
    const follow = timeShell(`node -- '${sbx}' process logs ${prc} -f --raw > /dev/null`);
    const got = JSON.parse(sbxOut(["process", "result", prc, "--json"]));
    sbxOut(["exec", "--", "sh", "-c", `head -c ${size} /dev/zero | tr '\\0' x > big200.bin`]);
    const cat = timeShell(`cat '${path.join(workspaceOf(), "big200.bin")}' > /dev/null`);
    throughputRows(
      `Following a process that writes ${size / 1048576} MiB (${got.output_capture.stdout.bytes} bytes captured)`,
      size,
      [
        { label: "cat of the same bytes", ms: cat },
        { label: "sbx process logs PRC -f (while it writes)", ms: follow },
      ],
    );
    // Daemon memory with 100 idle supervised processes, from a freshly started daemon.
    sbxOut(["daemon", "stop"]);
    sbxOut(["daemon", "start"]);
    const status = JSON.parse(sbxOut(["daemon", "status", "--json"]));
    const idle = rssKiB(status.pid);
    const ids = [];
    for (let i = 0; i < 100; i++) ids.push(sbxOut(["process", "start", "--", "sleep", "3600"]).trim());
    const loaded = rssKiB(status.pid);
    console.log("\n## Daemon memory (VmRSS)");
    console.log("| state | KiB | ratio to idle |");
    console.log("|---|---|---|");
    console.log(`| idle daemon, no processes | ${idle} | 1.00 |`);
    console.log(`| 100 idle supervised processes | ${loaded} | ${(loaded / idle).toFixed(2)} |`);
    for (const id of ids) sbxOut(["process", "rm", id, "--grace", "0s"]);
  }
  if (!only || only === "isolation") {
    // The cost of isolation: a warm exec in a bwrap sandbox next to one in a none sandbox.
    sbxOut(["daemon", "start"]);
    const health = JSON.parse(sbxOut(["daemon", "status", "--json"]));
    sbxOut(["sandbox", "create", "plain", "--isolation", "none"], { stdio: ["ignore", "pipe", "ignore"] });
    const execIn = (sandbox) => ["--", sbx, "exec", "-s", sandbox, "--", "true"];
    if (health.isolation?.bwrap.available) {
      sbxOut(["sandbox", "create", "iso", "--isolation", "bwrap"]);
      const [none, bwrap] = measurePair(
        { label: "sbx exec -s plain -- true (none)", cmd: process.execPath, argv: execIn("plain") },
        { label: "sbx exec -s iso -- true (bwrap)", cmd: process.execPath, argv: execIn("iso") },
      );
      report("The cost of isolation: a warm exec, measured in turns", none, [bwrap]);
      console.log(`\nbwrap adds ${(bwrap.median - none.median).toFixed(1)} ms (median) to a warm exec.`);
    } else console.log(`\n(bwrap cannot run here: ${health.isolation?.bwrap.reason})`);

    // sbx cp both ways, next to cat of the same file.
    const size = 256 * 1024 * 1024;
    const local = path.join(home, "cp.bin");
    spawnSync("/bin/sh", ["-c", `head -c ${size} /dev/urandom > '${local}'`]);
    const cat = timeShell(`cat '${local}' > /dev/null`);
    const up = timeShell(`node -- '${sbx}' cp '${local}' default:/workspace/cp.bin`);
    const back = path.join(home, "cp-back.bin");
    const down = timeShell(`node -- '${sbx}' cp default:/workspace/cp.bin '${back}'`);
    const same = spawnSync("cmp", [local, back]).status === 0;
    throughputRows(`sbx cp of ${size / 1048576} MiB (identical bytes: ${same})`, size, [
      { label: "cat of the same file", ms: cat },
      { label: "sbx cp FILE default:/workspace/… (in)", ms: up },
      { label: "sbx cp default:/workspace/… FILE (out)", ms: down },
    ]);
    const peak = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${health.pid}/status`, "utf8"))?.[1];
    console.log(`\nDaemon peak RSS (VmHWM) after both copies: ${peak} KiB`);
  }
  if (!only || only === "concurrency") {
    // N sbx exec at once against one warm daemon, next to N `node -e 0` (the cost of the processes).
    const n = Number(args[args.indexOf("--concurrency") + 1]) || 64;
    sbxOut(["daemon", "start"]);
    sbxOut(["exec", "--", "true"]);
    const rows = [
      { label: `${n} × node -e 0`, ...concurrently(n, process.execPath, () => ["-e", "0"]) },
      {
        label: `${n} × sbx exec -- echo nI`,
        ...concurrently(n, process.execPath, (i) => ["--", sbx, "exec", "--", "echo", `n${i}`]),
      },
    ];
    const binary = path.join(root, "dist", "release", "sbx");
    if (fs.existsSync(binary)) {
      rows.push({
        label: `${n} × release binary: sbx exec -- echo nI`,
        ...concurrently(n, binary, (i) => ["exec", "--", "echo", `n${i}`]),
      });
    }
    console.log(`\n## ${n} concurrent processes against one daemon`);
    console.log("| command | wall ms | exited 0 with the right output | ratio to node -e 0 |");
    console.log("|---|---|---|---|");
    for (const r of rows)
      console.log(`| ${r.label} | ${r.ms.toFixed(0)} | ${r.ok}/${n} | ${(r.ms / rows[0].ms).toFixed(2)} |`);
  }
  if (!only || only === "jobs") {
    // A job writing 200 MiB (8 MiB of it kept: head and tail), next to the command alone.
    const size = 200 * 1024 * 1024;
    const make = `head -c ${size} /dev/zero | tr '\\0' x`;
    const alone = timeShell(`${make} > /dev/null`);
    const run = timeShell(`node -- '${sbx}' jobs run --timeout 10m -- sh -c "${make}" > /dev/null`);
    throughputRows(`A job writing ${size / 1048576} MiB of output (kept: its first and last 4 MiB)`, size, [
      { label: "the command alone", ms: alone },
      { label: "sbx jobs run (output followed as it comes)", ms: run },
    ]);
    // One submission of 50 independent jobs (4 run at once) against one job.
    const file = path.join(home, "fifty.json");
    fs.writeFileSync(
      file,
      JSON.stringify({ jobs: Array.from({ length: 50 }, (_, i) => ({ name: `j${i}`, command: ["true"] })) }),
    );
    const one = measure("sbx jobs run -- true", process.execPath, ["--", sbx, "jobs", "run", "--", "true"]);
    const fifty = measure("sbx jobs submit (50 jobs) --wait", process.execPath, [
      "--",
      sbx,
      "jobs",
      "submit",
      file,
      "--wait",
    ]);
    report("Jobs: admission to the end", one, [fifty]);
  }
} finally {
  spawnSync(process.execPath, ["--", sbx, "daemon", "stop"], { env, stdio: "ignore" });
  fs.rmSync(home, { recursive: true, force: true });
}
