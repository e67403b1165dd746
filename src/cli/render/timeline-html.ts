// The timeline as one self-contained HTML page (sbx receipts timeline --html FILE): no
// network fetch (a Content-Security-Policy allows nothing from outside), the receipts
// inline as JSON, zoomable, each bar opening that receipt's details — request,
// attempts, observations, classification and what to do next — for a post-mortem.
// Receipt content reaches the page only as text (textContent): never as markup.

import { SYMBOLS, spanText, type TimelineItem } from "./timeline.js";

/** What the page's script reads: one entry per receipt. */
function pageData(items: readonly TimelineItem[], now: number) {
  return {
    now,
    items: [...items]
      .sort((a, b) => a.start - b.start)
      .map((i) => ({
        id: i.doc.receipt_id,
        command: i.command,
        classification: i.doc.classification,
        symbol: SYMBOLS[i.doc.classification][0],
        in_doubt: i.in_doubt,
        start: i.start,
        end: i.end,
        span: i.end === null ? null : spanText(i.end - i.start),
        exit: i.doc.exit,
        explanation: i.explanation,
        next: i.doc.next,
        sandbox: i.doc.sandbox_id,
        profile: i.doc.profile,
        api_url: i.doc.api_url,
        idempotency_key: i.doc.idempotency_key,
        execution_id: i.doc.execution_id,
        request: {
          method: i.doc.request.method,
          path: i.doc.request.path,
          body: JSON.stringify(i.doc.request.body, null, 2),
          body_sha256: i.doc.request.body_sha256,
        },
        attempts: i.doc.attempts,
        observations: i.doc.observations,
        stdout: i.doc.stdout,
        stderr: i.doc.stderr,
      })),
  };
}

/** JSON that can sit inside a <script> element whatever the receipts hold. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

const STYLE = `
:root { --zoom: 1; --label: 340px; font: 14px/1.4 system-ui, sans-serif; color: #1d2330; background: #fafbfc; }
body { margin: 0; }
header { padding: 16px 20px 8px; border-bottom: 1px solid #dde1e7; background: #fff; }
h1 { font-size: 18px; margin: 0 0 4px; }
#range { margin: 0 0 8px; color: #4a5260; }
.controls { display: flex; gap: 6px; align-items: center; margin-bottom: 8px; }
.controls button { min-width: 32px; }
.hint { color: #6b7280; font-size: 12px; }
.legend { list-style: none; display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 0; padding: 0; font-size: 12px; }
.legend li { display: flex; align-items: center; gap: 4px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; }
#scroller { overflow-x: auto; }
#canvas { width: calc(var(--label) + (100% - var(--label)) * var(--zoom)); min-width: 100%; }
.row { display: flex; align-items: center; height: 26px; border-bottom: 1px solid #eef0f3; }
.row:hover { background: #f1f4f8; }
.label { position: sticky; left: 0; z-index: 1; flex: 0 0 var(--label); width: var(--label); box-sizing: border-box;
  padding: 0 8px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; background: inherit; background-color: #fafbfc; }
.label code { font-size: 12px; }
.cmd { color: #4a5260; }
.track { position: relative; flex: 1; height: 100%; }
.axis { height: 28px; font-size: 11px; color: #6b7280; }
.tick { position: absolute; top: 0; height: 100%; border-left: 1px solid #d4d8de; padding-left: 3px; white-space: nowrap; }
.bar { position: absolute; top: 5px; height: 16px; min-width: 4px; border: 0; border-radius: 3px; padding: 0; cursor: pointer; }
.bar:focus-visible { outline: 2px solid #1d4ed8; outline-offset: 1px; }
.bar.open { border-top-right-radius: 0; border-bottom-right-radius: 0;
  background-image: repeating-linear-gradient(135deg, rgba(255,255,255,.45) 0 4px, transparent 4px 8px); }
.doubt-mark { position: absolute; top: 4px; font-weight: bold; color: #7c2d12; background: #fff7e6; border-radius: 2px; padding: 0 2px; line-height: 16px; pointer-events: none; }
.succeeded { background-color: #16a34a; } .failed, .timed_out { background-color: #dc2626; }
.cancelled, .rejected, .not_started { background-color: #9ca3af; } .running { background-color: #0891b2; }
.doubt { background-color: #f59e0b; }
dialog { max-width: min(900px, 92vw); width: 900px; border: 1px solid #c9ced6; border-radius: 8px; padding: 0; }
dialog::backdrop { background: rgba(15, 23, 42, .35); }
#details-body { padding: 16px 20px 20px; }
#details-body h2 { font-size: 16px; margin: 0 0 6px; }
#details-body h3 { font-size: 13px; margin: 16px 0 4px; text-transform: uppercase; letter-spacing: .04em; color: #4a5260; }
#details-body pre { background: #f3f4f6; padding: 8px; overflow: auto; max-height: 240px; margin: 0; font-size: 12px; }
#details-body table { border-collapse: collapse; font-size: 12px; width: 100%; }
#details-body td, #details-body th { border-bottom: 1px solid #eceef1; padding: 3px 6px; text-align: left; vertical-align: top; }
.close { float: right; margin: 8px 10px 0 0; font-size: 18px; border: 0; background: none; cursor: pointer; }
.next { background: #fff7e6; border: 1px solid #f6d8a8; padding: 8px; border-radius: 4px; }
`;

const SCRIPT = `
"use strict";
const data = JSON.parse(document.getElementById("data").textContent);
const items = data.items;
const t0 = Math.min(...items.map((i) => i.start));
const t1 = Math.max(t0 + 1, ...items.map((i) => (i.end === null ? Math.max(data.now, i.start) : i.end)));
const pct = (t) => ((t - t0) / (t1 - t0)) * 100;
const el = (tag, attrs, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k === "style") e.style.cssText = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
};
const colourClass = (i) => (i.in_doubt ? "doubt" : i.classification);
const iso = (ms) => new Date(ms).toISOString();

const rows = document.getElementById("rows");
items.forEach((item, n) => {
  const end = item.end === null ? Math.max(data.now, item.start) : item.end;
  const bar = el("button", {
    class: "bar " + colourClass(item) + (item.end === null ? " open" : ""),
    style: "left:" + pct(item.start) + "%;width:" + Math.max(0, pct(end) - pct(item.start)) + "%",
    "data-i": String(n),
    title: item.id + " — " + item.classification + (item.span ? " (" + item.span + ")" : ""),
    "aria-label": item.id + ": " + item.classification,
  });
  bar.addEventListener("click", () => show(item));
  const track = el("div", { class: "track" }, bar);
  if (item.in_doubt) track.append(el("span", { class: "doubt-mark", style: "left:calc(" + pct(end) + "% - 12px)" }, "?"));
  rows.append(
    el("div", { class: "row" },
      el("div", { class: "label", title: item.command },
        el("span", { class: "sym" }, item.symbol), " ", el("code", {}, item.id), " ", el("span", { class: "cmd" }, item.command)),
      track),
  );
});

const axis = document.getElementById("axis-track");
function drawAxis() {
  axis.textContent = "";
  const px = axis.getBoundingClientRect().width || 1;
  const steps = [1e3, 5e3, 1e4, 3e4, 6e4, 3e5, 6e5, 18e5, 36e5, 108e5, 216e5, 864e5];
  const span = t1 - t0;
  const step = steps.find((s) => (s / span) * px >= 90) || steps[steps.length - 1];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
    axis.append(el("div", { class: "tick", style: "left:" + pct(t) + "%" }, new Date(t).toISOString().slice(11, 19)));
  }
}

const zoomInput = document.getElementById("zoom");
function setZoom(z) {
  const v = Math.min(64, Math.max(1, z));
  document.documentElement.style.setProperty("--zoom", String(v));
  zoomInput.value = String(v);
  drawAxis();
}
zoomInput.addEventListener("input", () => setZoom(Number(zoomInput.value)));
document.getElementById("zoom-in").addEventListener("click", () => setZoom(Number(zoomInput.value) * 1.5));
document.getElementById("zoom-out").addEventListener("click", () => setZoom(Number(zoomInput.value) / 1.5));
document.getElementById("zoom-reset").addEventListener("click", () => setZoom(1));
document.getElementById("scroller").addEventListener("wheel", (e) => {
  if (!e.ctrlKey) return;
  e.preventDefault();
  setZoom(Number(zoomInput.value) * (e.deltaY < 0 ? 1.2 : 1 / 1.2));
}, { passive: false });
window.addEventListener("resize", drawAxis);

function table(head, rowsOf) {
  return el("table", {}, ...(head.length ? [el("tr", {}, ...head.map((h) => el("th", {}, h)))] : []),
    ...rowsOf.map((r) => el("tr", {}, ...r.map((c) => el("td", {}, c === null || c === undefined ? "—" : String(c))))));
}

const dialog = document.getElementById("details");
const body = document.getElementById("details-body");
function show(item) {
  body.textContent = "";
  body.append(
    el("h2", {}, item.symbol + " " + item.id),
    el("p", {}, el("strong", {}, item.classification), item.exit === null ? "" : " — exit " + item.exit,
      item.span ? " — " + item.span : item.in_doubt ? " — in doubt" : " — still running"),
    el("p", { class: "next" }, item.explanation),
  );
  if (item.next) body.append(el("p", {}, "Next: ", el("code", {}, item.next)));
  body.append(
    el("h3", {}, "Request"),
    table([], [
      ["command", item.command], ["sandbox", item.sandbox], ["sent to", (item.profile || "(no profile)") + " " + item.api_url],
      ["method", item.request.method + " " + item.request.path], ["idempotency key", item.idempotency_key],
      ["execution", item.execution_id], ["body sha256", item.request.body_sha256],
    ]),
    el("pre", {}, item.request.body),
    el("h3", {}, "Attempts"),
    table(["#", "dispatched at"], item.attempts.map((a) => [a.attempt, a.dispatched_at])),
    el("h3", {}, "Observations"),
    table(["at", "source", "classification", "HTTP", "outcome", "exit", "error"], item.observations.map((o) => [
      o.at, o.source, o.classification, o.http_status, o.outcome,
      o.exit_code === null && o.signal ? o.signal : o.exit_code, o.error ? o.error.code + ": " + o.error.message : null,
    ])),
  );
  if (item.stdout) body.append(el("h3", {}, "stdout"), el("pre", {}, item.stdout));
  if (item.stderr) body.append(el("h3", {}, "stderr"), el("pre", {}, item.stderr));
  dialog.showModal();
}

setZoom(1);
`;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page for these receipts (`now`: where open bars end). */
export function timelineHtml(items: readonly TimelineItem[], now: number, title: string): string {
  const data = pageData(items, now);
  const present = [...new Set(data.items.map((i) => i.classification))];
  const legend = present
    .map((c) => {
      const item = data.items.find((i) => i.classification === c)!;
      return `<li><span class="swatch ${item.in_doubt ? "doubt" : c}"></span>${escapeHtml(`${SYMBOLS[c][0]} ${c}`)}</li>`;
    })
    .join("");
  const doubt = data.items.filter((i) => i.in_doubt).length;
  const first = Math.min(...data.items.map((i) => i.start));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${escapeHtml(title)}</h1>
<p id="range">${escapeHtml(
    `${data.items.length} receipt${data.items.length === 1 ? "" : "s"} from ${new Date(first).toISOString()}${
      doubt ? `; ${doubt} in doubt (marked ?)` : ""
    }. Click a bar for its details.`,
  )}</p>
<div class="controls"><button id="zoom-out" title="Zoom out">−</button><input id="zoom" type="range" min="1" max="64" step="0.1" value="1" aria-label="Zoom"><button id="zoom-in" title="Zoom in">+</button><button id="zoom-reset">Fit</button><span class="hint">Ctrl + wheel zooms; scroll sideways to move.</span></div>
<ul class="legend">${legend}</ul>
</header>
<main id="scroller"><div id="canvas">
<div class="row axis"><div class="label">receipt</div><div class="track" id="axis-track"></div></div>
<div id="rows"></div>
</div></main>
<dialog id="details"><form method="dialog"><button class="close" aria-label="Close">×</button></form><div id="details-body"></div></dialog>
<script type="application/json" id="data">${scriptJson(data)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
