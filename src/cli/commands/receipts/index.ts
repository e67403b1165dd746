// sbx receipts: the local record of everything sbx sent.
// Here: the declarations of its verbs (what --help, the man page and the completions
// read); each verb's run code is its own module, loaded only when that verb runs.

import type { Command } from "commander";
import { CLASSIFICATIONS } from "../../../receipts/classifications.js";
import {
  type Bind,
  declareChoices,
  declareCompletion,
  positiveIntArg,
  withExamples,
  declareNoun,
} from "../../command.js";

export function register(program: Command, bind: Bind): void {
  declareNoun(program, bind, {
    name: "receipts",
    summary: "inspect, observe and resubmit receipts",
    description:
      "Every mutation sbx sends is first written as a receipt: the Idempotency-Key, the exact\n" +
      "request bytes, where it was sent. Observations are appended as answers and reads arrive.\n" +
      "A receipt is named by its id (rcp_…), its execution id, its idempotency key, or a unique prefix.",
    verbs: [
      declareList,
      declareShow,
      declareWait,
      declareRefresh,
      declareResubmit,
      declareExport,
      declarePrune,
      declareVerify,
      declareKey,
      declareTimeline,
    ],
    examples: [
      { command: "sbx receipts list", description: "what ran, newest first" },
      { command: "sbx receipts show rcp_7k2m9qfd", description: "one receipt: what was sent, every answer" },
      { command: "sbx receipts wait rcp_7k2m9qfd", description: "observe an execution in doubt until it settles" },
    ],
  });
}

function declareList(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("list")
    .summary("list receipts, newest first")
    .description("List receipts, newest first. Piped, rows are tab-separated with ISO-8601 times.")
    .option("--classification <c>", "only these classifications (comma-separated)")
    .option("--limit <n>", "at most N receipts (default: 20)", positiveIntArg)
    .option("--json", "print a JSON array of receipt documents")
    .action(bind(() => import("./list.js")));
  declareChoices(cmd, "--classification", CLASSIFICATIONS);
  withExamples(cmd, [
    { command: "sbx receipts list", description: "the last 20 receipts" },
    { command: "sbx receipts list --classification outcome_unknown,local_timeout", description: "what is in doubt" },
    { command: "sbx receipts list --json --limit 100", description: "for scripts" },
  ]);
}

function declareRefresh(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("refresh")
    .summary("observe the execution behind a receipt once")
    .description(
      "Read the execution once (by execution id, or by idempotency key when no id was received)\n" +
        "and record what was learned. A failed read is recorded but never erases an earlier answer.\n" +
        "Never sends the request again.",
    )
    .argument("<id>", "receipt id, execution id, idempotency key, or a unique prefix")
    .option("--json", "print the receipt document")
    .action(bind(() => import("./refresh.js")));
  declareCompletion(cmd, "<id>", "receipt-id");
  withExamples(cmd, [{ command: "sbx receipts refresh rcp_7k2m9qfd", description: "one read, recorded" }]);
}

function declareResubmit(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("resubmit")
    .summary("send a receipt's request again, with the original key and bytes")
    .description(
      "Send the stored request again: the original Idempotency-Key and the original body bytes, to\n" +
        "the backend it was first sent to, recorded as a new attempt on the same receipt. The backend\n" +
        "deduplicates by key, so a request that already ran is answered, not run again. Safe after\n" +
        "not_started; after anything else, prefer `sbx receipts wait`.",
    )
    .argument("<id>", "receipt id, execution id, idempotency key, or a unique prefix")
    .option("--client-timeout <dur>", "local deadline for an answer (default: the stored timeout + 30s)")
    .option("--force", "send it even when its result is already known")
    .option("--json", "print the receipt document")
    .action(bind(() => import("./resubmit.js")));
  declareCompletion(cmd, "<id>", "receipt-id");
  withExamples(cmd, [{ command: "sbx receipts resubmit rcp_7k2m9qfd", description: "after not_started (exit 75)" }]);
}

function declareShow(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("show")
    .summary("show one receipt with its attempts and observations")
    .description(
      "Show a receipt: what was sent (key, body sha256), every attempt, every observation in order,\n" +
        "the current classification and, when it is in doubt, the exact next step.",
    )
    .argument("<id>", "receipt id, execution id, idempotency key, or a unique prefix")
    .option("--json", "print the receipt document with attempts and observations")
    .action(bind(() => import("./show.js")));
  declareCompletion(cmd, "<id>", "receipt-id");
  withExamples(cmd, [
    { command: "sbx receipts show rcp_7k2m9qfd", description: "by a prefix of the receipt id" },
    { command: "sbx receipts show exe_4fz2hk8d --json", description: "by execution id, as JSON" },
  ]);
}

function declarePrune(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("prune")
    .summary("delete receipts created before a time")
    .description(
      "Delete receipts (with their attempts and observations) created before TIME. Receipts still\n" +
        "in doubt (dispatched, outcome_unknown, …) or running are kept unless --include-in-doubt.",
    )
    .requiredOption("--before <time>", "ISO-8601 time, or a duration ago like 30d")
    .option("--include-in-doubt", "also delete receipts that are still in doubt")
    .option("--json", "print {deleted, before, kept_in_doubt}")
    .action(bind(() => import("./prune.js")));
  withExamples(cmd, [{ command: "sbx receipts prune --before 30d", description: "keep the last 30 days" }]);
}

function declareWait(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("wait")
    .summary("observe a receipt's execution until it is settled")
    .description(
      "Observe the original execution until it is terminal: by execution id with server-side waits\n" +
        "(at most 50 s each, repeated), or by idempotency key when no id was ever received. Prints the\n" +
        "output like exec and exits with the same code. Never sends the request again. Stops at\n" +
        "--timeout (default 15m), or when the backend answered a failure (5xx other than 503) 3 times\n" +
        "in a row, saying its answer; either way it exits with the receipt's code (255 while in doubt).",
    )
    .argument("<id>", "receipt id, execution id, idempotency key, or a unique prefix")
    .option("--timeout <dur>", "give up waiting after this long (default: 15m)")
    .option("--json", "print the receipt document")
    .action(bind(() => import("./wait.js")));
  declareCompletion(cmd, "<id>", "receipt-id");
  withExamples(cmd, [
    { command: "sbx receipts wait rcp_7k2m9qfd", description: "until settled, then exit like exec" },
    { command: "sbx receipts wait rcp_7k2m9qfd --timeout 30s --json", description: "bounded, for scripts" },
  ]);
}

function declareExport(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("export")
    .summary("print receipts as JSON Lines, or write a signed bundle")
    .description(
      "Print every receipt (with attempts and observations) as one JSON document per line, oldest\n" +
        "first. With --bundle, write one self-contained file instead: the receipts, the part of the\n" +
        "receipt chain that covers them, and a signature by this store's key (made on first use; see\n" +
        "`sbx receipts key`). `sbx receipts verify --bundle FILE` checks it on any machine\n" +
        "(docs/receipt-bundle.md).",
    )
    .option("--since <time>", "only receipts created at or after TIME (ISO-8601, or a duration ago like 7d)")
    .option("--bundle <file>", "write a signed bundle to FILE (- for stdout)")
    .option("--json", "with --bundle: describe what was written, as JSON")
    .action(bind(() => import("./export.js")));
  declareCompletion(cmd, "--bundle", "file");
  withExamples(cmd, [
    { command: "sbx receipts export --since 7d > receipts.jsonl", description: "last week's receipts" },
    { command: "sbx receipts export --bundle incident.sbx --since 2h", description: "evidence for a post-mortem" },
  ]);
}

function declareKey(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("key")
    .summary("show the public key that signs this store's bundles")
    .description(
      "Print the public half of the Ed25519 key that signs bundles (base64 of its 32 bytes), made on\n" +
        "first use and kept beside the receipt store, readable by you alone. Give it to whoever checks a\n" +
        "bundle: `sbx receipts verify --bundle FILE --key KEY`.",
    )
    .option("--pem", "print it as a PEM public key (for openssl)")
    .option("--json", "print {algorithm, public_key, fingerprint, file, pem}")
    .action(bind(() => import("./key.js")));
  withExamples(cmd, [
    { command: "sbx receipts key", description: "the key to check bundles against" },
    { command: "sbx receipts key --pem > sbx-receipts.pub", description: "for openssl pkeyutl -verify" },
  ]);
}

function declareVerify(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("verify")
    .summary("check that the receipt history is intact")
    .description(
      "Recompute the receipt chain: every entry of every receipt (request, attempts, observations)\n" +
        "against the hash it was recorded with, each receipt's order, and the store-wide chain over all\n" +
        "of them. Names each receipt, entry and position where something was changed, deleted, moved\n" +
        "or inserted. Prunes leave checkpoints and are reported as such. With --bundle, checks a signed\n" +
        "bundle: its signature, its key (--key) and the chain inside. Exit 0 when intact, 200 when not\n" +
        "(docs/receipt-chain.md), 74 when the home has no receipt store (none is made for it).",
    )
    .argument("[id...]", "only these receipts (id, execution id, idempotency key, or a unique prefix)")
    .option("--bundle <file>", "verify a bundle from `receipts export --bundle` instead (no store needed)")
    .option("--key <pub>", "with --bundle: the signer's public key (`sbx receipts key`), or a file holding it")
    .option("--json", "print the report as JSON")
    .action(bind(() => import("./verify.js")));
  declareCompletion(cmd, "[id...]", "receipt-id");
  declareCompletion(cmd, "--bundle", "file");
  withExamples(cmd, [
    { command: "sbx receipts verify", description: "the whole store" },
    { command: "sbx receipts verify rcp_0mhx --json", description: "one receipt, for scripts" },
    { command: 'sbx receipts verify --bundle incident.sbx --key "$KEY"', description: "a bundle made elsewhere" },
  ]);
}

function declareTimeline(noun: Command, bind: Bind): void {
  const cmd = noun
    .command("timeline")
    .summary("draw receipts against time, or write them as an HTML page")
    .description(
      "One row per receipt, oldest first: a bar from its dispatch to its settlement, a symbol and\n" +
        "a colour by classification; those still running or in doubt stay open, marked ? (in doubt)\n" +
        "or > (running). Fitted to the terminal; plain ASCII without colour in a pipe. --html writes\n" +
        "one self-contained page (nothing fetched from the network): zoomable, each bar opening that\n" +
        "receipt's request, attempts, observations, classification and what to do next.",
    )
    .option("--since <time>", "receipts created at or after TIME (ISO-8601, or a duration ago; default: 24h)")
    .option("--limit <n>", "at most the newest N receipts (default: 200)", positiveIntArg)
    .option("--html <file>", "write the timeline as one HTML page to FILE")
    .action(bind(() => import("./timeline.js")));
  declareCompletion(cmd, "--html", "file");
  withExamples(cmd, [
    { command: "sbx receipts timeline --since 2h", description: "the last two hours" },
    { command: "sbx receipts timeline --since 1d --html incident.html", description: "a page for the post-mortem" },
  ]);
}
