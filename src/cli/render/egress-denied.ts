// Connections refused by a sandbox's egress policy (docs/network.md, "Evidence"), for a
// person: `receipts show`'s "Egress denied" lines and the live notices of exec and logs.

/** One refusal as `host:port (protocol): reason`; an IPv6 host in brackets. */
export function denialText(d: unknown): string {
  const o = (typeof d === "object" && d !== null ? d : {}) as Record<string, unknown>;
  const host = typeof o.host === "string" && o.host !== "" ? o.host : "?";
  const target = `${host.includes(":") ? `[${host}]` : host}:${typeof o.port === "number" ? o.port : "?"}`;
  const protocol = typeof o.protocol === "string" ? ` (${o.protocol})` : "";
  return `${target}${protocol}: ${typeof o.reason === "string" ? o.reason : "refused"}`;
}

/** A refusal as `sbx logs` and `sbx exec` say it on stderr while the command runs. */
export function egressDeniedNotice(d: unknown): string {
  return `sbx: egress denied: ${denialText(d)}`;
}

/** The refusals a record kept, as notices (with how many more it counted): exec without --stream says them at its end. */
export function egressDeniedNotices(denied: Record<string, unknown>): string[] {
  const first = Array.isArray(denied.first) ? denied.first : [];
  const total = typeof denied.total === "number" ? denied.total : first.length;
  const more =
    total > first.length ? [`sbx: egress denied: ${total - first.length} more (sbx sandbox egress lists them)`] : [];
  return [...first.map(egressDeniedNotice), ...more];
}

/** The summary line, then one line per refusal kept: what `receipts show` prints under "Egress denied". */
export function egressDeniedLines(denied: Record<string, unknown>): string[] {
  const first = Array.isArray(denied.first) ? denied.first : [];
  const total = typeof denied.total === "number" ? denied.total : first.length;
  const more = total > first.length ? ` (the first ${first.length} below)` : "";
  return [
    `${total} connection${total === 1 ? "" : "s"} refused by the sandbox's egress policy${more}`,
    ...first.map((d) => {
      const at = typeof (d as { at?: unknown }).at === "string" ? `${(d as { at: string }).at}  ` : "";
      return `${at}${denialText(d)}`;
    }),
  ];
}
