// sbx receipts timeline on a terminal and in a pipe, in-process through main(): one row
// per receipt in time order, a bar from dispatch to settlement, a symbol by
// classification, those in doubt open and marked; 80 columns at most; plain in a pipe.

import stringWidth from "string-width";
import { describe, expect, it, type TestContext } from "vitest";
import { ExitCodes } from "../../src/common/exit-codes.js";
import { resolvePaths } from "../../src/config/paths.js";
import { ReceiptStore } from "../../src/receipts/store.js";
import { renderTimeline, SYMBOLS, timelineItem } from "../../src/cli/render/timeline.js";
import { detailedReceiptDocument } from "../../src/receipts/document.js";
import { makeHome, removeHome } from "../support/cli.js";
import { runMain } from "../support/in-process.js";
import { deadlineAnswer, failedAnswer, newReceipt, succeededAnswer } from "../support/receipt-store.js";

const ANSI = /\u001b\[/;
/** Columns as a terminal draws the line: colour takes none, a wide character two. */
const width = (line: string) => stringWidth(line);

function home(t: TestContext) {
  const dir = makeHome("sbx-timeline-");
  t.onTestFinished(() => removeHome(dir));
  const store = ReceiptStore.open(resolvePaths({ SBX_HOME: dir }).receiptsDb);
  const t0 = Date.now() - 60 * 60_000;
  const at = (min: number) => new Date(t0 + min * 60_000);
  const ids: string[] = [];
  try {
    const cmd = (c: string[]) => Buffer.from(JSON.stringify({ command: c }));
    const a = store.createForDispatch(newReceipt({ body: cmd(["make", "build"]) }), at(0)).receipt_id;
    store.recordObservation(a, "answer", succeededAnswer("exe_a"), { attempt: 1, now: at(10) });
    const b = store.createForDispatch(
      newReceipt({ body: cmd(["make", "deploy", "--to", "production-cluster-west"]) }),
      at(12),
    ).receipt_id;
    store.recordObservation(b, "answer", failedAnswer("exe_b"), { attempt: 1, now: at(20) });
    const c = store.createForDispatch(newReceipt({ body: cmd(["migrate"]) }), at(30)).receipt_id;
    store.recordObservation(c, "answer", deadlineAnswer(), { attempt: 1, now: at(35) });
    ids.push(a, b, c);
  } finally {
    store.close();
  }
  return { dir, ids };
}

describe.concurrent("sbx receipts timeline", () => {
  it("on an 80-column terminal: fits, in time order, colour and symbols, the one in doubt open and marked", async (t) => {
    const { dir, ids } = home(t);
    const r = await runMain(["receipts", "timeline", "--since", "2h"], {
      home: dir,
      tty: true,
      env: { NO_COLOR: undefined },
    });
    expect(r.code).toBe(ExitCodes.ok);
    const lines = r.stdout.trimEnd().split("\n");
    for (const line of lines) expect(width(line), line).toBeLessThanOrEqual(80);
    expect(r.stdout).toMatch(ANSI);
    const rows = lines.filter((l) => /rcp_/.test(l));
    expect(rows).toHaveLength(3);
    expect(rows[0]).toContain("✓");
    expect(rows[0]).toContain("make build");
    expect(rows[1]).toContain("✗");
    expect(rows[2]).toContain("?");
    expect(rows[2]).toMatch(/▒+.*\?/);
    expect(ids[0]!.startsWith(rows[0]!.replace(/\u001b\[[0-9;]*m/g, "").slice(2, 14))).toBe(true);
    expect(lines[0]).toMatch(
      /^3 receipts, \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ to \d\d:\d\d:\d\dZ \([0-9hms]+\), 1 in doubt$/,
    );
  });

  it("piped: plain ASCII, no colour, 80 columns, a legend", async (t) => {
    const { dir } = home(t);
    const r = await runMain(["receipts", "timeline", "--since", "2h"], { home: dir });
    expect(r.code).toBe(ExitCodes.ok);
    expect(r.stdout).not.toMatch(ANSI);
    expect(r.stdout).toMatch(/^[\x20-\x7e\n…]*$/);
    const lines = r.stdout.trimEnd().split("\n");
    for (const line of lines) expect(width(line), line).toBeLessThanOrEqual(80);
    const rows = lines.filter((l) => /rcp_/.test(l));
    expect(rows.map((l) => l[0])).toEqual(["+", "x", "?"]);
    expect(rows[0]).toMatch(/\|?=+/);
    expect(rows[2]).toMatch(/~+\?$/);
    expect(lines.at(-1)).toBe("+ succeeded  x failed  ? local_timeout");
  });

  it("narrow and wide terminals: every line fits", () => {
    const now = Date.now();
    const docs = [0, 1, 2].map((i) => {
      const at = new Date(now - (3 - i) * 60_000).toISOString();
      return detailedReceiptDocument({
        receipt: {
          receipt_id: `rcp_${"x".repeat(21)}${i}`,
          kind: "execute",
          profile: null,
          api_url: "unix:/x",
          sandbox_id: "default",
          idempotency_key: `k${i}`,
          method: "POST",
          path: "/",
          body: Buffer.from(JSON.stringify({ command: ["echo", "a very long argument ".repeat(5)] })),
          body_sha256: "",
          created_at: at,
          execution_id: null,
          process_id: null,
          request_id: null,
          classification: "dispatched",
        },
        attempts: [{ attempt: 1, dispatched_at: at, body_sha256: "", pid: 1 }],
        observations: [],
      } as never);
    });
    for (const w of [40, 60, 80, 120, 200]) {
      const lines = renderTimeline(docs.map(timelineItem), { width: w, unicode: true, chalk: null, now });
      for (const line of lines) expect(width(line), `${w}: ${line}`).toBeLessThanOrEqual(w);
    }
  });

  it("at 80 columns with wide characters in commands and a receipt still running: every line fits", () => {
    // A command's CJK or emoji takes two columns; ▶ is drawn as a two-column emoji by
    // some terminals, so a running row (symbol and end mark) must not use it.
    const now = Date.now();
    const commands = [
      ["echo", "日本語のテキストを表示する"],
      ["echo", "🚀🚀🚀 deploy 🚀🚀🚀"],
      ["sleep", "600"],
    ];
    const docs = commands.map((command, i) => {
      const at = new Date(now - (3 - i) * 60_000).toISOString();
      return detailedReceiptDocument({
        receipt: {
          receipt_id: `rcp_${"y".repeat(15)}${i}`,
          kind: "execute",
          profile: null,
          api_url: "unix:/x",
          sandbox_id: "default",
          idempotency_key: `k${i}`,
          method: "POST",
          path: "/",
          body: Buffer.from(JSON.stringify({ command })),
          body_sha256: "",
          created_at: at,
          execution_id: null,
          process_id: null,
          request_id: null,
          classification: i === 2 ? "running" : "succeeded",
        },
        attempts: [{ attempt: 1, dispatched_at: at, body_sha256: "", pid: 1 }],
        observations: [],
      } as never);
    });
    // The last one still running (not in doubt): its bar open to now, its end marked.
    const items = docs.map(timelineItem).map((item, i) => (i === 2 ? { ...item, end: null, in_doubt: false } : item));
    const lines = renderTimeline(items, { width: 80, unicode: true, chalk: null, now });
    const rows = lines.filter((l) => l.includes("rcp_"));
    expect(rows).toHaveLength(3);
    expect(rows[0]).toContain("日本");
    expect(rows[1]).toContain("🚀");
    for (const line of lines) expect(width(line), line).toBeLessThanOrEqual(80);
    const drawn = [...Object.values(SYMBOLS).flat(), [...rows[2]!].at(-1)!];
    expect(drawn.filter((g) => /\p{Extended_Pictographic}/u.test(g))).toEqual([]);
  });

  it("nothing in the window: said on stderr, exit 0", async (t) => {
    const { dir } = home(t);
    const r = await runMain(["receipts", "timeline", "--since", "2026-01-01T00:00:00Z", "--limit", "1"], { home: dir });
    expect(r.code).toBe(0);
    const none = await runMain(["receipts", "timeline", "--since", new Date(Date.now() + 60_000).toISOString()], {
      home: dir,
    });
    expect(none).toMatchObject({ code: 0, stdout: "" });
    expect(none.stderr).toMatch(/^sbx: no receipts created since /);
  });
});
