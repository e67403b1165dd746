// A sandbox's labels as stored (a JSON object in sandboxes.labels) and changed by a
// PATCH: the syntax and the selectors are protocol/labels.ts's.

import type { Labels } from "../../protocol/labels.js";
import type { SandboxRow } from "./store.js";

/** The sandbox's labels; {} for none. */
export function labelsOf(row: Pick<SandboxRow, "labels">): Labels {
  if (row.labels === null) return {};
  try {
    return JSON.parse(row.labels) as Labels;
  } catch {
    return {};
  }
}

/** Labels as stored: null for none. */
export function storedLabels(labels: Labels | undefined): string | null {
  return labels === undefined || Object.keys(labels).length === 0 ? null : JSON.stringify(sorted(labels));
}

/** `stored` with `asked` applied: a string sets (adds or replaces), null removes, a key not named stays. */
export function mergeLabels(stored: Labels, asked: Record<string, string | null>): Labels {
  const merged: Labels = { ...stored };
  for (const [k, v] of Object.entries(asked)) {
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  return merged;
}

function sorted(labels: Labels): Labels {
  return Object.fromEntries(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]!]),
  );
}
