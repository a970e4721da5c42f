/**
 * The store's read queries over many rows (listings, pages of a history, usage and totals), kept apart from the
 * writes in store.ts and history.ts. All are keyset or aggregate queries on indexed columns, so they stay fast on
 * 10 000 sessions and 10 000-message histories, and run unchanged on SQLite and PostgreSQL.
 */
import { type Kysely, sql } from "kysely";
import type { ChatMessage, Usage } from "../messages.js";
import type { ToolDisplay } from "../tools.js";
import { MESSAGE_FIELDS, parse, toMessage, toSession } from "./rows.js";
import type { Database } from "./schema.js";
import {
  type ListSessionsOptions,
  type MessagePageOptions,
  type SessionPage,
  type SessionStats,
  type StoredMessage,
  type StoredToolOutcome,
  StoreError,
  type UsagePoint,
} from "./types.js";

function encodeCursor(updatedAt: string, id: string): string {
  return Buffer.from(JSON.stringify([updatedAt, id])).toString("base64url");
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(value) && typeof value[0] === "string" && typeof value[1] === "string") {
      return [value[0], value[1]];
    }
  } catch {
    // fall through
  }
  throw new StoreError(`invalid session list cursor: ${cursor}`);
}

/** `text` as a LIKE pattern matching itself literally (`\` escapes `%`, `_` and itself). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Live sessions, most recently updated first, by keyset pagination on (updated_at, id). */
export async function listSessions(db: Kysely<Database>, options: ListSessionsOptions): Promise<SessionPage> {
  const limit = Math.min(Math.max(1, Math.floor(options.limit ?? 50)), 500);
  let query = db.selectFrom("sessions").selectAll().where("archived_from", "is", null);
  if (options.cwd !== undefined) query = query.where("cwd", "=", options.cwd);
  if (options.parentId !== undefined) query = query.where("parent_id", "=", options.parentId);
  if (options.topLevel) query = query.where("parent_id", "is", null);
  if (options.prompted) {
    query = query.where((eb) =>
      eb.or([
        eb("title", "is not", null),
        eb.exists(
          eb.selectFrom("messages").select(sql`1`.as("one")).whereRef("messages.session_id", "=", "sessions.id"),
        ),
        eb.exists(
          eb
            .selectFrom("sessions as archive")
            .select(sql`1`.as("one"))
            .whereRef("archive.archived_from", "=", "sessions.id"),
        ),
      ]),
    );
  }
  if (options.idPrefix) {
    // LIKE is case-insensitive for ASCII in SQLite only: ids are lower-case, so is the prefix compared.
    const pattern = `${likeLiteral(options.idPrefix.toLowerCase())}%`;
    query = query.where(sql<boolean>`id like ${pattern} escape '\\'`);
  }
  if (options.titleContains) {
    const pattern = `%${likeLiteral(options.titleContains.toLowerCase())}%`;
    query = query.where(sql<boolean>`lower(title) like ${pattern} escape '\\'`);
  }
  if (options.cursor) {
    const [updatedAt, id] = decodeCursor(options.cursor);
    query = query.where((eb) =>
      eb.or([eb("updated_at", "<", updatedAt), eb.and([eb("updated_at", "=", updatedAt), eb("id", "<", id)])]),
    );
  }
  const rows = await query
    .orderBy("updated_at", "desc")
    .orderBy("id", "desc")
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit).map(toSession);
  const last = page.at(-1);
  return rows.length > limit && last
    ? { sessions: page, nextCursor: encodeCursor(last.updatedAt, last.id) }
    : { sessions: page };
}

/** Messages `seq >= fromSeq` in order, at most `limit` (the primary key (session_id, seq) serves it). */
export async function loadMessagePage(
  db: Kysely<Database>,
  sessionId: string,
  options: MessagePageOptions,
): Promise<StoredMessage[]> {
  const limit = Math.min(Math.max(1, Math.floor(options.limit ?? 200)), 2000);
  const rows = await db
    .selectFrom("messages")
    .select(MESSAGE_FIELDS)
    .where("session_id", "=", sessionId)
    .where("seq", ">=", Math.max(0, Math.floor(options.fromSeq ?? 0)))
    .orderBy("seq")
    .limit(limit)
    .execute();
  return rows.map(toMessage);
}

/** How a session's tool calls ended, in seq order (results stored without an outcome are skipped by the query). */
export async function loadToolOutcomes(db: Kysely<Database>, sessionId: string): Promise<StoredToolOutcome[]> {
  const rows = await db
    .selectFrom("messages")
    .select(["seq", "data", "is_error", "display"])
    .where("session_id", "=", sessionId)
    .where("role", "=", "tool")
    .where("is_error", "is not", null)
    .orderBy("seq")
    .execute();
  const outcomes: StoredToolOutcome[] = [];
  for (const row of rows) {
    const message = JSON.parse(row.data) as ChatMessage;
    if (message.role !== "tool") continue;
    const display = parse<ToolDisplay>(row.display);
    outcomes.push({
      seq: Number(row.seq),
      toolCallId: message.tool_call_id,
      isError: Number(row.is_error) !== 0,
      ...(display ? { display } : {}),
    });
  }
  return outcomes;
}

/** The usage column of every response, without reading the message bodies. */
export async function listUsage(db: Kysely<Database>, sessionId: string): Promise<UsagePoint[]> {
  const rows = await db
    .selectFrom("messages")
    .select(["seq", "usage", "created_at"])
    .where("session_id", "=", sessionId)
    .where("usage", "is not", null)
    .orderBy("seq")
    .execute();
  const points: UsagePoint[] = [];
  for (const row of rows) {
    const usage = parse<Usage>(row.usage);
    if (usage) points.push({ seq: Number(row.seq), usage, createdAt: row.created_at });
  }
  return points;
}

/** Sums per session, its archives folded in (one grouped query over the messages of the sessions and archives). */
export async function sessionStats(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, SessionStats>> {
  const stats = new Map<string, SessionStats>();
  if (ids.length === 0) return stats;
  const owners = await db
    .selectFrom("sessions")
    .select(["id", "archived_from"])
    .where((eb) => eb.or([eb("id", "in", [...ids]), eb("archived_from", "in", [...ids])]))
    .execute();
  const ownerOf = new Map<string, string>();
  for (const row of owners) {
    ownerOf.set(row.id, row.archived_from ?? row.id);
    const owner = row.archived_from ?? row.id;
    const entry = stats.get(owner) ?? {
      messages: 0,
      prompts: 0,
      requests: 0,
      promptTokens: 0,
      completionTokens: 0,
      cachedTokens: 0,
      archives: 0,
    };
    if (row.archived_from) entry.archives++;
    stats.set(owner, entry);
  }
  const sums = await db
    .selectFrom("messages")
    .select((eb) => [
      "session_id",
      eb.fn.countAll().as("messages"),
      eb.fn.sum<number | string | null>(eb.case().when("role", "=", "user").then(1).else(0).end()).as("prompts"),
      eb.fn.count("usage").as("requests"),
      eb.fn.sum<number | string | null>("prompt_tokens").as("prompt"),
      eb.fn.sum<number | string | null>("completion_tokens").as("completion"),
    ])
    .where("session_id", "in", [...ownerOf.keys()])
    .groupBy("session_id")
    .execute();
  for (const row of sums) {
    const owner = ownerOf.get(row.session_id);
    const entry = owner === undefined ? undefined : stats.get(owner);
    if (!entry) continue;
    if (owner === row.session_id) entry.messages = Number(row.messages);
    entry.prompts += Number(row.prompts ?? 0);
    entry.requests += Number(row.requests);
    entry.promptTokens += Number(row.prompt ?? 0);
    entry.completionTokens += Number(row.completion ?? 0);
  }
  // Cached tokens are only in the usage JSON: read the usages that name them (few rows parsed, any dialect).
  const cached = await db
    .selectFrom("messages")
    .select(["session_id", "usage"])
    .where("session_id", "in", [...ownerOf.keys()])
    .where("usage", "like", "%cachedTokens%")
    .execute();
  for (const row of cached) {
    const entry = stats.get(ownerOf.get(row.session_id) ?? "");
    const tokens = parse<Usage>(row.usage)?.cachedTokens;
    if (entry && typeof tokens === "number") entry.cachedTokens += tokens;
  }
  return stats;
}
