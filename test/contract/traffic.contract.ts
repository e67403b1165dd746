// The validating run: every exchange the test suite's backends served (recorded into
// SBX_WIRE_RECORD by npm test, and by the end-to-end suite against the release binary)
// is held to the OpenAPI document by third-party validators (test/support/wire-validator.ts).
// Any request or answer off the document fails it; so does an error code of the
// document that no test provoked. It prints which route × status pairs were seen.

import fs from "node:fs";
import path from "node:path";
import { beforeAll, expect, it } from "vitest";
import { ERRORS } from "../../src/protocol/errors.js";
import { OPERATIONS } from "../../src/protocol/openapi/operations.js";
import { ROUTE_NAMES } from "../../src/protocol/routes.js";
import { REPO_ROOT } from "../support/cli.js";
import { describeNeeding } from "../support/requirements.js";
import { readExchanges, type TrafficReport, validateTraffic } from "../support/wire-validator.js";

const dir = process.env.SBX_WIRE_RECORD;
const document = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "docs", "openapi.json"), "utf8"));

function summary(report: TrafficReport): string {
  const pairs = [...report.pairs].sort((a, b) => a[0].localeCompare(b[0]));
  return [
    `${report.exchanges} exchanges recorded, ${report.checked} checked against docs/openapi.json, ${report.violations.length} violations`,
    `skipped: ${JSON.stringify(report.skipped)}`,
    `${pairs.length} distinct route × status pairs:`,
    ...pairs.map(([pair, n]) => `  ${pair} (${n})`),
    `error codes answered: ${[...report.codes].map(([c, n]) => `${c} (${n})`).join(", ")}`,
    ...report.violations.slice(0, 400).map((v) => `VIOLATION ${v}`),
  ].join("\n");
}

describeNeeding(
  "traffic",
  "the recorded traffic (SBX_WIRE_RECORD; npm run test:contract records and checks it)",
  () => {
    let report: TrafficReport;
    beforeAll(async () => {
      report = await validateTraffic(document, readExchanges(dir!));
      const text = summary(report);
      fs.writeFileSync(path.join(dir!, "..", "contract-report.txt"), `${text}\n`);
      console.log(text);
    });

    it("matches the OpenAPI document, request by request and answer by answer, events included", () => {
      expect(report.violations.slice(0, 40)).toEqual([]);
    });

    it("has every route answered successfully at least once", () => {
      const answered = ROUTE_NAMES.filter((name) =>
        // A WebSocket route (a terminal) succeeds with 101 Switching Protocols.
        [...report.pairs.keys()].some((p) => /^[^ ]+ (2\d\d|101)$/.test(p) && p.startsWith(`${name} `)),
      );
      expect(ROUTE_NAMES.filter((name) => !answered.includes(name))).toEqual([]);
    });

    it("exercises every error code the document lists at least once", () => {
      expect(Object.keys(ERRORS).filter((code) => !report.codes.has(code))).toEqual([]);
    });

    it("refuses a stale handle on every route that takes one (the ownership fences, each detail checked above)", () => {
      const fenced = ROUTE_NAMES.filter((name) => OPERATIONS[name].errors.includes("stale_handle"));
      expect(fenced).toEqual(["executions.cancel", "process.stop", "process.stdin", "process.signal"]);
      expect(fenced.filter((name) => !report.routeCodes.has(`${name} stale_handle`))).toEqual([]);
    });
  },
);
