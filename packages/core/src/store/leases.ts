/**
 * The `session_leases` table (migration 0009): one row per session some process holds open (see lease-types.ts). A
 * claim is one `insert … on conflict do update … where` (SQLite ≥ 3.24 and PostgreSQL alike): it replaces the row
 * only when the lease is expired, already the claimer's, or held by the owner the claimer may replace, so two
 * processes claiming at once cannot both win. Expiry times are ISO-8601 UTC text, compared as text.
 */
import type { Kysely, Selectable } from "kysely";
import { errorText } from "../error-text.js";
import { now } from "./clock.js";
import type { LeaseHolder, LeaseStore, SessionLease } from "./lease-types.js";
import type { Database, SessionLeasesTable } from "./schema.js";
import { StoreError } from "./types.js";

function toLease(row: Selectable<SessionLeasesTable>): SessionLease {
  return {
    sessionId: row.session_id,
    owner: row.owner,
    host: row.host,
    pid: Number(row.pid),
    agent: row.agent,
    expiresAt: row.expires_at,
    acquiredAt: row.acquired_at,
  };
}

export function kyselyLeaseStore(db: Kysely<Database>, location: string): LeaseStore {
  const guard = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof StoreError) throw error;
      throw new StoreError(`${what} failed on ${location}: ${errorText(error)}`, { cause: error });
    }
  };
  const claim = (sessionId: string, holder: LeaseHolder, expiresAt: string, replace?: string): Promise<SessionLease> =>
    guard("claiming a session lease", async () => {
      const at = now();
      const row = {
        session_id: sessionId,
        owner: holder.owner,
        host: holder.host,
        pid: holder.pid,
        agent: holder.agent,
        expires_at: expiresAt,
        acquired_at: at,
      };
      await db
        .insertInto("session_leases")
        .values(row)
        .onConflict((oc) =>
          oc
            .column("session_id")
            .doUpdateSet({
              owner: row.owner,
              host: row.host,
              pid: row.pid,
              agent: row.agent,
              expires_at: row.expires_at,
              acquired_at: row.acquired_at,
            })
            .where((eb) =>
              eb.or([
                eb("session_leases.expires_at", "<", at),
                eb("session_leases.owner", "=", holder.owner),
                ...(replace ? [eb("session_leases.owner", "=", replace)] : []),
              ]),
            ),
        )
        .execute();
      const stored = await db
        .selectFrom("session_leases")
        .selectAll()
        .where("session_id", "=", sessionId)
        .executeTakeFirst();
      // Released between the two statements: nobody holds it, claim again.
      return stored ? toLease(stored) : claim(sessionId, holder, expiresAt);
    });
  return {
    claim,
    renew: (owner: string, sessionIds: readonly string[], expiresAt: string) =>
      guard("renewing session leases", async () => {
        if (sessionIds.length === 0) return [];
        await db
          .updateTable("session_leases")
          .set({ expires_at: expiresAt })
          .where("owner", "=", owner)
          .where("session_id", "in", [...sessionIds])
          .execute();
        const held = await db
          .selectFrom("session_leases")
          .select("session_id")
          .where("owner", "=", owner)
          .where("session_id", "in", [...sessionIds])
          .execute();
        const kept = new Set(held.map((r) => r.session_id));
        return sessionIds.filter((id) => !kept.has(id));
      }),
    release: (sessionId: string, owner: string) =>
      guard("releasing a session lease", async () => {
        await db.deleteFrom("session_leases").where("session_id", "=", sessionId).where("owner", "=", owner).execute();
      }),
  };
}
