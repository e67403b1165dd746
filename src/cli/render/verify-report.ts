// What `sbx receipts verify` says: intact or not, then each problem on a line of its
// own naming the receipt, the kind of change and where (docs/receipt-chain.md).

import type { BundleVerification } from "../../receipts/bundle.js";
import type { Problem, VerifyReport } from "../../receipts/verify.js";
import type { IO } from "../io/io.js";
import { counted } from "./words.js";

/** The report as --json prints it. */
export function verifyReportJson(report: VerifyReport, subject: Record<string, unknown>, scope: string[] | null) {
  return {
    ...subject,
    intact: report.intact,
    receipts: report.receipts,
    entries: report.entries,
    head: report.head && { position: report.head.seq, link: report.head.link },
    chain_started_at: report.chain_started_at,
    pre_chain: report.pre_chain,
    pruned: report.pruned.map((p) => ({
      position: p.position,
      at: p.at,
      before: p.before,
      receipts: p.receipts,
      entries: p.entries,
      positions: p.gaps.map((g) => [g.first, g.last]),
    })),
    scope,
    problems: report.problems,
  };
}

function positions(gaps: ReadonlyArray<{ first: number; last: number }>): string {
  const shown = gaps.slice(0, 4).map((g) => (g.first === g.last ? `${g.first}` : `${g.first}–${g.last}`));
  return `${gaps.length === 1 && gaps[0]!.first === gaps[0]!.last ? "position" : "positions"} ${shown.join(", ")}${
    gaps.length > 4 ? `, … (${gaps.length} runs)` : ""
  }`;
}

export function printProblem(io: IO, p: Problem): void {
  const who = p.receipt_id ?? "(store)";
  io.out(`${who}  ${io.chalk.red(p.kind.padEnd(9))}  ${p.detail}`);
}

/** What was checked: counts, where the chain ends, what predates it, what was pruned. */
function printSummary(io: IO, report: VerifyReport): void {
  io.out(
    `  ${counted(report.receipts, "receipt")}, ${counted(report.entries, "chain entry", "chain entries")}${
      report.head ? `; the chain ends at position ${report.head.seq}, link:` : ""
    }`,
  );
  // Written down elsewhere, the head pins everything before it (docs/receipt-chain.md).
  if (report.head) io.out(`  ${report.head.link}`);
  if (report.pre_chain.receipts > 0) {
    io.out(
      `  pre-chain: ${counted(report.pre_chain.receipts, "receipt")} stored before the chain began, sealed ${
        report.pre_chain.sealed_at
      } (changes after that show; earlier ones cannot)`,
    );
  }
  for (const p of report.pruned) {
    io.out(
      `  pruned ${p.at}: ${counted(p.receipts, "receipt")} (${counted(p.entries, "entry", "entries")}) created before ${
        p.before
      }, ${positions(p.gaps)}`,
    );
  }
}

const verdict = (io: IO, intact: boolean, n: number) =>
  intact ? io.chalk.green("intact") : `${io.chalk.red.bold("NOT INTACT")}, ${counted(n, "problem")}`;

/** `name`: what was verified (the store's file). */
export function printVerifyReport(io: IO, name: string, report: VerifyReport): void {
  io.out(`${name}: ${verdict(io, report.intact, report.problems.length)}`);
  printSummary(io, report);
  if (report.problems.length > 0) {
    io.out("");
    for (const p of report.problems) printProblem(io, p);
  }
}

/** A bundle: who signed it, what it holds, and what is wrong with it. */
export function printBundleVerification(io: IO, file: string, v: BundleVerification): void {
  const problems = v.report?.problems ?? [];
  const failures = v.failures.filter((f) => !f.startsWith("the chain inside"));
  io.out(`${file}: ${verdict(io, v.intact, failures.length + problems.length)}`);
  if (v.fingerprint) {
    const whose =
      v.key_matches === true
        ? "the key given"
        : v.key_matches === false
          ? "NOT the key given"
          : "the key it names, not checked against one you trust";
    io.out(`  signed by ${v.fingerprint} (${whose}): signature ${v.signature}`);
  }
  if (v.meta) {
    io.out(
      `  made ${v.meta.created_at}: ${v.meta.since === null ? "every receipt" : `receipts created since ${v.meta.since}`}`,
    );
  }
  if (v.report) printSummary(io, v.report);
  if (failures.length + problems.length > 0) {
    io.out("");
    for (const f of failures) io.out(`(bundle)  ${io.chalk.red("broken".padEnd(9))}  ${f}`);
    for (const p of problems) printProblem(io, p);
  }
}
