// The HTML timeline in a real browser (Debian's chromium, headless, driven by
// playwright-core over its own DevTools protocol): a bar per receipt, a bar opens that
// receipt's details, nothing fetched from the network, no console errors. A
// screenshot is kept in test-output/ (gitignored) for a person to look at.

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { resolvePaths } from "../../src/config/paths.js";
import { ReceiptStore } from "../../src/receipts/store.js";
import { makeHome, REPO_ROOT, removeHome } from "../support/cli.js";
import { runMain } from "../support/in-process.js";
import { CHROMIUM, describeNeeding } from "../support/requirements.js";
import { tempDir } from "../support/temp.js";
import { deadlineAnswer, failedAnswer, newReceipt, succeededAnswer } from "../support/receipt-store.js";

const OUT = path.join(REPO_ROOT, "test-output");

describeNeeding("chromium", "sbx receipts timeline --html in headless Chromium", () => {
  let home: string;
  let page: string;
  const ids: string[] = [];
  beforeAll(async () => {
    home = makeHome("sbx-timeline-html-");
    const store = ReceiptStore.open(resolvePaths({ SBX_HOME: home }).receiptsDb);
    const t0 = Date.now() - 30 * 60_000;
    const at = (min: number) => new Date(t0 + min * 60_000);
    try {
      const a = store.createForDispatch(
        newReceipt({ body: Buffer.from('{"command":["make","test"]}') }),
        at(0),
      ).receipt_id;
      store.recordObservation(a, "answer", succeededAnswer("exe_a", "ok </script><b>not markup</b>\n"), {
        attempt: 1,
        now: at(4),
      });
      const b = store.createForDispatch(
        newReceipt({ body: Buffer.from('{"command":["deploy","--prod"]}') }),
        at(2),
      ).receipt_id;
      store.recordObservation(b, "answer", failedAnswer("exe_b", 2), { attempt: 1, now: at(9) });
      const c = store.createForDispatch(
        newReceipt({ body: Buffer.from('{"command":["migrate","db"]}') }),
        at(5),
      ).receipt_id;
      store.recordObservation(c, "answer", deadlineAnswer(), { attempt: 1, now: at(12) });
      ids.push(a, b, c);
    } finally {
      store.close();
    }
    page = path.join(home, "timeline.html");
    const r = await runMain(["receipts", "timeline", "--since", "2h", "--html", page], { home });
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(() => removeHome(home));

  it("renders a bar per receipt; a bar opens its details; no network, no console errors", async () => {
    const { chromium } = await import("playwright-core");
    const profile = tempDir("sbx-chromium-");
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM!,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      viewport: { width: 1280, height: 720 },
    });
    try {
      const tab = await context.newPage();
      const problems: string[] = [];
      const requests: string[] = [];
      tab.on("console", (m) => {
        if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
      });
      tab.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
      tab.on("request", (r) => requests.push(r.url()));
      await tab.goto(`file://${page}`);
      await tab.waitForSelector(".bar");
      expect(await tab.locator(".bar").count()).toBe(3);
      expect(await tab.locator(".doubt-mark").count()).toBe(1);
      // Zoom in and back: the bars stay, the axis is redrawn.
      await tab.click("#zoom-in");
      await tab.click("#zoom-in");
      expect(Number(await tab.inputValue("#zoom"))).toBeGreaterThan(2);
      expect(await tab.locator(".tick").count()).toBeGreaterThan(0);
      await tab.click("#zoom-reset");
      // The failed one: its request, attempts, observations, classification and next step.
      await tab.click(`.bar[data-i="1"]`);
      const dialog = tab.locator("dialog#details");
      await dialog.waitFor({ state: "visible" });
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the text as rendered
      const text = await dialog.innerText();
      expect(text).toContain(ids[1]!);
      expect(text).toContain("failed");
      expect(text).toContain("deploy --prod");
      expect(text).toMatch(/attempts\n#\tdispatched at\n1\t/i);
      expect(text).toMatch(/observations\n[\s\S]*\tdispatch\tdispatched\t[\s\S]*\tanswer\tfailed\t200\tfailed\t2\t/i);
      fs.mkdirSync(OUT, { recursive: true });
      await tab.screenshot({ path: path.join(OUT, "timeline-details.png") });
      await tab.keyboard.press("Escape");
      // The one in doubt says what to do next; receipt content stays text.
      await tab.click(`.bar[data-i="2"]`);
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the text as rendered
      expect(await dialog.innerText()).toContain(`sbx receipts wait ${ids[2]}`);
      await tab.keyboard.press("Escape");
      await tab.click(`.bar[data-i="0"]`);
      expect(await tab.locator("#details-body b").count()).toBe(0);
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the text as rendered
      expect(await dialog.innerText()).toContain("</script><b>not markup</b>");
      await tab.keyboard.press("Escape");
      await tab.screenshot({ path: path.join(OUT, "timeline.png"), fullPage: true });
      expect(problems).toEqual([]);
      expect(requests.filter((u) => u !== `file://${page}`)).toEqual([]);
    } finally {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    }
  }, 120_000);
});
