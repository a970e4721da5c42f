/**
 * Appending messages to a session: what every tool round does twice (the assistant's message, then the tool result),
 * so its three statements are built and compiled by Kysely once per database and run afterwards as compiled SQL with
 * new parameters. Building and compiling the same three queries on every append cost a fresh agent ~0.3 ms of CPU
 * per round (profile of its first tool rounds); the SQL is the same either way, in each dialect's own placeholders.
 *
 * Which parameter is which is learnt when compiling: each query is compiled once with a distinct marker for every
 * value, and the markers' positions in the compiled parameters say where each value goes. So nothing here assumes
 * how a dialect orders its parameters.
 */
import { CompiledQuery, type Kysely, type Transaction } from "kysely";
import type { Database, MessagesTable } from "./schema.js";

/** A compiled statement and, for each of its parameters, the name of the value that goes there. */
interface Template {
  sql: string;
  slots: string[];
}

/**
 * Stands for the value `name` in a query being built. Typed `never` so it fits any column (a row's numbers
 * included); what it really is, a string, only ever reaches the compiled parameters, where {@link template} reads it.
 */
type Marker = (name: string) => never;

/** Compiles `build(marker)` once, where `marker(name)` stands for the value `name`; learns where each value goes. */
function template(build: (marker: Marker) => { compile(): CompiledQuery }): Template {
  const marker = ((name: string) => `\u0000crow:${name}`) as Marker;
  const compiled = build(marker).compile();
  const slots = compiled.parameters.map((parameter) => {
    if (typeof parameter !== "string" || !parameter.startsWith("\u0000crow:")) {
      throw new Error(`unexpected parameter in a compiled append statement: ${String(parameter)}`);
    }
    return parameter.slice("\u0000crow:".length);
  });
  return { sql: compiled.sql, slots };
}

function run(db: Transaction<Database>, { sql, slots }: Template, values: object) {
  return db.executeQuery<Record<string, unknown>>(
    CompiledQuery.raw(
      sql,
      slots.map((slot) => (values as Record<string, unknown>)[slot]),
    ),
  );
}

interface AppendTemplates {
  touch: Template;
  lastSeq: Template;
  /** The insert of one row (appends are one message at a time but for imports and compaction). */
  insertOne: Template;
}

const templates = new WeakMap<Kysely<Database>, AppendTemplates>();

function templatesFor(db: Kysely<Database>): AppendTemplates {
  let found = templates.get(db);
  if (!found) {
    found = {
      touch: template((m) =>
        db
          .updateTable("sessions")
          .set({ updated_at: m("at") })
          .where("id", "=", m("session")),
      ),
      lastSeq: template((m) =>
        db
          .selectFrom("messages")
          .select((eb) => eb.fn.max("seq").as("m"))
          .where("session_id", "=", m("session")),
      ),
      insertOne: template((m) =>
        db.insertInto("messages").values({
          session_id: m("session_id"),
          seq: m("seq"),
          role: m("role"),
          data: m("data"),
          prompt_tokens: m("prompt_tokens"),
          completion_tokens: m("completion_tokens"),
          total_tokens: m("total_tokens"),
          usage: m("usage"),
          is_error: m("is_error"),
          duration_ms: m("duration_ms"),
          display: m("display"),
          created_at: m("created_at"),
        }),
      ),
    };
    templates.set(db, found);
  }
  return found;
}

/**
 * In the transaction `trx` of `db`: marks the session updated at `at` and returns the seq its next message gets, or
 * undefined when there is no such session.
 */
export async function nextSeq(
  db: Kysely<Database>,
  trx: Transaction<Database>,
  sessionId: string,
  at: string,
): Promise<number | undefined> {
  const { touch, lastSeq } = templatesFor(db);
  const touched = await run(trx, touch, { at, session: sessionId });
  if (Number(touched.numAffectedRows ?? 0) === 0) return undefined;
  const max = (await run(trx, lastSeq, { session: sessionId })).rows[0]?.m;
  return max === null || max === undefined ? 0 : Number(max) + 1;
}

/** In the transaction `trx` of `db`: inserts one message row. */
export async function insertOne(db: Kysely<Database>, trx: Transaction<Database>, row: MessagesTable): Promise<void> {
  await run(trx, templatesFor(db).insertOne, row);
}
