// Row access for sandboxes in backend.db (table sandboxes; the schema is
// store/migrations.ts). Each method is one statement; callers group writes that must
// land together in BackendStore.transaction.

import type { Isolation } from "../../protocol/types.js";
import { columnsOf, TableAccess } from "../store/index.js";

export interface SandboxRow {
  sandbox_id: string;
  name: string;
  status: string;
  isolation: Isolation;
  network: number;
  created_at: string;
  /** The sandbox's own host uid (and gid) for its commands when the backend is root. */
  uid: number | null;
  /** The sandbox's limits as JSON (SandboxLimits; a missing field is the default); null: every default. */
  limits: string | null;
  /** none, user or host; null for sandboxes made before network modes (network ? host : none). */
  network_mode: string | null;
  /** Its published ports as JSON ([{port, host_ip, host_port}]), or null. */
  publish: string | null;
  /** The image its root was made from, as JSON ({reference, digest, platform}); null: the host's. */
  image: string | null;
  /** Its labels as a JSON object (docs/protocol.md, "Labels"); null: none. */
  labels: string | null;
  /** Its egress policy as JSON (EgressPolicy; network allow-list), or null. */
  egress: string | null;
  /** Its own idle timeout (0: off); null: the daemon's default (idle.ts). */
  idle_timeout_ms: number | null;
  /** Its environment's last stop by the backend, as JSON ({at, reason: idle|requested}); null: none. */
  last_stop: string | null;
}

export const SANDBOX_COLUMNS = columnsOf<SandboxRow>({
  sandbox_id: true,
  name: true,
  status: true,
  isolation: true,
  network: true,
  created_at: true,
  uid: true,
  limits: true,
  network_mode: true,
  publish: true,
  image: true,
  labels: true,
  egress: true,
  idle_timeout_ms: true,
  last_stop: true,
});

export class SandboxStore extends TableAccess {
  insertSandbox(row: SandboxRow): void {
    this.db
      .statement(
        `INSERT INTO sandboxes (${SANDBOX_COLUMNS.join(", ")}) VALUES (${SANDBOX_COLUMNS.map(() => "?").join(", ")})`,
      )
      .run(...SANDBOX_COLUMNS.map((c) => row[c]));
  }

  getSandboxById(id: string): SandboxRow | undefined {
    return this.db.statement<SandboxRow>("SELECT * FROM sandboxes WHERE sandbox_id = ?").get(id);
  }

  getSandboxByName(name: string): SandboxRow | undefined {
    return this.db.statement<SandboxRow>("SELECT * FROM sandboxes WHERE name = ?").get(name);
  }

  /** The uids sandboxes have, to give a new one another. */
  sandboxUids(): Set<number> {
    const rows = this.db.statement<{ uid: number }>("SELECT uid FROM sandboxes WHERE uid IS NOT NULL").all();
    return new Set(rows.map((r) => r.uid));
  }

  setSandboxUid(sandboxId: string, uid: number): void {
    this.db.statement("UPDATE sandboxes SET uid = ? WHERE sandbox_id = ?").run(uid, sandboxId);
  }

  setSandboxEgress(sandboxId: string, egress: string): void {
    this.db.statement("UPDATE sandboxes SET egress = ? WHERE sandbox_id = ?").run(egress, sandboxId);
  }

  setSandboxLimits(sandboxId: string, limits: string): void {
    this.db.statement("UPDATE sandboxes SET limits = ? WHERE sandbox_id = ?").run(limits, sandboxId);
  }

  setSandboxLabels(sandboxId: string, labels: string | null): void {
    this.db.statement("UPDATE sandboxes SET labels = ? WHERE sandbox_id = ?").run(labels, sandboxId);
  }

  setSandboxIdleTimeout(sandboxId: string, ms: number | null): void {
    this.db.statement("UPDATE sandboxes SET idle_timeout_ms = ? WHERE sandbox_id = ?").run(ms, sandboxId);
  }

  setSandboxLastStop(sandboxId: string, lastStop: string): void {
    this.db.statement("UPDATE sandboxes SET last_stop = ? WHERE sandbox_id = ?").run(lastStop, sandboxId);
  }

  listSandboxes(): SandboxRow[] {
    return this.db.statement<SandboxRow>("SELECT * FROM sandboxes ORDER BY created_at, sandbox_id").all();
  }

  deleteSandbox(id: string): void {
    this.db.statement("DELETE FROM sandboxes WHERE sandbox_id = ?").run(id);
  }
}
