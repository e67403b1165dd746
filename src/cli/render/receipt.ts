// A receipt for people: the summary, the request, attempts and the observation
// timeline, and on a doubtful receipt the exact next step.

import type { ChalkInstance } from "chalk";
import type { Classification } from "../../receipts/classifications.js";
import { createdBy, type DetailedReceiptDocument, explain, type ReceiptDocument } from "../../receipts/document.js";
import type { IO } from "../io/io.js";
import { egressDeniedLines } from "./egress-denied.js";
import { usageLine } from "./usage.js";

export function colorClassification(chalk: ChalkInstance, c: Classification | null): string {
  if (c === null) return chalk.dim("(nothing learned)");
  if (c === "succeeded" || c === "admitted") return chalk.green(c);
  if (c === "failed" || c === "rejected" || c === "timed_out" || c === "cancelled") return chalk.red(c);
  if (c === "running") return chalk.cyan(c);
  return chalk.yellow(c);
}

export function commandText(doc: ReceiptDocument): string {
  const body = doc.request.body as { command?: unknown; jobs?: unknown } | null;
  if ((doc.kind === "jobs_submit" || doc.kind === "jobs_run") && Array.isArray(body?.jobs)) {
    const jobs = body.jobs as Array<{ name?: unknown; command?: unknown } | null>;
    if (jobs.length === 1) return `job ${jobs[0]?.name ?? "?"}: ${formatCommand(jobs[0]?.command)}`;
    return `jobs ${jobs.map((j) => j?.name ?? "?").join(", ")}`;
  }
  // Not a command: the request itself (an MCP tool's file write, signal, stop...).
  if (doc.kind === "request") return `${doc.request.method} ${doc.request.path}`;
  return formatCommand(body?.command);
}

/** An execute request's command as a person would type it: argv quoted where needed, or sh -c "…". */
export function formatCommand(command: unknown): string {
  if (typeof command === "string") return `sh -c ${JSON.stringify(command)}`;
  if (Array.isArray(command)) {
    return command.map((a) => (/^[\w@%+=:,./-]+$/.test(String(a)) ? String(a) : JSON.stringify(a))).join(" ");
  }
  return "?";
}

export function printReceiptDetail(io: IO, doc: DetailedReceiptDocument): void {
  const { chalk } = io;
  const label = (s: string) => chalk.bold(s.padEnd(17));
  const line = (k: string, v: string) => io.out(`${label(k)}${v}`);
  line("Receipt", doc.receipt_id);
  const exit = doc.exit === null ? "" : `   exit ${doc.exit}`;
  line(
    "Classification",
    `${colorClassification(chalk, doc.classification)}   may have run: ${doc.may_have_run ? "yes" : "no"}${exit}`,
  );
  if (doc.outcome !== null) {
    const detail = [
      `outcome ${doc.outcome}`,
      doc.exit_code === null ? null : `exit_code ${doc.exit_code}`,
      doc.signal === null ? null : `signal ${doc.signal}`,
      doc.system_error === null ? null : `system_error ${doc.system_error}`,
      doc.end_reason === null ? null : `end_reason ${doc.end_reason}`,
      doc.record_pending ? "record_pending" : null,
    ].filter(Boolean);
    line("Result", detail.join(", "));
  }
  // What it used, measured for it alone (docs/operations.md, "Per-command usage").
  if (doc.usage !== null) line("Used", usageLine(doc.usage));
  // What its sandbox's egress proxy refused while it ran (docs/network.md, "Evidence").
  if (doc.egress_denied !== null) {
    const [summary, ...each] = egressDeniedLines(doc.egress_denied);
    line("Egress denied", summary!);
    for (const d of each) line("", d);
  }
  if (doc.error) line("Error", `${doc.error.code}: ${doc.error.message}`);
  line("Command", commandText(doc));
  const created = createdBy(doc);
  const title = { execution: "Execution", process: "Process", request: "Request id" }[created.noun];
  line(title, created.id ?? chalk.dim(`(no ${created.noun} id received)`));
  // The backend boot it belongs to, sent with what sbx does to it through this receipt.
  if (doc.boot !== null) line("Boot", doc.boot);
  line("Sandbox", doc.sandbox_id);
  // The filesystem it ran on (docs/images.md, "Evidence"); a host-root sandbox says nothing here.
  if (doc.image_digest !== null) line("Image", doc.image_digest);
  line("Backend", `${doc.profile ?? chalk.dim("(no profile)")}  ${doc.api_url}`);
  line("Idempotency key", doc.idempotency_key);
  if (doc.mcp_tool !== null) line("MCP tool call", `${doc.mcp_tool} (request ${doc.mcp_request_id ?? "?"})`);
  line("Request", `${doc.request.method} ${doc.request.path}  sha256 ${doc.request.body_sha256}`);
  line("Created", doc.created_at);
  if (doc.stdout_truncated || doc.stderr_truncated) {
    line(
      "Output",
      `truncated: ${[doc.stdout_truncated && "stdout", doc.stderr_truncated && "stderr"].filter(Boolean).join(", ")}`,
    );
  }
  io.out("");
  io.out(chalk.bold("Attempts"));
  for (const a of doc.attempts)
    io.out(`  #${a.attempt}  ${a.dispatched_at}  body sha256 ${a.body_sha256.slice(0, 16)}…`);
  io.out("");
  io.out(chalk.bold("Observations"));
  for (const o of doc.observations) {
    const bits = [
      o.at,
      o.source.padEnd(8),
      o.attempt === null ? "   " : `#${o.attempt}`.padEnd(3),
      colorClassification(chalk, o.classification),
      o.http_status === null ? null : `HTTP ${o.http_status}`,
      o.outcome === null ? null : `outcome ${o.outcome}`,
      o.exit_code === null ? null : `exit_code ${o.exit_code}`,
      o.signal === null ? null : `signal ${o.signal}`,
      o.system_error === null ? null : o.system_error,
      o.record_pending ? "record_pending" : null,
      o.error === null ? null : `${o.error.code}${o.error.message ? `: ${o.error.message}` : ""}`,
      o.retry_after_ms === null ? null : `retry after ${o.retry_after_ms}ms`,
    ].filter((b) => b !== null);
    io.out(`  ${bits.join("  ")}`);
  }
  if (doc.next !== null) {
    io.out("");
    io.out(`${label("Next")}${explain(doc).replace(/^sbx: /, "")}`);
  }
}
