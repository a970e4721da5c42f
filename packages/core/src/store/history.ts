/**
 * A session's history in the `messages` table, written the three ways the store writes it: appended to (every
 * turn), replaced (compaction, `/clear`, a rewind: the old history moves to an archive session) and copied (a fork).
 * Each function runs inside a transaction its caller opened (store.ts, which also turns driver errors into
 * StoreErrors); none opens one of its own.
 */
import type { Kysely, Transaction } from "kysely";
import { insertOne, nextSeq } from "./append.js";
import { archiveCheckpoints } from "./checkpoints.js";
import { now } from "./clock.js";
import { archiveSlug } from "./ids.js";
import { displayColumn, json, patchColumns } from "./rows.js";
import type { Database, MessagesTable } from "./schema.js";
import { type MessageInput, type ReplaceOptions, SessionNotFoundError } from "./types.js";

/** The rows of `messages` stored at seqs `first`, `first + 1`, … of a session, all created at `at`. */
function messageRows(sessionId: string, first: number, messages: readonly MessageInput[], at: string): MessagesTable[] {
  return messages.map(({ message, usage, outcome }, i) => ({
    session_id: sessionId,
    seq: first + i,
    role: message.role,
    data: JSON.stringify(message),
    prompt_tokens: usage?.promptTokens ?? null,
    completion_tokens: usage?.completionTokens ?? null,
    total_tokens: usage?.totalTokens ?? null,
    usage: json(usage),
    is_error: outcome ? Number(outcome.isError) : null,
    duration_ms: outcome ? Math.round(outcome.durationMs) : null,
    display: displayColumn(outcome?.display),
    created_at: at,
  }));
}

/** Every column of `messages`, `session_id` first. */
const MESSAGE_COLUMNS = [
  "session_id",
  "seq",
  "role",
  "data",
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "usage",
  "is_error",
  "duration_ms",
  "display",
  "created_at",
] as const;

/** Rows per INSERT: stays under SQLite's 32 766 bound parameters (12 columns) and keeps PG statements small. */
const INSERT_BATCH = 500;

async function insertMessages(trx: Transaction<Database>, rows: readonly MessagesTable[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    await trx
      .insertInto("messages")
      .values(rows.slice(i, i + INSERT_BATCH))
      .execute();
  }
}

/**
 * In the transaction `trx` of `db`: appends `messages` (at least one) after the session's last one and marks the
 * session updated; returns their seqs. Throws SessionNotFoundError.
 */
export async function appendHistory(
  db: Kysely<Database>,
  trx: Transaction<Database>,
  sessionId: string,
  messages: readonly MessageInput[],
): Promise<number[]> {
  const at = now();
  // Compiled once (append.ts): this runs twice per tool round.
  const first = await nextSeq(db, trx, sessionId, at);
  if (first === undefined) throw new SessionNotFoundError(sessionId);
  const rows = messageRows(sessionId, first, messages, at);
  const [only] = rows;
  if (rows.length === 1 && only) await insertOne(db, trx, only);
  else await insertMessages(trx, rows);
  return messages.map((_, i) => first + i);
}

/**
 * In `trx`: `Store.replaceMessages`. The session's row and history (and the checkpoints `options` names) move to a
 * new archive session; the session keeps its id, gets `messages` from seq 0 and `options.patch`. Returns the
 * archive's id. Throws SessionNotFoundError.
 */
export async function replaceHistory(
  trx: Transaction<Database>,
  sessionId: string,
  messages: readonly MessageInput[],
  options: ReplaceOptions,
): Promise<string> {
  const row = await trx.selectFrom("sessions").selectAll().where("id", "=", sessionId).executeTakeFirst();
  if (!row) throw new SessionNotFoundError(sessionId);
  const at = now();
  const archiveId = archiveSlug(sessionId, options.kind);
  await trx
    .insertInto("sessions")
    .values({ ...row, id: archiveId, archived_from: sessionId, updated_at: at })
    .execute();
  await trx.updateTable("messages").set({ session_id: archiveId }).where("session_id", "=", sessionId).execute();
  await insertMessages(trx, messageRows(sessionId, 0, messages, at));
  await archiveCheckpoints(trx, sessionId, archiveId, options.checkpointsFrom, options.keepCheckpoints);
  await trx
    .updateTable("sessions")
    .set({ ...patchColumns(options.patch ?? {}), updated_at: at })
    .where("id", "=", sessionId)
    .execute();
  return archiveId;
}

/**
 * In `trx`: copies the current history of `fromId` to the session `toId` (whose row exists), inside the database
 * (no round trip per message), seqs and original timestamps kept.
 */
export async function copyHistory(trx: Transaction<Database>, fromId: string, toId: string): Promise<void> {
  await trx
    .insertInto("messages")
    .columns(MESSAGE_COLUMNS)
    .expression(
      trx
        .selectFrom("messages")
        .select((eb) => [eb.val(toId).as("session_id"), ...MESSAGE_COLUMNS.slice(1)])
        .where("session_id", "=", fromId),
    )
    .execute();
}
