// The OpenAPI document (src/protocol/openapi/): one operation per route of the table
// and nothing else, served by the daemon exactly as docs/openapi.json holds it, and
// every error code of the error table with its body. Redocly CLI lints it
// (`npm run lint`); the validating run holds the daemon's traffic to it.

import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERRORS } from "../../src/protocol/errors.js";
import { buildOpenApiDocument, errorComponentName, routeErrors } from "../../src/protocol/openapi/document.js";
import { ROUTE_NAMES, ROUTES } from "../../src/protocol/routes.js";
import { ErrorCodes } from "../../src/protocol/types.js";
import { KNOWN_FIELDS } from "../../src/protocol/validate.js";
import { startTestBackend, type TestBackend } from "../backend/support.js";
import { REPO_ROOT } from "../support/cli.js";

// biome-ignore lint/suspicious/noExplicitAny: the document is read as plain JSON
const doc = buildOpenApiDocument() as any;
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"];

describe("the OpenAPI document", () => {
  it("has one operation per route of the table, named after it, and no other", () => {
    const documented: string[] = [];
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, { operationId: string }>)) {
        if (METHODS.includes(method)) documented.push(`${method.toUpperCase()} ${p} ${op.operationId}`);
      }
    }
    const routes = ROUTE_NAMES.map(
      (name) => `${ROUTES[name].method} /api/v1/${ROUTES[name].path.replace(/:([a-z]+)/g, "{$1}")} ${name}`,
    );
    expect(documented.sort()).toEqual(routes.sort());
  });

  it("has every error code of the error table with its body, and each route's codes under their statuses", () => {
    expect(Object.keys(ERRORS).sort()).toEqual(Object.values(ErrorCodes).sort());
    for (const [code, spec] of Object.entries(ERRORS)) {
      const component = doc.components.schemas[errorComponentName(code as keyof typeof ERRORS)];
      expect(component?.properties.error.properties.code, code).toEqual({ const: code, type: "string" });
      expect(component.description, code).toContain(`${spec.status} ${code}`);
    }
    for (const name of ROUTE_NAMES) {
      const op =
        doc.paths[`/api/v1/${ROUTES[name].path.replace(/:([a-z]+)/g, "{$1}")}`][ROUTES[name].method.toLowerCase()];
      for (const code of routeErrors(name)) {
        const response = op.responses[String(ERRORS[code].status)];
        const refs = JSON.stringify(response?.content["application/json"].schema);
        expect(refs, `${name} ${code}`).toContain(`#/components/schemas/${errorComponentName(code)}"`);
      }
    }
  });

  it("takes Idempotency-Key on every mutation and only there", () => {
    for (const name of ROUTE_NAMES) {
      const op =
        doc.paths[`/api/v1/${ROUTES[name].path.replace(/:([a-z]+)/g, "{$1}")}`][ROUTES[name].method.toLowerCase()];
      const takesKey = JSON.stringify(op.parameters ?? []).includes("#/components/parameters/IdempotencyKey");
      expect(takesKey, name).toBe(ROUTES[name].mutation);
    }
  });

  it("refuses what it does not describe: each object of a request body has additionalProperties false and the fields the checks know", () => {
    const checked: string[] = [];
    // biome-ignore lint/suspicious/noExplicitAny: plain JSON schema
    const walk = (schema: any, where: string, seen: Set<string>): void => {
      if (schema === null || typeof schema !== "object") return;
      if (typeof schema.$ref === "string") {
        const id = schema.$ref.replace("#/components/schemas/", "");
        if (seen.has(id)) return;
        seen.add(id);
        const component = doc.components.schemas[id];
        if (component.properties !== undefined) {
          expect(Object.keys(component.properties).sort(), id).toEqual(
            [...(KNOWN_FIELDS[id as keyof typeof KNOWN_FIELDS] ?? [])].sort(),
          );
        }
        walk(component, id, seen);
        return;
      }
      if (schema.properties !== undefined) {
        expect(schema.additionalProperties, where).toBe(false);
        checked.push(where);
        for (const [k, v] of Object.entries(schema.properties)) walk(v, `${where}.${k}`, seen);
      }
      for (const key of ["items", "anyOf", "oneOf", "allOf"]) {
        const sub = schema[key];
        if (Array.isArray(sub)) for (const s of sub) walk(s, where, seen);
        else walk(sub, where, seen);
      }
    };
    for (const [p, item] of Object.entries(doc.paths)) {
      // biome-ignore lint/suspicious/noExplicitAny: plain JSON
      for (const [method, op] of Object.entries(item as Record<string, any>)) {
        const schema = op?.requestBody?.content?.["application/json"]?.schema;
        if (schema !== undefined) walk(schema, `${method} ${p}`, new Set());
      }
    }
    expect(checked).toEqual(
      expect.arrayContaining(["ExecuteRequest", "SandboxCreateRequest", "ProcessStartRequest.restart", "JobSpec"]),
    );
  });

  describe("as the daemon serves it", () => {
    let b: TestBackend;
    beforeAll(async () => {
      b = await startTestBackend();
    });
    afterAll(() => b.stop());

    it("is docs/openapi.json byte for byte (npm run generate writes it)", async () => {
      const answer = await b.api("GET", "/api/v1/openapi.json");
      expect(answer.status).toBe(200);
      expect(answer.headers["content-type"]).toMatch(/^application\/json/);
      const shipped = fs.readFileSync(path.join(REPO_ROOT, "docs", "openapi.json"), "utf8");
      expect(answer.text === shipped, "docs/openapi.json differs from what the daemon serves: npm run generate").toBe(
        true,
      );
    });
  });
});
