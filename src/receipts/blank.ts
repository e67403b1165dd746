// The classification with nothing observed yet, which both classifiers (classify.ts and
// classify-jobs.ts) fill in: a module of its own so that neither imports the other for it.

import type { Classified } from "./classify.js";

/** A classification with nothing observed yet (every field empty). */
export function blank(): Classified {
  return {
    classification: null,
    definitive: false,
    http_status: null,
    execution_id: null,
    process_id: null,
    request_id: null,
    job_id: null,
    outcome: null,
    exit_code: null,
    signal: null,
    system_error: null,
    end_reason: null,
    image_digest: null,
    usage: null,
    egress_denied: null,
    record_pending: false,
    error: null,
    retry_after_ms: null,
    stdout: null,
    stderr: null,
    stdout_truncated: false,
    stderr_truncated: false,
    boot: null,
  };
}

/** An answer's `usage` (or `egress_denied`) as JSON text when it is an object; null otherwise (absent, null, or not the documented shape). */
export function usageText(usage: unknown): string | null {
  return typeof usage === "object" && usage !== null && !Array.isArray(usage) ? JSON.stringify(usage) : null;
}
