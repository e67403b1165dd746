// CI's verdict over its vitest runs: one plain "N passed, N failed, N skipped" line,
// then each run, then what makes the run red besides a failed test: a skip this
// machine does not expect (docs/testing.md, "Skips"), or something a run left behind.
//
// node .ci/summary.mjs "EXPECTED NEEDS" NAME=JSON[:LEFTOVERS] ...
// (LEFTOVERS: the file the run's global teardown wrote, SBX_TEST_LEFTOVERS; a run
// without the suite's global setup has none)
//
// A test skipped for lack of something names it in its title ("[skipped: needs bwrap
// — why]", test/support/requirements.ts); a skip is expected only when its need is in
// the list .ci/run gives for this machine. A skip without that tag is never expected.

import fs from "node:fs";

const [expectedArg = "", ...runArgs] = process.argv.slice(2);
const expected = new Set(expectedArg.split(/\s+/).filter(Boolean));
const TAG = /\[skipped: needs ([A-Za-z0-9-]+) — /;

const runs = runArgs.map((arg) => {
  const [name, files] = arg.split("=");
  const [json, leftovers] = files.split(":");
  const run = { name, passed: 0, failed: 0, failures: [], skipped: [], unexpected: [], leftovers: "", broken: null, seconds: null };
  try {
    const r = JSON.parse(fs.readFileSync(json, "utf8"));
    run.passed = r.numPassedTests;
    run.failed = r.numFailedTests;
    // The run's wall time: from its start to the last file's end (the suite's time, said on every CI run).
    const ends = r.testResults.map((f) => f.endTime).filter((t) => typeof t === "number");
    if (typeof r.startTime === "number" && ends.length > 0) run.seconds = (Math.max(...ends) - r.startTime) / 1000;
    for (const file of r.testResults) {
      // A file that failed outside any test (an import error, a hook) has no failed test to name.
      if (file.status === "failed" && !file.assertionResults.some((t) => t.status === "failed")) {
        run.failures.push(`${file.name.replace(/^.*?\/test\//, "test/")} (the file itself)\n    ${String(file.message ?? "").split("\n")[0].slice(0, 400)}`);
      }
      for (const t of file.assertionResults) {
        if (t.status === "passed") continue;
        if (t.status === "failed") {
          // Named in the summary (its tail is what CI shows): a red run says which test and why.
          const why = (t.failureMessages ?? []).join(" ").split("\n")[0].slice(0, 400);
          run.failures.push(`${file.name.replace(/^.*?\/test\//, "test/")} > ${t.fullName}\n    ${why}`);
          continue;
        }
        const title = `${file.name.replace(/^.*?\/test\//, "test/")} > ${t.fullName}`;
        run.skipped.push(title);
        const need = TAG.exec(t.title)?.[1];
        if (need === undefined || !expected.has(need)) run.unexpected.push(title);
      }
    }
  } catch (err) {
    run.broken = `no report (${err.message})`;
  }
  if (leftovers !== undefined) {
    try {
      run.leftovers = fs.readFileSync(leftovers, "utf8").trim();
    } catch {
      run.broken ??= "its global teardown did not report (did the run end?)";
    }
  }
  return run;
});

const sum = (f) => runs.reduce((n, r) => n + f(r), 0);
console.log(
  `${sum((r) => r.passed)} passed, ${sum((r) => r.failed + (r.broken ? 1 : 0))} failed, ${sum((r) => r.skipped.length)} skipped`,
);
for (const r of runs) {
  const took = r.seconds === null ? "" : ` in ${Math.round(r.seconds)} s`;
  console.log(
    `${r.name}: ${r.passed} passed, ${r.failed} failed, ${r.skipped.length} skipped${took}${r.broken ? `; ${r.broken}` : ""}`,
  );
}
const failures = runs.flatMap((r) => r.failures.map((f) => `${r.name}: ${f}`));
if (failures.length > 0) {
  console.log(`${failures.length} failure(s):`);
  for (const f of failures) console.log(`  ${f}`);
}
// Times mean little without the machine's load beside them (1, 5 and 15 minutes).
console.log(`load average: ${fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
console.log(`skips expected on this machine: ${expected.size === 0 ? "none" : [...expected].join(", ")}`);
const unexpected = runs.flatMap((r) => r.unexpected.map((t) => `${r.name}: ${t}`));
if (unexpected.length > 0) {
  console.log(`${unexpected.length} unexpected skip(s) — each is a test that did not run here:`);
  for (const t of unexpected) console.log(`  ${t}`);
}
for (const r of runs) if (r.leftovers) console.log(`${r.name} left things behind:\n${r.leftovers}`);

const red = sum((r) => r.failed) > 0 || runs.some((r) => r.broken || r.leftovers) || unexpected.length > 0;
process.exit(red ? 1 : 0);
