// Label syntax and selectors (src/protocol/labels.ts) and how a PATCH changes labels
// (src/backend/sandboxes/labels.ts): pure tables, as Kubernetes' metadata labels read.

import { describe, expect, it } from "vitest";
import { labelsOf, mergeLabels, storedLabels } from "../../src/backend/sandboxes/labels.js";
import {
  checkLabels,
  labelKeyProblem,
  labelValueProblem,
  matchesSelector,
  parseSelector,
  selectorText,
} from "../../src/protocol/labels.js";

describe("label keys and values", () => {
  it.each(["team", "a", "app.kubernetes.io/name", "example.com/tier", "A_b-c.9", "x".repeat(63)])(
    "accepts the key %s",
    (key) => expect(labelKeyProblem(key)).toBeNull(),
  );
  it.each(["", "-team", "team-", "te am", "x".repeat(64), "Example.com/x", "/x", "a/", "a/b/c", "é"])(
    "refuses the key %j",
    (key) => expect(labelKeyProblem(key)).toMatch(/label key/),
  );
  it.each(["", "web", "v1.2_3-x", "x".repeat(63)])("accepts the value %j", (v) =>
    expect(labelValueProblem("k", v)).toBeNull(),
  );
  it.each(["-web", "a b", "x".repeat(64), "a=b", "a,b"])("refuses the value %j", (v) =>
    expect(labelValueProblem("k", v)).toMatch(/label k: its value/),
  );

  it("checks a request's labels, naming the field; null removes only where allowed", () => {
    expect(checkLabels({ team: "web", "x.io/y": "" }, false)).toBeNull();
    expect(checkLabels({ team: null }, true)).toBeNull();
    expect(checkLabels({ team: null }, false)).toEqual({
      field: "labels.team",
      message: "label team must be a string",
    });
    expect(checkLabels(["team=web"], false)?.field).toBe("labels");
    expect(checkLabels({ "bad key": "v" }, false)?.field).toBe("labels.bad key");
    expect(checkLabels({ k: "bad value" }, false)?.message).toContain('its value "bad value"');
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, "v"]));
    expect(checkLabels(many, false)?.message).toBe("a sandbox has at most 64 labels, not 65");
  });
});

describe("selectors", () => {
  const web = { team: "web", tier: "ci" };
  const api = { team: "api" };
  const none = {};
  it.each([
    ["team=web", [true, false, false]],
    ["team==web", [true, false, false]],
    ["team!=web", [false, true, true]],
    ["team", [true, true, false]],
    ["!tier", [false, true, true]],
    ["team,tier=ci", [true, false, false]],
    ["team!=web,team", [false, true, false]],
    ["", [true, true, true]],
  ])("%s selects %j of [web, api, none]", (text, expected) => {
    const reqs = parseSelector(text);
    expect([web, api, none].map((l) => matchesSelector(l, reqs))).toEqual(expected);
  });

  it("reads and writes a selector back alike", () => {
    expect(selectorText(parseSelector("team == web, !tier ,x.io/a!=b,c"))).toBe("team=web,!tier,x.io/a!=b,c");
  });

  it.each(["te am=x", "team=a b", "=web", "!", "a,,b"])("refuses %j, saying why", (text) => {
    expect(() => parseSelector(text)).toThrow(/^selector /);
  });
});

describe("a PATCH's labels", () => {
  it("sets, replaces and removes; a label not named stays; stored sorted, none as null", () => {
    const merged = mergeLabels({ team: "web", tier: "ci" }, { team: "api", tier: null, owner: "ann" });
    expect(merged).toEqual({ team: "api", owner: "ann" });
    expect(storedLabels(merged)).toBe('{"owner":"ann","team":"api"}');
    expect(storedLabels({})).toBeNull();
    expect(labelsOf({ labels: null })).toEqual({});
    expect(labelsOf({ labels: storedLabels(merged) })).toEqual(merged);
  });
});
