// Unknown query parameters are refused (400 invalid_request naming them), as unknown
// body fields are: `?wait=30000` for `?wait_ms=` must not silently become no wait.

import { describe, expect, it } from "vitest";
import { startTestBackend } from "./support.js";

describe("query parameters a route does not take", () => {
  it("are refused with 400 naming every one and what the route takes; known ones still work", async () => {
    const b = await startTestBackend();
    const created = await b.api("POST", "/api/v1/sandbox/default/execute", { body: { command: ["true"] } });
    expect(created.status).toBe(200);
    const eid = created.json.execution_id as string;
    const typo = await b.api("GET", `/api/v1/sandbox/default/executions/${eid}?wait=30000&foo=1`);
    expect(typo.status).toBe(400);
    expect(typo.json.error).toMatchObject({
      code: "invalid_request",
      message: 'unknown query parameters "wait", "foo" (executions.get takes: wait_ms)',
      details: { field: "wait", unknown: ["wait", "foo"] },
    });
    const none = await b.api("GET", "/api/v1/health?verbose=1");
    expect(none.status).toBe(400);
    expect(none.json.error.message).toBe('unknown query parameter "verbose" (health takes: none)');
    const known = await b.api("GET", `/api/v1/sandbox/default/executions/${eid}?wait_ms=0`);
    expect(known.status).toBe(200);
    // Nothing ran for a refused mutation.
    const post = await b.api("POST", "/api/v1/sandbox/default/execute?cwd=/etc", { body: { command: ["true"] } });
    expect(post.status).toBe(400);
    const listed = await b.api("GET", "/api/v1/sandbox/default/executions");
    expect(listed.json.executions).toHaveLength(1);
    await b.stop();
  });
});
