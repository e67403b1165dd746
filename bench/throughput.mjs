// Throughput rows of `npm run bench` (issue 36): each figure next to a baseline measured
// in the same run, in turns with it. Sections (`--only NAME`):
//   catchup  `sbx process logs -f` of a finished process's kept log, next to curl of the
//            same route and cat of the same bytes
//   cptree   `sbx cp` of a 256 MiB tree in and out, next to `tar c | tar x`
//   fleet    256 concurrent `sbx exec` of the release binary: receipts/s, none lost
//   create   `sandbox create` + its first exec, 100 in a row, next to `bwrap … true` + a warm exec
// Called from bench/run.mjs with its helpers (`h`).

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Wall ms of a function, or of a shell line (stdout to /dev/null); throws on failure. */
function timed(fn) {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function shell(script, env) {
  const r = spawnSync("/bin/sh", ["-c", script], { env, stdio: ["ignore", "ignore", "pipe"] });
  if (r.status !== 0) throw new Error(`${script}: exit ${r.status}: ${r.stderr}`);
}

/** CPU ms (user + system) of the children this process has waited for so far. */
function childCpuMs() {
  const r = spawnSync("/bin/sh", ["-c", "cat /proc/$PPID/stat"], { encoding: "utf8" });
  const f = r.stdout.slice(r.stdout.lastIndexOf(")") + 2).split(" ");
  // Fields 16 and 17 (cutime, cstime), counted from field 3 at index 0.
  return ((Number(f[13]) + Number(f[14])) * 1000) / 100;
}

/**
 * Subjects in turns like run.mjs's inTurns, each also with the CPU its processes used
 * (the children's user + system time, less disturbed by the machine's other work).
 */
function inTurnsCpu(subjects, n, env, before = () => undefined) {
  const once = (s) => {
    before(s);
    const c0 = childCpuMs();
    const ms = timed(() => (typeof s.run === "function" ? s.run() : shell(s.run, s.env ?? env)));
    return { ms, cpu: childCpuMs() - c0 };
  };
  for (const s of subjects) once(s);
  const times = subjects.map(() => ({ ms: [], cpu: [] }));
  for (let i = 0; i < n; i++) {
    subjects.forEach((s, j) => {
      const r = once(s);
      times[j].ms.push(r.ms);
      times[j].cpu.push(r.cpu);
    });
  }
  return times;
}

/** `sbx process logs PRC -f --raw` of a finished process's kept 60 MiB, next to curl and cat. */
export function catchup(h) {
  const { env, sbx, quote, line, RUNTIMES, NODE, BIN, fmt, median, table, summary, runs } = h;
  const size = 60 * 1024 * 1024;
  const make = `head -c ${size} /dev/urandom | tee log60.bin`;
  const prc = sbx(["process", "start", "--", "sh", "-c", make]).trim();
  sbx(["process", "result", prc, "--wait", "2m"]);
  const file = path.join(JSON.parse(sbx(["sandbox", "show", "default", "--json"])).host_workspace, "log60.bin");
  const health = JSON.parse(sbx(["daemon", "status", "--json"]));
  const socket = String(health.api_url ?? health.socket ?? "").replace(/^unix:/, "");
  const route = `http://localhost/api/v1/sandbox/default/processes/${prc}/logs?stream=stdout&offset=0&limit=${64 * 1024 * 1024}`;
  const subjects = [
    { label: "cat of the same 60 MiB", run: `cat ${quote(file)} > /dev/null` },
    {
      label: "curl --unix-socket of the same route (one raw read of all of it)",
      run: `curl -sf --unix-socket ${quote(socket)} -H 'Accept: application/octet-stream' ${quote(route)} > /dev/null`,
      what: "curl",
    },
    ...RUNTIMES.map((rt) => ({
      label: `${rt.name}: sbx process logs PRC -f --raw`,
      run: `${line(rt, ["process", "logs", prc, "-f", "--raw", "--stream", "stdout"])} > /dev/null`,
      rt,
    })),
  ];
  const n = Math.min(runs, 7);
  const t = inTurnsCpu(subjects, n, env);
  const base = median(t[0].ms);
  const curl = median(t[1].ms);
  const same = (rt) =>
    spawnSync(
      "/bin/sh",
      ["-c", `${line(rt, ["process", "logs", prc, "-f", "--raw", "--stream", "stdout"])} | cmp - ${quote(file)}`],
      { env, stdio: "ignore" },
    ).status === 0;
  table(
    "catchup",
    "process logs -f catching up with 60 MiB already written",
    ["reader", "median ms", "CPU ms (median)", "MB/s", "ratio to cat", "ratio to curl", "bytes identical"],
    subjects.map((s, i) => [
      s.label,
      fmt(median(t[i].ms), 0),
      fmt(median(t[i].cpu), 0),
      fmt(size / 1e6 / (median(t[i].ms) / 1000), 0),
      fmt(median(t[i].ms) / base, 2),
      fmt(median(t[i].ms) / curl, 2),
      s.rt ? String(same(s.rt)) : "-",
    ]),
    [
      `Median of ${n} runs each, in turns. The process wrote 60 MiB and ended (a process keeps 64 MiB per`,
      "stream): the follower reads what is kept, then sees the end. curl reads it raw in one read of 64 MiB",
      "(the most one raw read gives; a backend before issue 36 refuses more than 8 MiB).",
    ],
  );
  const ratio = (rt) => median(t[subjects.findIndex((s) => s.rt === rt)].ms) / base;
  summary.push(
    ["sbx process logs -f, catching up 60 MiB (ratio to cat)", ratio(NODE), ratio(BIN), "≤ 3×"],
    [
      "sbx process logs -f, catching up 60 MiB (ratio to curl of its route)",
      ratio(NODE) * (base / curl),
      ratio(BIN) * (base / curl),
      "≤ 2×",
    ],
  );
  sbx(["process", "rm", prc]);
}

/** A tree of `files` files of `each` bytes (incompressible) in 32 directories. */
function makeTree(dir, files, each) {
  const chunk = Buffer.alloc(each);
  for (let i = 0; i < files; i++) {
    const sub = path.join(dir, `d${i % 32}`, i % 3 ? "" : "deep");
    fs.mkdirSync(sub, { recursive: true });
    // Each file different: its index written over the front of random bytes.
    const fd = fs.openSync("/dev/urandom", "r");
    fs.readSync(fd, chunk, 0, each, 0);
    fs.closeSync(fd);
    chunk.writeUInt32LE(i, 0);
    fs.writeFileSync(path.join(sub, `f${i}`), chunk);
  }
}

/** `sbx cp` of a 256 MiB tree in and out, next to `tar c | tar x` of it. */
export function cptree(h) {
  const { env, sbx, quote, line, RUNTIMES, BIN, NODE, fmt, median, table, summary, home, runs } = h;
  const tree = path.join(home, "cptree");
  makeTree(tree, 1024, 256 * 1024);
  const out = path.join(home, "cptree-out");
  const ws = JSON.parse(sbx(["sandbox", "show", "default", "--json"])).host_workspace;
  const inside = path.join(ws, "cptree");
  // Once, so that every copy out reads the same tree.
  spawnSync(BIN.argv[0], ["cp", tree, "default:/workspace/cptree"], { env, stdio: "ignore" });
  const fresh = () => fs.rmSync(out, { recursive: true, force: true });
  const tarPipe = (from, to) => `mkdir -p ${quote(to)} && tar -C ${quote(from)} -cf - . | tar -C ${quote(to)} -xf -`;
  const subjects = [
    {
      label: "tar c \\| tar x of the tree (256 MiB, 1,024 files, 64 directories)",
      run: tarPipe(tree, out),
      clean: fresh,
    },
    ...RUNTIMES.map((rt) => ({
      label: `${rt.name}: sbx cp TREE default:/workspace/… (in)`,
      run: line(rt, ["cp", tree, "default:/workspace/cptree-in"]),
      clean: () => fs.rmSync(path.join(ws, "cptree-in"), { recursive: true, force: true }),
      rt,
      dir: "in",
    })),
    ...RUNTIMES.map((rt) => ({
      label: `${rt.name}: sbx cp default:/workspace/… TREE (out)`,
      run: line(rt, ["cp", "default:/workspace/cptree", out]),
      clean: fresh,
      rt,
      dir: "out",
    })),
  ];
  const n = Math.min(runs, 3);
  const t = inTurnsCpu(subjects, n, env, (s) => s.clean());
  const same =
    spawnSync("/bin/sh", ["-c", `diff -r ${quote(tree)} ${quote(out)} && diff -r ${quote(tree)} ${quote(inside)}`], {
      stdio: "ignore",
    }).status === 0;
  const base = median(t[0].ms);
  const baseCpu = median(t[0].cpu);
  table(
    "cptree",
    "sbx cp of a 256 MiB tree",
    ["command", "median ms", "CPU ms (median)", "ratio to tar c \\| tar x", "CPU ratio"],
    subjects.map((s, i) => [
      s.label,
      fmt(median(t[i].ms), 0),
      fmt(median(t[i].cpu), 0),
      fmt(median(t[i].ms) / base, 2),
      fmt(median(t[i].cpu) / baseCpu, 2),
    ]),
    [
      `Median of ${n} runs each, in turns; each destination removed before each run (not timed). The CPU`,
      "column is the client's processes only (sbx, or both tars), not the daemon's. Trees identical after: " +
        String(same),
    ],
  );
  const ratio = (rt, dir) => median(t[subjects.findIndex((s) => s.rt === rt && s.dir === dir)].ms) / base;
  summary.push(
    ["sbx cp of a 256 MiB tree in (ratio to tar c \\| tar x)", ratio(NODE, "in"), ratio(BIN, "in"), "≤ 1.5×"],
    ["sbx cp of a 256 MiB tree out (ratio to tar c \\| tar x)", ratio(NODE, "out"), ratio(BIN, "out"), "≤ 1.5×"],
  );
  fs.rmSync(tree, { recursive: true, force: true });
  fresh();
  fs.rmSync(inside, { recursive: true, force: true });
}

/** How many receipts of the store are definitive successes (what a fleet's round must add). */
function succeededReceipts(h) {
  const Database = h.require("better-sqlite3");
  const db = new Database(path.join(h.home, "receipts.db"), { readonly: true });
  try {
    return db.prepare("SELECT count(*) AS n FROM receipts WHERE classification = 'succeeded'").get().n;
  } finally {
    db.close();
  }
}

/** 256 concurrent `sbx exec` of the release binary: receipts/s, none lost. */
export function fleet(h) {
  const { sbx, quote, line, BIN, fmt, median, table, summary, runs } = h;
  const n = 256;
  sbx(["exec", "--", "true"]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sbx-bench-fleet-"));
  const lost = [];
  const round = (lineOf, count) => () => {
    const before = count ? succeededReceipts(h) : 0;
    const lines = Array.from(
      { length: n },
      (_, i) => `( ${lineOf(i)} > ${dir}/out.${i} 2>${dir}/err.${i}; echo $? > ${dir}/rc.${i} ) &`,
    );
    shell(`${lines.join("\n")}\nwait`, h.env);
    let ok = 0;
    for (let i = 0; i < n; i++) {
      const rc = fs.readFileSync(`${dir}/rc.${i}`, "utf8").trim();
      const outText = fs.readFileSync(`${dir}/out.${i}`, "utf8");
      if (rc === "0" && (!count || outText === `n${i}\n`)) ok++;
    }
    if (count) lost.push({ ok, receipts: succeededReceipts(h) - before });
  };
  const subjects = [
    { label: `${n} × binary: sbx --version`, run: round(() => line(BIN, ["--version"]), false) },
    {
      label: `${n} × binary: sbx exec -- echo nI`,
      run: round((i) => line(BIN, ["exec", "--", "echo", `n${i}`]), true),
    },
  ];
  const rounds = Math.min(runs, 3);
  const t = inTurnsCpu(subjects, rounds, h.env);
  fs.rmSync(dir, { recursive: true, force: true });
  const execMs = median(t[1].ms);
  const fewest = Math.min(...lost.map((l) => l.ok));
  const fewestReceipts = Math.min(...lost.map((l) => l.receipts));
  table(
    "fleet",
    `${n} concurrent sbx exec (the release binary)`,
    [
      "command",
      "median wall ms",
      "receipts/s",
      "fewest exiting 0 with their output",
      "fewest receipts succeeded",
      "ratio",
    ],
    [
      [subjects[0].label, fmt(median(t[0].ms), 0), "-", "-", "-", "1.00"],
      [
        subjects[1].label,
        fmt(execMs, 0),
        fmt(n / (execMs / 1000), 1),
        `${fewest}/${n}`,
        `${fewestReceipts}/${n}`,
        fmt(execMs / median(t[0].ms), 2),
      ],
    ],
    [
      `Median of ${rounds} rounds (and one to warm up), in turns. Receipts counted in the store: how many`,
      "more receipts were classified succeeded after each round. The ratio is to the binary's own start,",
      `${n} at once (what the processes cost without the daemon).`,
    ],
  );
  summary.push([
    `${n} concurrent exec, the binary: receipts/s (lost)`,
    null,
    n / (execMs / 1000),
    "≥ 60/s, none lost",
    "rate",
  ]);
  void quote;
}

/** `sandbox create` + the first exec, 100 in a row, next to `bwrap … true` + a warm exec. */
export function create(h) {
  const { env, sbx, quote, line, BIN, fmt, median, table, summary } = h;
  const n = 100;
  sbx(["exec", "--", "true"]);
  const bwrapTrue = "bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent true";
  const names = [];
  const base = [];
  const fresh = [];
  const cBase = [];
  const cFresh = [];
  const tag = `b${process.pid}`;
  try {
    for (let i = 0; i < n; i++) {
      const name = `${tag}-${i}`;
      names.push(name);
      let c0 = childCpuMs();
      base.push(timed(() => shell(`${bwrapTrue} && ${line(BIN, ["exec", "--", "true"])}`, env)));
      cBase.push(childCpuMs() - c0);
      c0 = childCpuMs();
      fresh.push(
        timed(() =>
          shell(
            `${line(BIN, ["sandbox", "create", name])} > /dev/null && ${line(BIN, ["exec", "-s", name, "--", "true"])}`,
            env,
          ),
        ),
      );
      cFresh.push(childCpuMs() - c0);
    }
  } finally {
    for (const name of names) spawnSync(BIN.argv[0], ["sandbox", "rm", name, "--force"], { env, stdio: "ignore" });
  }
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  table(
    "create",
    `sandbox create + the first exec, ${n} in a row`,
    ["what (the release binary)", "total ms", "median ms", "client CPU ms (median)", "ratio (total)"],
    [
      [
        `${bwrapTrue.split(" ")[0]} … true + a warm sbx exec -- true`,
        fmt(sum(base), 0),
        fmt(median(base), 1),
        fmt(median(cBase), 1),
        "1.00",
      ],
      [
        "sbx sandbox create NAME + sbx exec -s NAME -- true",
        fmt(sum(fresh), 0),
        fmt(median(fresh), 1),
        fmt(median(cFresh), 1),
        fmt(sum(fresh) / sum(base), 2),
      ],
    ],
    [`${n} of each, in turns (one of each, then the next). The baseline's bwrap: \`${bwrapTrue}\`.`],
  );
  summary.push([
    "sandbox create + first exec, 100 in a row (ratio to bwrap true + warm exec)",
    null,
    sum(fresh) / sum(base),
    "≤ 2×",
  ]);
  void quote;
}
