// Shared by the process mutations: a fresh Idempotency-Key per send, and flag checks.

import { randomUUID } from "../../../platform/random.js";
import { PROCESS_SIGNALS } from "../../../protocol/types.js";
import { durationOption } from "../../duration.js";
import { UsageError } from "../../../common/errors.js";

export const newKey = () => `sbx-${randomUUID()}`;

export function graceMs(text: string | undefined): number {
  return text === undefined ? 5000 : durationOption("--grace", text, { min: 0, max: 60_000 });
}

export function normalizeSignal(name: string): string {
  const bare = name.toUpperCase().replace(/^SIG/, "");
  if (!(PROCESS_SIGNALS as readonly string[]).includes(bare)) {
    throw new UsageError(`unsupported signal ${JSON.stringify(name)}`, `one of: ${PROCESS_SIGNALS.join(", ")}`);
  }
  return bare;
}
