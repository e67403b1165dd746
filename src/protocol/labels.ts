// Sandbox labels and label selectors (docs/protocol.md, "Labels"): the syntax of
// Kubernetes' metadata labels, so that a fleet's conventions carry over. Pure checks
// and matching, used by the CLI (to refuse early) and by the backend (the authority).

import type { FieldProblem } from "./validate.js";

/** A sandbox's labels: key → value (a value may be empty). */
export type Labels = Record<string, string>;

/** At most this many labels on one sandbox. */
export const MAX_LABELS = 64;

/** The name part of a key, and a non-empty value: alphanumerics at both ends, `-_.` between, 63 at most. */
const NAME = /^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$/;
/** A key's optional prefix: a DNS subdomain (lower case), 253 at most. */
const PREFIX = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** Why `key` is not a label key (`[prefix/]name`), or null. */
export function labelKeyProblem(key: string): string | null {
  const slash = key.indexOf("/");
  const prefix = slash === -1 ? null : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (prefix !== null && (prefix.length > 253 || !PREFIX.test(prefix))) {
    return `label key ${JSON.stringify(key)}: its prefix must be a DNS subdomain (lower-case letters, digits, - and ., at most 253)`;
  }
  if (!NAME.test(name)) {
    return `label key ${JSON.stringify(key)}: a name must be 1-63 characters of A-Z a-z 0-9 - _ . beginning and ending with a letter or digit (an optional prefix/ before it)`;
  }
  return null;
}

/** Why `value` is not a label value (empty, or as a key's name), or null. */
export function labelValueProblem(key: string, value: string): string | null {
  if (value === "" || NAME.test(value)) return null;
  return `label ${key}: its value ${JSON.stringify(value)} must be empty or 1-63 characters of A-Z a-z 0-9 - _ . beginning and ending with a letter or digit`;
}

/**
 * Checks a `labels` object of a request (`removable`: a null value removes a label,
 * as in PATCH). The first problem, with the field it is in, or null.
 */
export function checkLabels(labels: unknown, removable: boolean): FieldProblem | null {
  if (typeof labels !== "object" || labels === null || Array.isArray(labels)) {
    return { field: "labels", message: "labels must be a JSON object of key: value strings" };
  }
  const entries = Object.entries(labels);
  if (entries.length > MAX_LABELS) {
    return { field: "labels", message: `a sandbox has at most ${MAX_LABELS} labels, not ${entries.length}` };
  }
  for (const [key, value] of entries) {
    const field = `labels.${key}`;
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== null) return { field, message: keyProblem };
    if (value === null && removable) continue;
    if (typeof value !== "string") {
      return { field, message: `label ${key} must be a string${removable ? " (null removes it)" : ""}` };
    }
    const valueProblem = labelValueProblem(key, value);
    if (valueProblem !== null) return { field, message: valueProblem };
  }
  return null;
}

/** One requirement of a selector: `k=v` (or `k==v`), `k!=v`, `k` (has it), `!k` (has it not). */
export type LabelRequirement =
  | { key: string; op: "=" | "!="; value: string }
  | { key: string; op: "exists" | "!exists" };

/** Parses one requirement; throws an Error saying what is wrong. */
export function parseRequirement(text: string): LabelRequirement {
  const t = text.trim();
  const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(t);
  let req: LabelRequirement;
  if (m) req = { key: m[1]!, op: m[2] === "!=" ? "!=" : "=", value: m[3]! };
  else if (t.startsWith("!")) req = { key: t.slice(1).trim(), op: "!exists" };
  else req = { key: t, op: "exists" };
  const keyProblem = labelKeyProblem(req.key);
  if (keyProblem !== null) throw new Error(`selector ${JSON.stringify(text)}: ${keyProblem}`);
  if ("value" in req) {
    const valueProblem = labelValueProblem(req.key, req.value);
    if (valueProblem !== null) throw new Error(`selector ${JSON.stringify(text)}: ${valueProblem}`);
  }
  return req;
}

/** A selector as sent (`?selector=`): requirements joined by commas, all of which must hold. */
export function parseSelector(text: string): LabelRequirement[] {
  if (text.trim() === "") return [];
  return text.split(",").map(parseRequirement);
}

export function requirementText(r: LabelRequirement): string {
  switch (r.op) {
    case "exists":
      return r.key;
    case "!exists":
      return `!${r.key}`;
    default:
      return `${r.key}${r.op}${r.value}`;
  }
}

export function selectorText(reqs: readonly LabelRequirement[]): string {
  return reqs.map(requirementText).join(",");
}

/** Whether labels satisfy every requirement (`k!=v` holds where k is missing, as in Kubernetes). */
export function matchesSelector(labels: Labels, reqs: readonly LabelRequirement[]): boolean {
  return reqs.every((r) => {
    const has = Object.hasOwn(labels, r.key);
    switch (r.op) {
      case "exists":
        return has;
      case "!exists":
        return !has;
      case "=":
        return has && labels[r.key] === r.value;
      default:
        return !has || labels[r.key] !== r.value;
    }
  });
}

/** `a=1,b=2` in key order; "" for none. */
export function labelsText(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(",");
}
