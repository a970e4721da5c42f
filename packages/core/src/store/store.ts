/**
 * The one {@link Store} implementation: the same Kysely queries on SQLite and PostgreSQL. Every write runs in a
 * transaction; JSON is TEXT on both (parsed here), timestamps are ISO strings. Here: prompts, sessions' rows, and
 * the transaction and error wrapping of every method. The history's writes are history.ts, the reads over many rows
 * queries.ts, checkpoints and evaluation runs their own stores (checkpoints.ts, eval.ts).
 */
import { createHash } from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import { errorText } from "../error-text.js";
import type { CheckpointStore } from "./checkpoint-types.js";
import { copyCheckpoints, deleteCheckpoints, kyselyCheckpointStore } from "./checkpoints.js";
import { now } from "./clock.js";
import { kyselyEvalStore } from "./eval.js";
import type { EvalStore } from "./eval-types.js";
import { appendHistory, copyHistory, replaceHistory } from "./history.js";
import { sessionSlug } from "./ids.js";
import type { LeaseStore } from "./lease-types.js";
import { kyselyLeaseStore } from "./leases.js";
import { listSessions, listUsage, loadMessagePage, loadToolOutcomes, sessionStats } from "./queries.js";
import { directoriesColumn, json, MESSAGE_FIELDS, patchColumns, toMessage, toPrompt, toSession } from "./rows.js";
import type { Database, SessionsTable } from "./schema.js";
import {
  type ForkOptions,
  type ListSessionsOptions,
  type MessageInput,
  type MessagePageOptions,
  type NewSession,
  type PromptRecord,
  type ReplaceOptions,
  SessionNotFoundError,
  type SessionPage,
  type SessionRecord,
  type SessionStats,
  type Store,
  type StoredMessage,
  type StoredToolDisplay,
  type StoredToolOutcome,
  StoreError,
  type StoreKind,
  type UsagePoint,
} from "./types.js";

type Db = Kysely<Database> | Transaction<Database>;

async function idTaken(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom("sessions").select("id").where("id", "=", id).executeTakeFirst()) !== undefined;
}

/** A fresh session slug not in use (a clash is very unlikely; retried a few times anyway). */
async function freeSessionId(db: Db): Promise<string> {
  for (let attempt = 0; attempt < 6; attempt++) {
    const id = sessionSlug();
    if (!(await idTaken(db, id))) return id;
  }
  throw new StoreError("could not find a free session id");
}

export class KyselyStore implements Store {
  readonly evals: EvalStore;
  readonly checkpoints: CheckpointStore;
  readonly leases: LeaseStore;

  constructor(
    readonly db: Kysely<Database>,
    readonly kind: StoreKind,
    readonly location: string,
  ) {
    this.evals = kyselyEvalStore(db, location);
    this.checkpoints = kyselyCheckpointStore(db, location);
    this.leases = kyselyLeaseStore(db, location);
  }

  /** Runs `fn`, turning driver errors into StoreErrors that name the store. */
  private async guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof StoreError) throw error;
      const message = errorText(error);
      throw new StoreError(`${what} failed on ${this.location}: ${message}`, { cause: error });
    }
  }

  private async findPrompt(db: Db, name: string, hash: string): Promise<PromptRecord | undefined> {
    const row = await db
      .selectFrom("prompts")
      .selectAll()
      .where("name", "=", name)
      .where("hash", "=", hash)
      .executeTakeFirst();
    return row ? toPrompt(row) : undefined;
  }

  getOrCreatePrompt(name: string, content: string): Promise<PromptRecord> {
    const hash = createHash("sha256").update(content).digest("hex");
    return this.guard("storing a prompt", async () => {
      const existing = await this.findPrompt(this.db, name, hash);
      if (existing) return existing;
      try {
        return await this.db.transaction().execute(async (trx) => {
          const again = await this.findPrompt(trx, name, hash);
          if (again) return again;
          const max = await trx
            .selectFrom("prompts")
            .select((eb) => eb.fn.max("version").as("v"))
            .where("name", "=", name)
            .executeTakeFirst();
          const version = Number(max?.v ?? 0) + 1;
          const row = { id: `${name}@${version}`, name, version, hash, content, created_at: now() };
          await trx.insertInto("prompts").values(row).execute();
          return toPrompt(row);
        });
      } catch (error) {
        // Another process stored the same content (or took the version number) first: use what is there.
        const raced = await this.findPrompt(this.db, name, hash);
        if (raced) return raced;
        throw error;
      }
    });
  }

  getPrompt(id: string): Promise<PromptRecord | undefined> {
    return this.guard("reading a prompt", async () => {
      const row = await this.db.selectFrom("prompts").selectAll().where("id", "=", id).executeTakeFirst();
      return row ? toPrompt(row) : undefined;
    });
  }

  listPromptVersions(name: string): Promise<PromptRecord[]> {
    return this.guard("listing prompts", async () => {
      const rows = await this.db
        .selectFrom("prompts")
        .selectAll()
        .where("name", "=", name)
        .orderBy("version")
        .execute();
      return rows.map(toPrompt);
    });
  }

  createSession(init: NewSession): Promise<SessionRecord> {
    return this.guard("creating a session", () =>
      this.db.transaction().execute(async (trx) => {
        if (init.id !== undefined && (await idTaken(trx, init.id))) {
          throw new StoreError(`session id already exists: ${init.id}`);
        }
        const id = init.id ?? (await freeSessionId(trx));
        const at = now();
        const row: SessionsTable = {
          id,
          cwd: init.cwd,
          title: init.title ?? null,
          mode: init.mode ?? null,
          model: init.model ?? null,
          prompt_id: init.promptId ?? null,
          prompt_args: json(init.promptArgs),
          system_prompt: init.systemPrompt ?? null,
          tool_definitions: json(init.toolDefinitions),
          request_params: json(init.requestParams),
          parent_id: init.parentId ?? null,
          archived_from: null,
          forked_from: null,
          additional_directories: directoriesColumn(init.additionalDirectories),
          created_at: at,
          updated_at: at,
        };
        await trx.insertInto("sessions").values(row).execute();
        return toSession(row);
      }),
    );
  }

  getSession(id: string): Promise<SessionRecord | undefined> {
    return this.guard("reading a session", async () => {
      const row = await this.db.selectFrom("sessions").selectAll().where("id", "=", id).executeTakeFirst();
      return row ? toSession(row) : undefined;
    });
  }

  updateSession(id: string, patch: Parameters<Store["updateSession"]>[1]): Promise<SessionRecord> {
    return this.guard("updating a session", () =>
      this.db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable("sessions")
          .set({ ...patchColumns(patch), updated_at: now() })
          .where("id", "=", id)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 0) throw new SessionNotFoundError(id);
        const row = await trx.selectFrom("sessions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
        return toSession(row);
      }),
    );
  }

  listSessions(options: ListSessionsOptions = {}): Promise<SessionPage> {
    return this.guard("listing sessions", () => listSessions(this.db, options));
  }

  deleteSession(id: string): Promise<boolean> {
    return this.guard("deleting a session", () =>
      this.db.transaction().execute(async (trx) => {
        const found = await trx.selectFrom("sessions").select("id").where("id", "=", id).executeTakeFirst();
        if (!found) return false;
        const archives = await trx.selectFrom("sessions").select("id").where("archived_from", "=", id).execute();
        const ids = [id, ...archives.map((a) => a.id)];
        await trx.deleteFrom("messages").where("session_id", "in", ids).execute();
        await trx.deleteFrom("sessions").where("id", "in", ids).execute();
        await deleteCheckpoints(trx, ids);
        return true;
      }),
    );
  }

  appendMessages(sessionId: string, messages: readonly MessageInput[]): Promise<number[]> {
    if (messages.length === 0) return Promise.resolve([]);
    return this.guard("storing messages", () =>
      this.db.transaction().execute((trx) => appendHistory(this.db, trx, sessionId, messages)),
    );
  }

  loadMessages(sessionId: string): Promise<StoredMessage[]> {
    return this.guard("loading messages", async () => {
      const rows = await this.db
        .selectFrom("messages")
        .select(MESSAGE_FIELDS)
        .where("session_id", "=", sessionId)
        .orderBy("seq")
        .execute();
      return rows.map(toMessage);
    });
  }

  countMessages(sessionId: string): Promise<number> {
    return this.guard("counting messages", async () => {
      const row = await this.db
        .selectFrom("messages")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("session_id", "=", sessionId)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    });
  }

  async loadToolDisplays(sessionId: string): Promise<StoredToolDisplay[]> {
    const outcomes = await this.loadToolOutcomes(sessionId);
    return outcomes.flatMap(({ seq, toolCallId, display }) => (display ? [{ seq, toolCallId, display }] : []));
  }

  loadToolOutcomes(sessionId: string): Promise<StoredToolOutcome[]> {
    return this.guard("loading tool outcomes", () => loadToolOutcomes(this.db, sessionId));
  }

  replaceMessages(sessionId: string, messages: readonly MessageInput[], options: ReplaceOptions = {}): Promise<string> {
    return this.guard("replacing the history", () =>
      this.db.transaction().execute((trx) => replaceHistory(trx, sessionId, messages, options)),
    );
  }

  listArchives(sessionId: string): Promise<SessionRecord[]> {
    return this.guard("listing archives", async () => {
      const rows = await this.db
        .selectFrom("sessions")
        .selectAll()
        .where("archived_from", "=", sessionId)
        .orderBy("updated_at")
        .orderBy("id")
        .execute();
      return rows.map(toSession);
    });
  }

  loadMessagePage(sessionId: string, options: MessagePageOptions = {}): Promise<StoredMessage[]> {
    return this.guard("loading messages", () => loadMessagePage(this.db, sessionId, options));
  }

  listUsage(sessionId: string): Promise<UsagePoint[]> {
    return this.guard("reading usage", () => listUsage(this.db, sessionId));
  }

  sessionStats(ids: readonly string[]): Promise<Map<string, SessionStats>> {
    return this.guard("summing session statistics", () => sessionStats(this.db, ids));
  }

  forkSession(sessionId: string, options: ForkOptions = {}): Promise<SessionRecord> {
    return this.guard("forking a session", () =>
      this.db.transaction().execute(async (trx) => {
        const source = await trx.selectFrom("sessions").selectAll().where("id", "=", sessionId).executeTakeFirst();
        if (!source || source.archived_from !== null) throw new SessionNotFoundError(sessionId);
        const at = now();
        const row: SessionsTable = {
          ...source,
          id: await freeSessionId(trx),
          cwd: options.cwd ?? source.cwd,
          forked_from: sessionId,
          ...(options.additionalDirectories
            ? { additional_directories: directoriesColumn(options.additionalDirectories) }
            : {}),
          created_at: at,
          updated_at: at,
        };
        await trx.insertInto("sessions").values(row).execute();
        await copyHistory(trx, sessionId, row.id);
        await copyCheckpoints(trx, sessionId, row.id);
        return toSession(row);
      }),
    );
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}
