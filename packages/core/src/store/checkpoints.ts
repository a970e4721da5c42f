/**
 * The `checkpoints` table (migration 0005): one row per turn that changed the workspace. Rows follow their session:
 * a fork copies them (the fork shares the checkpoints before the fork point), an archive takes those of the history
 * it takes (`/clear` all of them, a rewind those from the chosen message on), deleting a session deletes them. A
 * compaction keeps them with the session, renumbered under the user messages it keeps, and gives the archive copies.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Kysely, Selectable, Transaction } from "kysely";
import { errorText } from "../error-text.js";
import { type ChatMessage, contentText } from "../messages.js";
import type { CheckpointFile, CheckpointRecord, CheckpointStore, NewCheckpoint } from "./checkpoint-types.js";
import { now } from "./clock.js";
import type { CheckpointsTable, Database } from "./schema.js";
import { type CheckpointMove, StoreError } from "./types.js";

type Db = Kysely<Database> | Transaction<Database>;

/** Identifies a turn's user message together with its seq (a seq reused after a compaction does not match). */
export function promptHash(message: ChatMessage): string {
  const text = message.role === "user" ? contentText(message.content) : "";
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

function toCheckpoint(row: Selectable<CheckpointsTable>): CheckpointRecord {
  return {
    id: row.id,
    sessionId: row.session_id,
    seq: Number(row.seq),
    promptHash: row.prompt_hash,
    workspace: row.workspace,
    host: row.host,
    before: row.before_commit,
    after: row.after_commit,
    files: row.files === null ? null : (JSON.parse(row.files) as CheckpointFile[]),
    skipped: JSON.parse(row.skipped) as string[],
    createdAt: row.created_at,
  };
}

/**
 * Moves the checkpoints of `sessionId` with seq >= `fromSeq` to `archiveId` (inside the archiving transaction), but
 * those `keep` covers: they stay, renumbered (same id: a running turn still finishes its own), and the archive gets a
 * copy of each as it was.
 */
export async function archiveCheckpoints(
  db: Db,
  sessionId: string,
  archiveId: string,
  fromSeq = 0,
  keep: readonly CheckpointMove[] = [],
): Promise<void> {
  const kept: string[] = [];
  if (keep.length > 0) {
    const rows = await db
      .selectFrom("checkpoints")
      .selectAll()
      .where("session_id", "=", sessionId)
      .where("seq", ">=", fromSeq)
      .execute();
    for (const row of rows) {
      const seq = Number(row.seq);
      const move = keep.find((k) => seq >= k.from && seq < k.to);
      if (!move) continue;
      await db
        .insertInto("checkpoints")
        .values({ ...row, id: checkpointId(), session_id: archiveId })
        .execute();
      await db
        .updateTable("checkpoints")
        .set({ seq: move.seq, prompt_hash: move.promptHash })
        .where("id", "=", row.id)
        .execute();
      kept.push(row.id);
    }
  }
  let moved = db
    .updateTable("checkpoints")
    .set({ session_id: archiveId })
    .where("session_id", "=", sessionId)
    .where("seq", ">=", fromSeq);
  if (kept.length > 0) moved = moved.where("id", "not in", kept);
  await moved.execute();
}

/** Copies every checkpoint of `sessionId` to the fork `forkId` (fresh ids, same snapshots). */
export async function copyCheckpoints(db: Db, sessionId: string, forkId: string): Promise<void> {
  const rows = await db.selectFrom("checkpoints").selectAll().where("session_id", "=", sessionId).execute();
  if (rows.length === 0) return;
  await db
    .insertInto("checkpoints")
    .values(rows.map((row) => ({ ...row, id: checkpointId(), session_id: forkId })))
    .execute();
}

/** Deletes the checkpoints of these sessions (a deleted session and its archives). */
export async function deleteCheckpoints(db: Db, sessionIds: readonly string[]): Promise<void> {
  if (sessionIds.length > 0)
    await db
      .deleteFrom("checkpoints")
      .where("session_id", "in", [...sessionIds])
      .execute();
}

function checkpointId(): string {
  return `cp-${randomBytes(8).toString("hex")}`;
}

export function kyselyCheckpointStore(db: Kysely<Database>, location: string): CheckpointStore {
  const guard = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof StoreError) throw error;
      const message = errorText(error);
      throw new StoreError(`${what} failed on ${location}: ${message}`, { cause: error });
    }
  };
  return {
    add: (checkpoint: NewCheckpoint) =>
      guard("storing a checkpoint", async () => {
        const row: CheckpointsTable = {
          id: checkpointId(),
          session_id: checkpoint.sessionId,
          seq: checkpoint.seq,
          prompt_hash: checkpoint.promptHash,
          workspace: checkpoint.workspace,
          host: checkpoint.host,
          before_commit: checkpoint.before,
          after_commit: null,
          files: null,
          skipped: JSON.stringify(checkpoint.skipped),
          created_at: now(),
        };
        await db.insertInto("checkpoints").values(row).execute();
        return toCheckpoint(row);
      }),
    finish: (id, after, files, skipped) =>
      guard("completing a checkpoint", async () => {
        await db
          .updateTable("checkpoints")
          .set({ after_commit: after, files: JSON.stringify(files), skipped: JSON.stringify(skipped) })
          .where("id", "=", id)
          .execute();
      }),
    list: (sessionId) =>
      guard("listing checkpoints", async () => {
        const rows = await db
          .selectFrom("checkpoints")
          .selectAll()
          .where("session_id", "=", sessionId)
          .orderBy("seq")
          .orderBy("created_at")
          .execute();
        return rows.map(toCheckpoint);
      }),
    deleteOlderThan: (before) =>
      guard("deleting old checkpoints", async () => {
        const result = await db.deleteFrom("checkpoints").where("created_at", "<", before).executeTakeFirst();
        return Number(result.numDeletedRows);
      }),
    commitsOf: (host) =>
      guard("reading checkpoints", async () => {
        const rows = await db
          .selectFrom("checkpoints")
          .select(["before_commit", "after_commit"])
          .where("host", "=", host)
          .execute();
        const commits = new Set<string>();
        for (const row of rows) {
          commits.add(row.before_commit);
          if (row.after_commit) commits.add(row.after_commit);
        }
        return commits;
      }),
  };
}
