#!/usr/bin/env node
// Benchmarks: every figure is a median of several runs, printed next to a baseline
// measured in the same run (in turns with it, so that a busy moment of the machine
// weighs on both alike), for the Node entry (node bin/sbx) and the release binary.
// The tables go to stdout and into BENCHMARKS.md, between its `<!-- bench:NAME -->`
// markers; the prose around them is written by hand and kept.
//
// Usage: npm run bench [-- --runs N] [-- --only startup,logs,follow,list,chain,concurrency,memory,isolation,hardening,jobs,mcp,
//                                      catchup,cptree,fleet,create (bench/throughput.mjs), egress (bench/egress.mjs)]
//                      [-- --concurrency N] [-- --no-write]

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const sbxScript = path.join(root, "bin", "sbx");
const binary = path.join(root, "dist", "release", "sbx");
const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const runs = Number(flag("--runs")) || 11;
const only = flag("--only")?.split(",") ?? null;
const concurrency = Number(flag("--concurrency")) || 64;
const write = !args.includes("--no-write");
const wants = (name) => only === null || only.includes(name);

// The mcp and egress sections run Node's sbx only.
if (!fs.existsSync(binary) && !(only !== null && only.every((n) => n === "mcp" || n === "egress"))) {
  console.error(`${binary} is missing: npm run build:binary (npm run bench does)`);
  process.exit(1);
}

const home = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-bench-"));
const env = { ...process.env, SBX_HOME: home, NO_COLOR: "1" };
delete env.SBX_API_URL;
delete env.SBX_PROFILE;

/** The two ways to run sbx: argv prefixes. */
const NODE = { name: "Node", argv: [process.execPath, "--", sbxScript] };
const BIN = { name: "binary", argv: [binary] };
const RUNTIMES = [NODE, BIN];
const quote = (a) => `'${String(a).replace(/'/g, "'\\''")}'`;
const line = (rt, sbxArgs) => [...rt.argv, ...sbxArgs].map(quote).join(" ");

/** Wall time (ms) of one shell command line, its stdout to /dev/null; throws on failure. */
function timeShell(script, envOver = env) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync("/bin/sh", ["-c", script], { env: envOver, stdio: ["ignore", "ignore", "pipe"] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${script}: exit ${r.status}: ${r.stderr}`);
  return ms;
}

/** Runs sbx (Node) and returns its stdout; throws on a non-zero exit. */
function sbx(sbxArgs, opts = {}) {
  const r = spawnSync(process.execPath, ["--", sbxScript, ...sbxArgs], { env, maxBuffer: 1 << 30, ...opts });
  if (r.status !== 0) throw new Error(`sbx ${sbxArgs.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r.stdout.toString();
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Each subject (a shell command line, or a function returning ms) once to warm up, then
 * `n` rounds in which every subject runs once, in turns. Medians and minimums per subject.
 */
function inTurns(subjects, n = runs) {
  const run = (s) => (typeof s.run === "function" ? s.run() : timeShell(s.run, s.env));
  for (const s of subjects) run(s);
  const times = subjects.map(() => []);
  for (let i = 0; i < n; i++) {
    subjects.forEach((s, j) => {
      times[j].push(run(s));
    });
  }
  return subjects.map((s, j) => ({ ...s, median: median(times[j]), min: Math.min(...times[j]) }));
}

const fmt = (x, d = 1) => x.toFixed(d);
const sections = new Map();
const summary = [];

function table(name, title, head, rows, notes = []) {
  const text = [
    `Measured ${new Date().toISOString().slice(0, 10)}, node ${process.version}, ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")} at the end.`,
    "",
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
    ...(notes.length ? ["", ...notes] : []),
  ].join("\n");
  sections.set(name, text);
  console.log(`\n## ${title}\n\n${text}`);
}

/** Start-up: --version and a warm exec, each runtime against `node -e 0`. */
function startup() {
  sbx(["daemon", "start"]);
  sbx(["exec", "--", "true"]);
  // The release binary as its users run it: its own daemon (the binary's, on Bun), in a
  // home of its own; the rows above share the Node daemon.
  const binHome = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-bench-bin-"));
  const binEnv = { ...env, SBX_HOME: binHome };
  const own = spawnSync(binary, ["exec", "--", "true"], { env: binEnv, stdio: "ignore" });
  if (own.status !== 0) throw new Error(`the binary's own daemon: exit ${own.status}`);
  const results = inTurns([
    { label: "node -e 0", run: `${quote(process.execPath)} -e 0` },
    ...RUNTIMES.flatMap((rt) => [
      { label: `${rt.name}: sbx --version`, run: line(rt, ["--version"]), rt, what: "--version" },
      { label: `${rt.name}: sbx exec -- true (warm daemon)`, run: line(rt, ["exec", "--", "true"]), rt, what: "exec" },
      {
        label: `${rt.name}: sbx receipts list --limit 20`,
        run: line(rt, ["receipts", "list", "--limit", "20"]),
        rt,
        what: "list",
      },
    ]),
    {
      label: "binary: sbx exec -- true (its own warm daemon)",
      run: line(BIN, ["exec", "--", "true"]),
      env: binEnv,
      rt: BIN,
      what: "exec-own",
    },
  ]);
  // The binary as its users run it, alone: its own daemon the only one running, in turns
  // with node -e 0. Above, the Node daemon's work after each of its execs (its event log,
  // the run's linger and release) goes on while the rows after it are timed.
  sbx(["daemon", "stop"]);
  const alone = inTurns([
    { label: "node -e 0", run: `${quote(process.execPath)} -e 0` },
    {
      label: "binary: sbx exec -- true (its own warm daemon, no other running)",
      run: line(BIN, ["exec", "--", "true"]),
      env: binEnv,
      rt: BIN,
      what: "exec-alone",
    },
  ]);
  spawnSync(binary, ["daemon", "stop"], { env: binEnv, stdio: "ignore" });
  fs.rmSync(binHome, { recursive: true, force: true });
  const base = results[0].median;
  const aloneBase = alone[0].median;
  table(
    "startup",
    "Start-up and a warm exec",
    ["command", "median ms", "min ms", "ratio to node -e 0"],
    [
      ...results.map((r) => [r.label, fmt(r.median), fmt(r.min), fmt(r.median / base, 2)]),
      ...alone.map((r) => [`${r.label} (second block)`, fmt(r.median), fmt(r.min), fmt(r.median / aloneBase, 2)]),
    ],
    [`Median of ${runs} runs each, in turns; the second block in turns of its own, after the Node daemon was stopped.`],
  );
  const ratio = (rt, what) => results.find((r) => r.rt === rt && r.what === what).median / base;
  summary.push(
    ["sbx --version (ratio to node -e 0)", ratio(NODE, "--version"), ratio(BIN, "--version"), "≤ 1.2× / ≤ 0.3×"],
    ["warm sbx exec -- true (ratio to node -e 0)", ratio(NODE, "exec"), ratio(BIN, "exec"), "≤ 2.0× / ≤ 0.4×"],
    ["warm exec, the binary with its own daemon", null, ratio(BIN, "exec-own"), "≤ 0.45×"],
    ["the same, no other daemon running", null, alone[1].median / aloneBase, "≤ 0.45×"],
  );
}

function workspaceOf(sandbox = "default") {
  return JSON.parse(sbx(["sandbox", "show", sandbox, "--json"])).host_workspace;
}

function identical(cmdLine, file) {
  return spawnSync("/bin/sh", ["-c", `${cmdLine} | cmp - ${quote(file)}`], { env, stdio: "ignore" }).status === 0;
}

/** `sbx logs EXE` of an execution that printed 50 MiB, next to cat of the same file. */
function logs() {
  const size = 50 * 1024 * 1024;
  sbx(["exec", "--", "sh", "-c", `head -c ${size} /dev/urandom > big.bin`]);
  const doc = JSON.parse(sbx(["exec", "--json", "--timeout", "5m", "--", "cat", "big.bin"]));
  const file = path.join(workspaceOf(), "big.bin");
  const eid = doc.execution_id;
  // The same route read by curl: the floor any client of the daemon's socket has.
  const socket = doc.api_url.replace(/^unix:/, "");
  const route = `http://localhost/api/v1/sandbox/${doc.sandbox_id}/executions/${eid}/output?stream=stdout`;
  const subjects = [
    { label: "cat big.bin", run: `cat ${quote(file)} > /dev/null` },
    {
      label: "curl --unix-socket, the same route",
      run: `curl -sf --unix-socket ${quote(socket)} -H 'Accept: application/octet-stream' ${quote(route)} > /dev/null`,
      what: "curl",
    },
    ...RUNTIMES.flatMap((rt) => [
      { label: `${rt.name}: sbx logs EXE`, run: `${line(rt, ["logs", eid])} > /dev/null`, rt, what: "logs" },
      { label: `${rt.name}: sbx logs EXE -f`, run: `${line(rt, ["logs", eid, "-f"])} > /dev/null`, rt },
    ]),
  ];
  const results = inTurns(subjects, Math.min(runs, 7));
  const base = results[0].median;
  const curl = results.find((r) => r.what === "curl").median;
  const mb = size / 1e6;
  table(
    "logs",
    "Replay of an execution that printed 50 MiB",
    ["reader", "median ms", "MB/s", "ratio to cat", "ratio to curl", "bytes identical"],
    results.map((r, i) => [
      r.label,
      fmt(r.median, 0),
      fmt(mb / (r.median / 1000), 0),
      fmt(r.median / base, 2),
      fmt(r.median / curl, 2),
      i === 0 ? "-" : String(identical(r.run.replace(/ > \/dev\/null$/, ""), file)),
    ]),
    [`Median of ${Math.min(runs, 7)} runs each, in turns.`],
  );
  const ratio = (rt, to = base) => results.find((r) => r.rt === rt && r.what === "logs").median / to;
  summary.push(
    ["sbx logs EXE of 50 MiB (ratio to cat)", ratio(NODE), ratio(BIN), "≤ 3×"],
    ["sbx logs EXE of 50 MiB (ratio to curl of its route)", ratio(NODE, curl), ratio(BIN, curl), "≤ 2×"],
  );
}

/** `sbx process logs PRC -f` of a process writing 200 MiB while it is followed, next to cat. */
function follow() {
  const size = 200 * 1024 * 1024;
  const make = `head -c ${size} /dev/zero | tr '\\0' x`;
  sbx(["exec", "--", "sh", "-c", `${make} > big200.bin`]);
  const file = path.join(workspaceOf(), "big200.bin");
  const captured = [];
  const received = new Map(RUNTIMES.map((rt) => [rt, []]));
  const followed = (rt) => () => {
    const prc = sbx(["process", "start", "--", "sh", "-c", make]).trim();
    const t0 = process.hrtime.bigint();
    const r = spawnSync("/bin/sh", ["-c", `${line(rt, ["process", "logs", prc, "-f", "--raw"])} 2>/dev/null | wc -c`], {
      env,
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    received.get(rt).push(Number(r.stdout.toString().trim()));
    captured.push(JSON.parse(sbx(["process", "result", prc, "--json"])).output_capture.stdout.bytes);
    sbx(["process", "rm", prc]);
    return ms;
  };
  // The floor: the daemon capturing the same output (start, then wait for the end).
  const capture = () => {
    const t0 = process.hrtime.bigint();
    const prc = sbx(["process", "start", "--", "sh", "-c", make]).trim();
    sbx(["process", "result", prc, "--wait", "2m"]);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    sbx(["process", "rm", prc]);
    return ms;
  };
  const n = Math.min(runs, 5);
  const results = inTurns(
    [
      { label: "cat of the same 200 MiB", run: `cat ${quote(file)} > /dev/null` },
      { label: "the daemon capturing it (process start, result --wait)", run: capture },
      ...RUNTIMES.map((rt) => ({ label: `${rt.name}: sbx process logs PRC -f --raw`, run: followed(rt), rt })),
    ],
    n,
  );
  const base = results[0].median;
  const all = captured.every((b) => b === size);
  const got = (r) => (r.rt ? `${fmt(median(received.get(r.rt)) / 1048576, 0)} MiB` : "-");
  table(
    "follow",
    "Following a process that writes 200 MiB",
    ["reader", "median ms", "MB/s", "ratio to cat", "follower received (median)"],
    results.map((r) => [
      r.label,
      fmt(r.median, 0),
      fmt(size / 1e6 / (r.median / 1000), 0),
      fmt(r.median / base, 2),
      got(r),
    ]),
    [
      `Median of ${n} runs each, in turns; the daemon captured all ${size} bytes every time: ${all}. The`,
      "follower starts as the process starts and reads while it writes: it cannot end before the daemon has",
      "captured the last byte. What it did not receive was rotated away (8 MiB segments, 64 MiB kept) before",
      "it read it, and it said so on stderr, naming the offsets.",
    ],
  );
  const ratio = (rt) => results.find((r) => r.rt === rt).median / base;
  summary.push(["sbx process logs -f of 200 MiB (ratio to cat)", ratio(NODE), ratio(BIN), "≤ 4×"]);
}

/**
 * A receipt store with `n` receipts like exec writes them, in a home of its own: the rows
 * made with SQL in one transaction (fast), each chained as the store chains it
 * (dist/receipts/chain-log.js), so that the store verifies intact.
 */
async function storeWith(n) {
  const h = fs.mkdtempSync(path.join(os.tmpdir(), `sbx-bench-list-${n}-`));
  const e = { ...env, SBX_HOME: h };
  spawnSync(process.execPath, ["--", sbxScript, "receipts", "list"], { env: e, stdio: "ignore" });
  const { withChain } = await import(path.join(root, "dist", "receipts", "chain-log.js"));
  const Database = createRequire(import.meta.url)("better-sqlite3");
  const db = new Database(path.join(h, "receipts.db"));
  const receipt = db.prepare(
    `INSERT INTO receipts (receipt_id, kind, profile, api_url, sandbox_id, idempotency_key, method, path, body,
       body_sha256, created_at, execution_id, classification)
     VALUES (?, 'execute', 'local', 'unix:/tmp/sbx.sock', 'default', ?, 'POST', '/api/v1/sandbox/default/execute', ?, ?, ?, ?, ?)`,
  );
  const attempt = db.prepare(
    "INSERT INTO attempts (receipt_id, attempt, dispatched_at, body_sha256, pid) VALUES (?, 1, ?, ?, 1)",
  );
  const obs = db.prepare(
    `INSERT INTO observations (receipt_id, attempt, source, at, classification, definitive, http_status, execution_id,
       outcome, exit_code, stdout, stderr)
     VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, '')`,
  );
  const classes = ["succeeded", "succeeded", "succeeded", "failed", "outcome_unknown"];
  const t0 = Date.parse("2026-01-01T00:00:00.000Z");
  db.transaction(() => {
    withChain(db, (chain) => {
      for (let i = 0; i < n; i++) {
        const id = `rcp_${String(i).padStart(21, "0")}`;
        const at = new Date(t0 + i * 1000).toISOString();
        const body = Buffer.from(JSON.stringify({ command: ["echo", `n${i}`], stream: false, timeout: 120000 }));
        const sha = createHash("sha256").update(body).digest("hex");
        const c = classes[i % classes.length];
        receipt.run(id, `key-${i}`, body, sha, at, `exe_${i}`, c);
        chain.appendRequest(id);
        attempt.run(id, at, sha);
        chain.appendAttempt(id, 1);
        chain.appendObservation(
          id,
          Number(obs.run(id, "dispatch", at, "dispatched", 0, null, null, null, null, null).lastInsertRowid),
        );
        const answered = obs.run(
          id,
          "answer",
          at,
          c,
          c === "outcome_unknown" ? 0 : 1,
          200,
          `exe_${i}`,
          c === "failed" ? "failed" : c === "succeeded" ? "succeeded" : "unknown",
          c === "failed" ? 1 : 0,
          `n${i}\n`,
        );
        chain.appendObservation(id, Number(answered.lastInsertRowid));
      }
    });
  })();
  db.close();
  return e;
}

/** `receipts list --limit 50` with 100,000 receipts next to the same with 100. */
async function list() {
  const small = await storeWith(100);
  const big = await storeWith(100_000);
  const cmd = ["receipts", "list", "--limit", "50"];
  const results = inTurns(
    RUNTIMES.flatMap((rt) => [
      { label: `${rt.name}: 100 receipts`, run: `${line(rt, cmd)} > /dev/null`, env: small, rt, n: 100 },
      { label: `${rt.name}: 100,000 receipts`, run: `${line(rt, cmd)} > /dev/null`, env: big, rt, n: 100_000 },
    ]),
  );
  const of = (rt, n) => results.find((r) => r.rt === rt && r.n === n).median;
  const filtered = inTurns(
    RUNTIMES.map((rt) => ({
      label: `${rt.name}: 100,000 receipts, --classification failed,outcome_unknown`,
      run: `${line(rt, [...cmd, "--classification", "failed,outcome_unknown"])} > /dev/null`,
      env: big,
      rt,
    })),
  );
  table(
    "list",
    "receipts list --limit 50 with 100 and with 100,000 receipts",
    ["command", "median ms", "min ms", "ratio to 100 receipts"],
    [...results, ...filtered].map((r) => [r.label, fmt(r.median), fmt(r.min), fmt(r.median / of(r.rt, 100), 2)]),
    [`Median of ${runs} runs each, in turns.`],
  );
  summary.push([
    "receipts list --limit 50: 100,000 receipts (ratio to 100)",
    of(NODE, 100_000) / of(NODE, 100),
    of(BIN, 100_000) / of(BIN, 100),
    "≤ 1.5×",
  ]);
  for (const e of [small, big]) fs.rmSync(e.SBX_HOME, { recursive: true, force: true });
}

/**
 * The receipt chain: `receipts verify` of 100,000 receipts next to 100, and what chaining
 * costs an exec's two store writes (bench/chain-cost.mjs under Node and under Bun, the
 * release binary's runtime).
 */
async function chain() {
  const small = await storeWith(100);
  const big = await storeWith(100_000);
  const cmd = ["receipts", "verify"];
  const results = inTurns(
    RUNTIMES.flatMap((rt) => [
      { label: `${rt.name}: verify 100 receipts`, run: `${line(rt, cmd)} > /dev/null`, env: small, rt, n: 100 },
      { label: `${rt.name}: verify 100,000 receipts`, run: `${line(rt, cmd)} > /dev/null`, env: big, rt, n: 100_000 },
    ]),
    Math.min(runs, 5),
  );
  const of = (rt, n) => results.find((r) => r.rt === rt && r.n === n).median;
  const bun = path.join(root, "node_modules", ".bin", "bun");
  const cost = [
    ["Node (better-sqlite3)", process.execPath],
    ["Bun (bun:sqlite)", bun],
  ].map(([name, exe]) => {
    const r = spawnSync(exe, [path.join(root, "bench", "chain-cost.mjs"), "300"], { env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`chain-cost under ${name}: ${r.stderr}`);
    return { name, ...JSON.parse(r.stdout) };
  });
  table(
    "chain",
    "The receipt chain: verify at scale, and what chaining costs an exec",
    ["measured", "median ms", "min ms", "note"],
    [
      ...results.map((r) => [r.label, fmt(r.median), fmt(r.min), `${fmt(r.median / of(r.rt, 100), 2)}× 100 receipts`]),
      ...cost.map((c) => [
        `${c.name}: chaining per exec`,
        fmt(c.chain_median_ms, 3),
        "-",
        `of ${fmt(c.writes_median_ms, 1)} ms for the exec's two committed writes (mean ${fmt(c.chain_mean_ms, 3)})`,
      ]),
    ],
    [
      `verify: median of ${Math.min(runs, 5)} runs each, in turns; each store has 4 entries per receipt (request, attempt, dispatch, answer).`,
      "Chaining: 300 execs' writes (createForDispatch + recordObservation) on a real file, synchronous=FULL; the time inside the chain's appender (hashing, head, chain rows).",
    ],
  );
  summary.push(["receipts verify of 100,000 receipts (ms)", of(NODE, 100_000), of(BIN, 100_000), "< 2000 ms", "ms"]);
  summary.push(["chaining on a warm exec (ms)", cost[0].chain_median_ms, cost[1].chain_median_ms, "< 1 ms", "ms3"]);
  for (const e of [small, big]) fs.rmSync(e.SBX_HOME, { recursive: true, force: true });
}

/** N copies of a command line started at once: wall ms, and how many exited 0 printing `nI`. */
function concurrently(n, lineOf) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-bench-conc-"));
  const lines = Array.from(
    { length: n },
    (_, i) => `( ${lineOf(i)} > ${dir}/out.${i} 2>/dev/null; echo $? > ${dir}/rc.${i} ) &`,
  );
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

/** N sbx exec at once against one warm daemon: receipts per second, next to N `node -e 0`. */
function concurrencyBench() {
  const n = concurrency;
  sbx(["daemon", "start"]);
  sbx(["exec", "--", "true"]);
  const oks = new Map();
  const subject = (label, lineOf, rt) => ({
    label,
    rt,
    run: () => {
      const r = concurrently(n, lineOf);
      oks.set(label, Math.min(oks.get(label) ?? n, r.ok));
      return r.ms;
    },
  });
  const rounds = Math.min(runs, 3);
  const results = inTurns(
    [
      subject(`${n} × node -e 0`, () => `${quote(process.execPath)} -e 0`),
      ...RUNTIMES.map((rt) =>
        subject(`${n} × ${rt.name}: sbx exec -- echo nI`, (i) => line(rt, ["exec", "--", "echo", `n${i}`]), rt),
      ),
    ],
    rounds,
  );
  const base = results[0].median;
  table(
    "concurrency",
    `${n} concurrent sbx exec against one daemon`,
    ["command", "median wall ms", "receipts/s", "fewest exiting 0 with their output", "ratio to node -e 0"],
    results.map((r, i) => [
      r.label,
      fmt(r.median, 0),
      i === 0 ? "-" : fmt(n / (r.median / 1000), 1),
      `${oks.get(r.label)}/${n}`,
      fmt(r.median / base, 2),
    ]),
    [`Median of ${rounds} rounds, in turns.`],
  );
  const rate = (rt) => n / (results.find((r) => r.rt === rt).median / 1000);
  summary.push([`${n} concurrent exec: receipts/s`, rate(NODE), rate(BIN), "measured", "rate"]);
}

function rssKiB(pid, field = "VmRSS") {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : Number.NaN;
}

/** A daemon's memory, idle and with 100 supervised processes writing logs all the while. */
function memory() {
  const rows = [];
  const peaks = {};
  const writer =
    "i=0; while :; do i=$((i+1)); j=0; while [ $j -lt 100 ]; do j=$((j+1)); printf 'worker line %d.%d: some text a busy worker writes\\n' $i $j; done; sleep 0.2; done";
  for (const rt of RUNTIMES) {
    const run = (a) => {
      const r = spawnSync(rt.argv[0], [...rt.argv.slice(1), ...a], { env, encoding: "utf8" });
      if (r.status !== 0) throw new Error(`sbx ${a.join(" ")}: ${r.stderr}`);
      return r.stdout;
    };
    spawnSync(process.execPath, ["--", sbxScript, "daemon", "stop"], { env, stdio: "ignore" });
    run(["daemon", "start"]);
    spawnSync(rt.argv[0], [...rt.argv.slice(1), "sandbox", "create", "mem", "--isolation", "none"], {
      env,
      stdio: "ignore",
    });
    const pid = JSON.parse(run(["daemon", "status", "--json"])).pid;
    const idle = rssKiB(pid);
    const ids = [];
    for (let i = 0; i < 100; i++) ids.push(run(["process", "start", "-s", "mem", "--", "sh", "-c", writer]).trim());
    // Sample while they write: 10 s, every 0.5 s.
    let peak = 0;
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      peak = Math.max(peak, rssKiB(pid));
      spawnSync("sleep", ["0.5"]);
    }
    const written = ids
      .slice(0, 5)
      .map((id) => JSON.parse(run(["process", "result", id, "-s", "mem", "--json"])).output_capture.stdout.bytes);
    const hwm = rssKiB(pid, "VmHWM");
    for (const id of ids) run(["process", "rm", id, "-s", "mem", "--grace", "0s"]);
    rows.push(
      [`${rt.name} daemon: idle`, String(idle), "1.00", "-"],
      [
        `${rt.name} daemon: 100 processes writing (highest VmRSS in 10 s; VmHWM ${hwm})`,
        String(peak),
        fmt(peak / idle, 2),
        `${Math.round(median(written) / 1024)} KiB each after 10 s`,
      ],
    );
    peaks[rt.name] = peak / 1024;
    run(["daemon", "stop"]);
  }
  table("memory", "Daemon memory with 100 processes writing logs", ["state", "KiB", "ratio to idle", "logs"], rows);
  summary.push(["daemon RSS, 100 processes writing logs (MB)", peaks.Node, peaks.binary, "< 150 MB", "mb"]);
}

/** The cost of isolation, and sbx cp both ways (Node). */
function isolation() {
  sbx(["daemon", "start"]);
  const health = JSON.parse(sbx(["daemon", "status", "--json"]));
  spawnSync(process.execPath, ["--", sbxScript, "sandbox", "create", "plain", "--isolation", "none"], {
    env,
    stdio: "ignore",
  });
  const rows = [];
  if (health.isolation?.bwrap.available) {
    spawnSync(process.execPath, ["--", sbxScript, "sandbox", "create", "iso", "--isolation", "bwrap"], {
      env,
      stdio: "ignore",
    });
    const [none, bwrap] = inTurns([
      { label: "binary: sbx exec -s plain -- true (none)", run: line(BIN, ["exec", "-s", "plain", "--", "true"]) },
      { label: "binary: sbx exec -s iso -- true (bwrap)", run: line(BIN, ["exec", "-s", "iso", "--", "true"]) },
    ]);
    rows.push(
      [none.label, fmt(none.median), "1.00"],
      [bwrap.label, fmt(bwrap.median), fmt(bwrap.median / none.median, 2)],
    );
  }
  const size = 256 * 1024 * 1024;
  const local = path.join(home, "cp.bin");
  spawnSync("/bin/sh", ["-c", `head -c ${size} /dev/urandom > ${quote(local)}`]);
  const back = path.join(home, "cp-back.bin");
  const [cat, up, down] = inTurns(
    [
      { label: "cat of the same 256 MiB", run: `cat ${quote(local)} > /dev/null` },
      {
        label: "binary: sbx cp FILE default:/workspace/… (in)",
        run: line(BIN, ["cp", local, "default:/workspace/cp.bin"]),
      },
      {
        label: "binary: sbx cp default:/workspace/… FILE (out)",
        run: line(BIN, ["cp", "default:/workspace/cp.bin", back]),
      },
    ],
    3,
  );
  const same = spawnSync("cmp", [local, back]).status === 0;
  rows.push(
    [cat.label, fmt(cat.median), "1.00"],
    [up.label, fmt(up.median), fmt(up.median / cat.median, 2)],
    [`${down.label} (identical: ${same})`, fmt(down.median), fmt(down.median / cat.median, 2)],
  );
  // A tree of many small files: what unpacking through directory handles costs
  // (every entry created and fixed up inside an open directory), against tar itself.
  const tree = path.join(home, "tree");
  for (let d = 0; d < 100; d++) {
    fs.mkdirSync(path.join(tree, `d${d}`, "sub"), { recursive: true });
    for (let f = 0; f < 40; f++)
      fs.writeFileSync(path.join(tree, `d${d}`, f % 2 ? "sub" : "", `f${f}`), "x".repeat(2000));
  }
  const tarball = path.join(home, "tree.tar");
  spawnSync("tar", ["-cf", tarball, "-C", tree, "."]);
  const treeOut = path.join(home, "tree-out");
  // Twice before timing: every timed copy in then merges into /workspace/tree/tree alike.
  for (let i = 0; i < 2; i++) spawnSync(binary, ["cp", tree, "default:/workspace/tree"], { env, stdio: "ignore" });
  const [untar, treeUp, treeDown] = inTurns(
    [
      {
        label: "tar -x of a tree of 4,000 files and 200 directories",
        run: `rm -rf ${quote(treeOut)} && mkdir ${quote(treeOut)} && tar -xf ${quote(tarball)} -C ${quote(treeOut)}`,
      },
      {
        label: "binary: sbx cp TREE default:/workspace/… (in)",
        run: line(BIN, ["cp", tree, "default:/workspace/tree"]),
      },
      {
        label: "binary: sbx cp default:/workspace/… TREE (out)",
        run: `rm -rf ${quote(treeOut)} && ${line(BIN, ["cp", "default:/workspace/tree/tree", treeOut])}`,
      },
    ],
    3,
  );
  rows.push(
    [untar.label, fmt(untar.median), "1.00"],
    [treeUp.label, fmt(treeUp.median), fmt(treeUp.median / untar.median, 2)],
    [treeDown.label, fmt(treeDown.median), fmt(treeDown.median / untar.median, 2)],
  );
  table("isolation", "Isolation and sbx cp", ["command", "median ms", "ratio to the first row of its kind"], rows);
}

/**
 * What a sandbox's own uid and the syscall filter add to bwrap's start (as root, where
 * they apply): bwrap with a run's options as it ran before them (as root, mapped to
 * uid 0, no filter), with the filter, through the workspace gate as the sandbox's uid,
 * and both — each running `true`, in turns. The options come from the driver's own
 * builder (dist/), the gate is the driver's.
 */
async function hardening() {
  if (process.getuid?.() !== 0) {
    console.log("\nhardening: skipped (not root: commands run as the user, there is no gate)");
    return;
  }
  const dist = (m) => import(path.join(root, "dist", "backend", "drivers", m));
  const { bwrapArguments } = await dist("bwrap/args.js");
  const { readHostView } = await dist("bwrap/host-view.js");
  const { WorkspaceGate } = await dist("bwrap/gate.js");
  const { buildFilter, encodeFilter } = await dist("seccomp/bpf.js");
  const { hostArch } = await dist("seccomp/syscalls.js");
  const { INSIDE_ID, SANDBOX_UID_FIRST } = await dist("identity.js");
  const which = (p) => spawnSync("/bin/sh", ["-c", `command -v ${p}`], { encoding: "utf8" }).stdout.trim();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-bench-hardening-"));
  const ws = path.join(dir, "workspace");
  fs.mkdirSync(ws);
  const uid = SANDBOX_UID_FIRST;
  fs.chownSync(ws, uid, uid);
  const filter = path.join(dir, "filter.bpf");
  fs.writeFileSync(filter, encodeFilter(buildFilter(hostArch())));
  const gate = new WorkspaceGate({
    bwrap: which("bwrap"),
    nsenter: which("nsenter"),
    mount: which("mount"),
    umount: which("umount"),
  });
  try {
    const view = readHostView();
    const command = ({ identity, seccomp }) => {
      const args = bwrapArguments({
        view,
        insideId: INSIDE_ID,
        network: false,
        fds: { seccomp: seccomp ? 9 : null, status: null, setup: null },
        workspace: { path: identity ? gate.pathFor(ws) : ws },
        cwd: "/workspace",
        env: { PATH: "/usr/bin:/bin" },
      });
      const argv = [...args, "--", "true"];
      const launch = identity
        ? gate.enter({ uid, gid: uid }, which("bwrap"), argv)
        : { file: which("bwrap"), args: argv };
      return [launch.file, ...launch.args].map(quote).join(" ") + (seccomp ? ` 9<${quote(filter)}` : "");
    };
    const [before, withFilter, withIdentity, both] = inTurns(
      [
        { label: "bwrap … true as before: as root (uid 0 inside maps to it), no filter", run: command({}) },
        { label: "+ the syscall filter", run: command({ seccomp: true }) },
        {
          label: "+ the sandbox's own uid (nsenter into the gate, bwrap as that uid)",
          run: command({ identity: true }),
        },
        { label: "+ both (what a run does now)", run: command({ identity: true, seccomp: true }) },
      ],
      Math.max(runs, 25),
    );
    const rows = [before, withFilter, withIdentity, both].map((r) => [
      r.label,
      fmt(r.median),
      fmt(r.min),
      fmt(r.median - before.median, 2),
    ]);
    table(
      "hardening",
      "What identity and the filter add to bwrap's start",
      ["bwrap", "median ms", "min ms", "added ms (median)"],
      rows,
      [
        `Target: identity and filter together add at most 3 ms (added here: ${fmt(both.median - before.median, 2)} ms).`,
      ],
    );
  } finally {
    gate.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Jobs: 200 MiB of output through a job's budget; 50 jobs in one submission. */
function jobs() {
  const size = 200 * 1024 * 1024;
  const make = `head -c ${size} /dev/zero | tr '\\0' x`;
  const file = path.join(home, "fifty.json");
  fs.writeFileSync(
    file,
    JSON.stringify({ jobs: Array.from({ length: 50 }, (_, i) => ({ name: `j${i}`, command: ["true"] })) }),
  );
  const results = inTurns(
    [
      { label: "the command alone", run: `sh -c ${quote(make)} > /dev/null` },
      ...RUNTIMES.map((rt) => ({
        label: `${rt.name}: sbx jobs run (output followed as it comes)`,
        run: `${line(rt, ["jobs", "run", "--timeout", "10m", "--", "sh", "-c", make])} > /dev/null`,
      })),
      ...RUNTIMES.map((rt) => ({
        label: `${rt.name}: sbx jobs run -- true`,
        run: line(rt, ["jobs", "run", "--", "true"]),
      })),
      ...RUNTIMES.map((rt) => ({
        label: `${rt.name}: sbx jobs submit (50 jobs) --wait`,
        run: `${line(rt, ["jobs", "submit", file, "--wait"])} > /dev/null`,
      })),
    ],
    Math.min(runs, 5),
  );
  table(
    "jobs",
    "Jobs",
    ["command", "median ms", "ratio to the command alone"],
    results.map((r) => [r.label, fmt(r.median), fmt(r.median / results[0].median, 2)]),
  );
}

/**
 * The table: each row for Node and the binary, with its target. A run of some
 * sections replaces their rows in the table BENCHMARKS.md has, and keeps the others.
 */
function summaryTable() {
  const show = (v, kind) =>
    v === null
      ? "-"
      : kind === "rate"
        ? `${fmt(v, 1)}/s`
        : kind === "mb"
          ? `${fmt(v, 0)} MB`
          : kind === "ms"
            ? `${fmt(v, 0)} ms`
            : kind === "ms3"
              ? `${fmt(v, 3)} ms`
              : `${fmt(v, 2)}×`;
  const fresh = summary.map(([label, node, bin, target, kind]) => [label, show(node, kind), show(bin, kind), target]);
  let rows = fresh;
  if (only !== null) {
    const old = (/<!-- bench:summary -->([\s\S]*?)<!-- \/bench:summary -->/.exec(readBenchmarks())?.[1] ?? "")
      .split("\n")
      .filter((l) => l.startsWith("| ") && !l.startsWith("|  |"))
      .map((l) => l.slice(2, -2).split(" | "));
    const byLabel = new Map(fresh.map((r) => [r[0], r]));
    rows = old.map((r) => byLabel.get(r[0]) ?? r);
    for (const r of fresh) if (!old.some((o) => o[0] === r[0])) rows.push(r);
  }
  table("summary", "Summary", ["", "Node (node bin/sbx)", "release binary", "target"], rows, [
    ...(only === null ? [] : [`Rows of ${only.join(", ")} from this run; the others from earlier runs.`]),
  ]);
}

function readBenchmarks() {
  return fs.readFileSync(path.join(root, "BENCHMARKS.md"), "utf8");
}

/** Puts each generated section between its markers in BENCHMARKS.md; the rest stays as written. */
function writeBenchmarks() {
  const file = path.join(root, "BENCHMARKS.md");
  let text = readBenchmarks();
  for (const [name, body] of sections) {
    const start = `<!-- bench:${name} -->`;
    const end = `<!-- /bench:${name} -->`;
    const a = text.indexOf(start);
    const b = text.indexOf(end);
    if (a < 0 || b < a) {
      console.error(`BENCHMARKS.md has no ${start} … ${end}: section ${name} not written`);
      continue;
    }
    text = `${text.slice(0, a + start.length)}\n${body}\n${text.slice(b)}`;
  }
  fs.writeFileSync(file, text);
  console.error(`\nwrote ${[...sections.keys()].join(", ")} into BENCHMARKS.md`);
}

try {
  console.log(`# sbx benchmarks — node ${process.version}, ${os.cpus().length} cores, ${new Date().toISOString()}`);
  const steps = [
    ["startup", startup],
    ["logs", logs],
    ["follow", follow],
    ["list", list],
    ["chain", chain],
    ["concurrency", concurrencyBench],
    ["memory", memory],
    ["isolation", isolation],
    ["hardening", hardening],
    ["jobs", jobs],
    ["mcp", () => import("./mcp.mjs").then((m) => m.mcpBench({ env, sbxScript, runs, table, fmt, summary, median }))],
    [
      "egress",
      () => import("./egress.mjs").then((m) => m.egressBench({ env, sbxScript, home, runs, table, fmt, median })),
    ],
    ...["catchup", "cptree", "fleet", "create"].map((name) => [
      name,
      () =>
        import("./throughput.mjs").then((m) =>
          m[name]({
            env,
            home,
            sbx,
            quote,
            line,
            RUNTIMES,
            NODE,
            BIN,
            fmt,
            median,
            table,
            summary,
            runs,
            require: createRequire(import.meta.url),
          }),
        ),
    ]),
  ];
  for (const [name, fn] of steps) if (wants(name)) await fn();
  if (summary.length) summaryTable();
  if (write) writeBenchmarks();
} finally {
  spawnSync(process.execPath, ["--", sbxScript, "daemon", "stop"], { env, stdio: "ignore" });
  fs.rmSync(home, { recursive: true, force: true });
}
