// The protocol page says what the backend serves: every route of the route table
// (src/protocol/routes.ts, which the backend's router serves and the client builds
// its paths from) is in its route index, and nothing else is, with the fault
// grammar's route name.

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROUTE_NAMES, ROUTES } from "../../src/protocol/routes.js";
import { REPO_ROOT } from "../support/cli.js";

const page = fs.readFileSync(path.join(REPO_ROOT, "docs", "protocol.md"), "utf8");

/** The rows of the "Routes" table: method, path (params as {name}) and route name. */
function indexedRoutes(): string[] {
  const section = page.slice(page.indexOf("## Routes"), page.indexOf("\n## ", page.indexOf("## Routes") + 1));
  return [...section.matchAll(/^\| ([A-Z]+) \| `([^`]+)` \| ([a-z.]+) \|/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
}

describe("docs/protocol.md", () => {
  it("lists every route the backend serves, and only those", () => {
    const served = ROUTE_NAMES.map(
      (name) => `${ROUTES[name].method} /api/v1/${ROUTES[name].path.replace(/:([a-z]+)/g, "{$1}")} ${name}`,
    );
    expect(indexedRoutes().sort()).toEqual(served.sort());
  });

  it("names every error code of the error table, with its status", async () => {
    const { ERRORS } = await import("../../src/protocol/errors.js");
    const listed = new Map<string, number>();
    for (const m of page.matchAll(/^\| (`[a-z_]+`(?: \/ `[a-z_]+`)*) \| (\d{3}) \|/gm)) {
      for (const code of m[1]!.matchAll(/`([a-z_]+)`/g)) listed.set(code[1]!, Number(m[2]));
    }
    const table = Object.fromEntries(Object.entries(ERRORS).map(([code, spec]) => [code, spec.status]));
    expect(Object.fromEntries(listed)).toEqual(table);
  });
});
