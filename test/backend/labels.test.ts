// Labels over the backend's real socket: a bad key, value or selector is 400
// invalid_request naming the field and the rule, nothing created or changed; a PATCH
// sets, replaces and removes; ?selector= filters GET /sandboxes.

import { describe, expect, it } from "vitest";
import { sharedBackend, type TestBackend } from "./support.js";

let b: TestBackend;
sharedBackend((backend) => {
  b = backend;
});

describe("labels on the wire", () => {
  it.each([
    [{ name: "l1", isolation: "none", labels: { "bad key": "v" } }, "labels.bad key", 'label key "bad key"'],
    [{ name: "l1", isolation: "none", labels: { team: "a b" } }, "labels.team", 'its value "a b"'],
    [{ name: "l1", isolation: "none", labels: { team: 3 } }, "labels.team", "label team must be a string"],
    [{ name: "l1", isolation: "none", labels: ["team=web"] }, "labels", "labels must be a JSON object"],
  ])("create %j: 400 on %s, nothing created", async (body, field, message) => {
    const res = await b.api("POST", "/api/v1/sandbox/create", { body });
    expect(res.status, res.text).toBe(400);
    expect(res.json.error).toMatchObject({ code: "invalid_request", details: { field } });
    expect(res.json.error.message).toContain(message);
    expect((await b.api("GET", "/api/v1/sandbox/l1")).status).toBe(404);
  });

  it("PATCH sets, replaces and removes labels; ?selector= filters the list; a bad selector is 400", async () => {
    const made = await b.api("POST", "/api/v1/sandbox/create", {
      body: { name: "l2", isolation: "none", labels: { team: "web", tier: "ci" } },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.json.labels).toEqual({ team: "web", tier: "ci" });
    const patched = await b.api("PATCH", "/api/v1/sandbox/l2", { body: { labels: { team: "api", tier: null } } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.labels).toEqual({ team: "api" });
    const bad = await b.api("PATCH", "/api/v1/sandbox/l2", { body: { labels: { team: "", "x/": "1" } } });
    expect(bad.json.error.details.field).toBe("labels.x/");
    expect((await b.api("GET", "/api/v1/sandbox/l2")).json.labels).toEqual({ team: "api" });

    const selected = await b.api("GET", `/api/v1/sandboxes?selector=${encodeURIComponent("team=api,!tier")}`);
    expect(selected.json.sandboxes.map((s: { name: string }) => s.name)).toEqual(["l2"]);
    const none = await b.api("GET", "/api/v1/sandboxes?selector=team%3Dweb");
    expect(none.json.sandboxes).toEqual([]);
    const refused = await b.api("GET", "/api/v1/sandboxes?selector=te%20am");
    expect(refused.status).toBe(400);
    expect(refused.json.error.details.field).toBe("selector");
  });
});
