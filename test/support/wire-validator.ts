// Holding recorded traffic (src/backend/wire-record.ts) to the OpenAPI document with
// third-party tools: openapi-backend matches each exchange to its operation and
// validates its request, its status, its headers and its JSON body; Ajv validates
// each event of an event stream against the schema the document names for its type
// (the `x-sse-events` extension), the frames parsed by eventsource-parser. The
// document is made strict first: an object the document describes may carry no field
// it does not describe (clients ignore unknown fields; our own backend sends none).

import fs from "node:fs";
import path from "node:path";
import Ajv, { type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { createParser } from "eventsource-parser";
import { OpenAPIBackend, SetMatchType } from "openapi-backend";
import type { WireExchange } from "../../src/backend/http/wire-record.js";

// biome-ignore lint/suspicious/noExplicitAny: the document is plain JSON
type Doc = any;

/** Faults that imitate a broken proxy or network (not the backend): their answers are off the contract on purpose. */
const TRANSPORT_FAULTS = ["bad_gateway", "bare_503", "malformed", "drop"];

export interface ExchangeResult {
  /** `route status`, e.g. `execute 200`; null when skipped. */
  pair: string | null;
  /** The error code answered, if any. */
  code: string | null;
  problems: string[];
  skipped: string | null;
}

export interface TrafficReport {
  exchanges: number;
  checked: number;
  skipped: Record<string, number>;
  /** `route status` → exchanges. */
  pairs: Map<string, number>;
  /** Error code → exchanges. */
  codes: Map<string, number>;
  /** `route code` → exchanges: which route answered which error code. */
  routeCodes: Map<string, number>;
  violations: string[];
}

/** Every object schema with properties gets `additionalProperties: false` unless it says otherwise. */
function strict(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strict);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = strict(v);
  if ("properties" in out && !("additionalProperties" in out) && !("patternProperties" in out)) {
    out.additionalProperties = false;
  }
  return out;
}

function mediaType(header: string | undefined): string {
  return (header ?? "").split(";")[0]!.trim().toLowerCase();
}

function describeErrors(errors: unknown): string {
  return JSON.stringify(errors).slice(0, 600);
}

export async function createTrafficValidator(document: Doc): Promise<(ex: WireExchange) => ExchangeResult> {
  const doc = strict(document) as Doc;
  const api = new OpenAPIBackend({
    definition: structuredClone(doc),
    strict: false,
    // Its own check of the document knows OpenAPI 3.0 only; Redocly CLI lints this 3.1 document (npm run lint).
    quick: true,
    validate: true,
    coerceTypes: true,
    ajvOpts: { strict: false, allErrors: true },
    customizeAjv: (ajv) => {
      addFormats.default(ajv as never);
      ajv.addFormat("binary", true);
      return ajv;
    },
  });
  await api.init();
  const ajv = new Ajv.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat("binary", true);
  ajv.addSchema(doc, "openapi.json");
  // The operation's schemas come dereferenced by openapi-backend: one validator per schema object.
  const eventValidators = new WeakMap<object, ValidateFunction>();
  const eventValidator = (schema: object): ValidateFunction => {
    let v = eventValidators.get(schema);
    if (!v) {
      v = ajv.compile(schema);
      eventValidators.set(schema, v);
    }
    return v;
  };
  const anyError = ajv.compile({
    anyOf: [
      { $ref: "openapi.json#/components/schemas/NotFoundError" },
      { $ref: "openapi.json#/components/schemas/MethodNotAllowedError" },
    ],
  });

  return (ex) => {
    const problems: string[] = [];
    // biome-ignore lint/suspicious/noExplicitAny: strict copy of the document
    const document = doc as any;
    if (ex.fault && (TRANSPORT_FAULTS.includes(ex.fault.action ?? "") || ex.fault.stream !== null)) {
      return { pair: null, code: null, problems, skipped: `fault ${ex.fault.action ?? ex.fault.stream}` };
    }
    if (ex.status === null) return { pair: null, code: null, problems, skipped: "no answer (the client went away)" };
    if (ex.parser) return checkParserAnswer(ex, document, ajv);
    const url = new URL(ex.target, "http://sbx");
    const query: Record<string, string | string[]> = {};
    for (const key of new Set(url.searchParams.keys())) {
      const all = url.searchParams.getAll(key);
      query[key] = all.length === 1 ? all[0]! : all;
    }
    const requestType = mediaType(ex.requestHeaders["content-type"]);
    let body: unknown;
    if (ex.requestBody !== null) {
      try {
        body = JSON.parse(ex.requestBody);
      } catch {
        body = ex.requestBody;
      }
    } else if (requestType !== "" && requestType !== "application/json") {
      body = "(bytes)";
    }
    const request = { method: ex.method, path: url.pathname, query, headers: ex.requestHeaders, body };
    const op = api.router.matchOperation(request);
    let answer: unknown = null;
    // A body cut by the recorder (past its limit, or the client went away mid-answer) is no JSON to parse.
    if (
      ex.responseBody !== null &&
      !ex.truncated &&
      mediaType(ex.responseHeaders["content-type"]) === "application/json"
    ) {
      try {
        answer = JSON.parse(ex.responseBody);
      } catch {
        problems.push(`the JSON answer does not parse: ${ex.responseBody.slice(0, 200)}`);
      }
    }
    const code = (answer as { error?: { code?: unknown } } | null)?.error?.code;
    const errorCode = typeof code === "string" ? code : null;
    if (!op) {
      if ((ex.status !== 404 && ex.status !== 405) || !anyError(answer)) {
        problems.push(
          `no operation for ${ex.method} ${url.pathname}, and the answer is not not_found/method_not_allowed`,
        );
      }
      return { pair: `(no route) ${ex.status}`, code: errorCode, problems, skipped: null };
    }
    const pair = `${op.operationId} ${ex.status}`;
    const requestCheck = api.validator.validateRequest(request, op);
    if (!requestCheck.valid && ex.status < 400) {
      problems.push(
        `the document refuses the request, but it was answered ${ex.status}: ${describeErrors(requestCheck.errors)}`,
      );
    }
    // biome-ignore lint/suspicious/noExplicitAny: the operation's responses, dereferenced by openapi-backend
    const response = (op.responses as any)?.[String(ex.status)];
    if (response === undefined) {
      problems.push(`status ${ex.status} is not documented for ${op.operationId}`);
      return { pair, code: errorCode, problems, skipped: null };
    }
    const type = mediaType(ex.responseHeaders["content-type"]);
    if (response.content && !(type in response.content)) {
      problems.push(`content type ${JSON.stringify(type)} is not documented for ${pair}`);
    }
    const headerCheck = api.validator.validateResponseHeaders(ex.responseHeaders, op, {
      statusCode: ex.status,
      setMatchType: SetMatchType.Any,
    });
    if (!headerCheck.valid) problems.push(`headers: ${describeErrors(headerCheck.errors)}`);
    if (type === "application/json" && answer !== null && !ex.truncated) {
      const check = api.validator.validateResponse(answer, op, ex.status);
      if (!check.valid) problems.push(`body: ${describeErrors(check.errors)}`);
    }
    if (type === "text/event-stream" && ex.responseBody !== null) {
      const events: Record<string, object> = response.content[type]["x-sse-events"] ?? {};
      const parser = createParser({
        onEvent: (event) => {
          const schema = events[event.event ?? "message"];
          if (!schema) {
            problems.push(`event type ${JSON.stringify(event.event)} is not documented`);
            return;
          }
          let data: unknown;
          try {
            data = JSON.parse(event.data);
          } catch {
            problems.push(`event ${event.event} data does not parse`);
            return;
          }
          // Output past the cap, sent live (docs/protocol.md): an `output` with kept: false and no id.
          const liveOnly = event.event === "output" && (data as { kept?: unknown }).kept === false;
          if (liveOnly ? event.id !== undefined : event.id === undefined || !/^[1-9][0-9]*$/.test(event.id))
            problems.push(liveOnly ? `live output has an id (${event.id})` : `event id ${event.id} is not a sequence`);
          const validate = eventValidator(schema);
          if (!validate(data)) problems.push(`event ${event.event} ${event.id}: ${describeErrors(validate.errors)}`);
        },
      });
      parser.feed(ex.responseBody);
    }
    return { pair, code: errorCode, problems, skipped: null };
  };
}

/**
 * An answer to a request Node's parser refused (before any route): its code must be in
 * the document, with the status the document gives it, and its body that code's schema.
 */
function checkParserAnswer(ex: WireExchange, document: Doc, ajv: Ajv.default): ExchangeResult {
  const problems: string[] = [];
  let code: string | null = null;
  try {
    code = (JSON.parse(ex.responseBody ?? "") as { error: { code: string } }).error.code;
  } catch {
    problems.push("the parser's answer is not an error document");
  }
  const component = Object.entries(document.components.schemas).find(
    ([, schema]) => (schema as Doc).properties?.error?.properties?.code?.const === code,
  );
  if (component === undefined) {
    problems.push(`error code ${code} is not in the document`);
  } else {
    if (!String((component[1] as Doc).description).startsWith(`${ex.status} ${code}:`)) {
      problems.push(`${code} answered with status ${ex.status}, not the document's`);
    }
    const validate = ajv.getSchema(`openapi.json#/components/schemas/${component[0]}`);
    if (validate && !validate(JSON.parse(ex.responseBody!))) problems.push(`body: ${describeErrors(validate.errors)}`);
  }
  return { pair: `(parser) ${ex.status}`, code, problems, skipped: null };
}

/** Every exchange recorded in a directory (one JSON line each, one file per backend). */
export function readExchanges(dir: string): WireExchange[] {
  if (!fs.existsSync(dir)) return [];
  const out: WireExchange[] = [];
  for (const file of fs.readdirSync(dir).sort()) {
    if (!file.endsWith(".jsonl")) continue;
    for (const line of fs.readFileSync(path.join(dir, file), "utf8").split("\n")) {
      if (line.trim() !== "") out.push(JSON.parse(line) as WireExchange);
    }
  }
  return out;
}

export async function validateTraffic(document: Doc, exchanges: readonly WireExchange[]): Promise<TrafficReport> {
  const check = await createTrafficValidator(document);
  const report: TrafficReport = {
    exchanges: exchanges.length,
    checked: 0,
    skipped: {},
    pairs: new Map(),
    codes: new Map(),
    routeCodes: new Map(),
    violations: [],
  };
  for (const ex of exchanges) {
    const result = check(ex);
    if (result.skipped !== null) {
      report.skipped[result.skipped] = (report.skipped[result.skipped] ?? 0) + 1;
      continue;
    }
    report.checked++;
    if (result.pair) report.pairs.set(result.pair, (report.pairs.get(result.pair) ?? 0) + 1);
    if (result.code) report.codes.set(result.code, (report.codes.get(result.code) ?? 0) + 1);
    if (result.code && result.pair && !result.pair.startsWith("(")) {
      const key = `${result.pair.split(" ")[0]} ${result.code}`;
      report.routeCodes.set(key, (report.routeCodes.get(key) ?? 0) + 1);
    }
    for (const problem of result.problems)
      report.violations.push(`${ex.method} ${ex.target} → ${ex.status}: ${problem}`);
  }
  return report;
}
