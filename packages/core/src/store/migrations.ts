/**
 * Code migrations, run by `openStore` on every open (Kysely's Migrator keeps track of what ran, in its own tables,
 * under a lock, so several agent processes starting on one PostgreSQL database do not race). Append new migrations;
 * never edit one that shipped. The same builder calls produce the DDL of both dialects.
 */
import { type Kysely, type Migration, type MigrationProvider, Migrator } from "kysely";
import { errorText } from "../error-text.js";
import { StoreError } from "./types.js";

const migrations: Record<string, Migration> = {
  "0001_initial": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("prompts")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("version", "integer", (c) => c.notNull())
        .addColumn("hash", "text", (c) => c.notNull())
        .addColumn("content", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addUniqueConstraint("prompts_name_version", ["name", "version"])
        .addUniqueConstraint("prompts_name_hash", ["name", "hash"])
        .execute();
      await db.schema
        .createTable("sessions")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("cwd", "text", (c) => c.notNull())
        .addColumn("title", "text")
        .addColumn("mode", "text")
        .addColumn("model", "text")
        .addColumn("prompt_id", "text")
        .addColumn("prompt_args", "text")
        .addColumn("system_prompt", "text")
        .addColumn("tool_definitions", "text")
        .addColumn("request_params", "text")
        .addColumn("parent_id", "text")
        .addColumn("archived_from", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      // The listing: live sessions by recency (optionally per cwd), and the archives/children of one session.
      await db.schema.createIndex("sessions_updated").on("sessions").columns(["updated_at", "id"]).execute();
      await db.schema.createIndex("sessions_cwd_updated").on("sessions").columns(["cwd", "updated_at", "id"]).execute();
      await db.schema.createIndex("sessions_archived_from").on("sessions").column("archived_from").execute();
      await db.schema.createIndex("sessions_parent").on("sessions").column("parent_id").execute();
      await db.schema
        .createTable("messages")
        .addColumn("session_id", "text", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .addColumn("prompt_tokens", "integer")
        .addColumn("completion_tokens", "integer")
        .addColumn("total_tokens", "integer")
        .addColumn("usage", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("messages_pk", ["session_id", "seq"])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable("messages").execute();
      await db.schema.dropTable("sessions").execute();
      await db.schema.dropTable("prompts").execute();
    },
  },
  "0002_session_forks": {
    // A fork's link to the session it was copied from. Not `parent_id`: that one means "spawned by" (subagents:
    // nesting depth, children listings), which a fork is not.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("sessions").addColumn("forked_from", "text").execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable("sessions").dropColumn("forked_from").execute();
    },
  },
  "0003_eval": {
    // `crow eval`: a run and its finished trials. The primary key makes a trial recorded at most once, whichever
    // process (a resumed run, a second queue worker) finishes it again.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("eval_runs")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("name", "text")
        .addColumn("suite", "text", (c) => c.notNull())
        .addColumn("config", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("eval_trials")
        .addColumn("run_id", "text", (c) => c.notNull())
        .addColumn("task", "text", (c) => c.notNull())
        .addColumn("variant", "text", (c) => c.notNull())
        .addColumn("trial", "integer", (c) => c.notNull())
        .addColumn("session_id", "text")
        .addColumn("reward", "double precision", (c) => c.notNull())
        .addColumn("passed", "integer", (c) => c.notNull())
        .addColumn("stop_reason", "text")
        .addColumn("wall_ms", "integer", (c) => c.notNull())
        .addColumn("requests", "integer", (c) => c.notNull())
        .addColumn("prompt_tokens", "integer", (c) => c.notNull())
        .addColumn("completion_tokens", "integer", (c) => c.notNull())
        .addColumn("cached_tokens", "integer", (c) => c.notNull())
        .addColumn("cost", "double precision")
        .addColumn("tool_calls", "integer", (c) => c.notNull())
        .addColumn("tool_errors", "integer", (c) => c.notNull())
        .addColumn("error", "text")
        .addColumn("finished_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("eval_trials_pk", ["run_id", "task", "variant", "trial"])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable("eval_trials").execute();
      await db.schema.dropTable("eval_runs").execute();
    },
  },
  "0004_tool_result_outcome": {
    // A tool result's error flag and duration, which the viewer used to infer from the text and the timestamps.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("messages").addColumn("is_error", "integer").execute();
      await db.schema.alterTable("messages").addColumn("duration_ms", "integer").execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable("messages").dropColumn("duration_ms").execute();
      await db.schema.alterTable("messages").dropColumn("is_error").execute();
    },
  },
  "0005_additional_directories": {
    // ACP `additionalDirectories`: the workspace roots a session has besides its cwd (a JSON list of absolute paths;
    // null: none).
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("sessions").addColumn("additional_directories", "text").execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable("sessions").dropColumn("additional_directories").execute();
    },
  },
  "0006_checkpoints": {
    // Workspace checkpoints per turn (`/rewind`): references to snapshots in a shadow git repository on `host`.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("checkpoints")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("session_id", "text", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("prompt_hash", "text", (c) => c.notNull())
        .addColumn("workspace", "text", (c) => c.notNull())
        .addColumn("host", "text", (c) => c.notNull())
        .addColumn("before_commit", "text", (c) => c.notNull())
        .addColumn("after_commit", "text")
        .addColumn("files", "text")
        .addColumn("skipped", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("checkpoints_session").on("checkpoints").columns(["session_id", "seq"]).execute();
      await db.schema.createIndex("checkpoints_created").on("checkpoints").column("created_at").execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable("checkpoints").execute();
    },
  },
  "0007_tool_display": {
    // A tool result's display (title, locations, the diff an edit made) as the host showed it live, JSON; null on
    // other rows and rows stored before it was kept (a replay then rebuilds what it can from the call's arguments).
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("messages").addColumn("display", "text").execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable("messages").dropColumn("display").execute();
    },
  },
  "0008_eval_trial_details": {
    // What makes a trial diagnosable (JSON: named rewards, time per phase, the scripts' output, the emulated
    // environment); null on trials recorded before.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("eval_trials").addColumn("details", "text").execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable("eval_trials").dropColumn("details").execute();
    },
  },
  "0009_session_leases": {
    // Which live process holds a session open (lease-types.ts): a session open in one process is refused to another
    // until the owner closes it or stops renewing (killed). No foreign key: a lease may outlive its session's row
    // for the moment a delete takes; it then expires.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("session_leases")
        .addColumn("session_id", "text", (c) => c.primaryKey())
        .addColumn("owner", "text", (c) => c.notNull())
        .addColumn("host", "text", (c) => c.notNull())
        .addColumn("pid", "integer", (c) => c.notNull())
        .addColumn("agent", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addColumn("acquired_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("session_leases_owner").on("session_leases").column("owner").execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable("session_leases").execute();
    },
  },
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * Whether every migration this version knows, and no other, is recorded as done: one read instead of the
 * Migrator's dozen statements (its tables, its lock, its bookkeeping) on every start of an up-to-date store, which
 * is nearly every start. Anything else (no table yet, a migration missing, one this version does not know) is the
 * Migrator's to handle, under its lock.
 */
async function upToDate(db: Kysely<unknown>): Promise<boolean> {
  try {
    const rows = await (db as Kysely<{ crow_migrations: { name: string } }>)
      .selectFrom("crow_migrations")
      .select("name")
      .execute();
    const done = rows.map((row) => row.name).sort();
    return done.length === MIGRATIONS.length && done.every((name, i) => name === MIGRATIONS[i]);
  } catch {
    return false;
  }
}

/** Brings the schema up to date; throws StoreError naming the failed migration. */
export async function migrate(db: Kysely<unknown>, location: string): Promise<void> {
  if (await upToDate(db)) return;
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: "crow_migrations",
    migrationLockTableName: "crow_migration_lock",
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "(before any migration)";
    const message = errorText(error);
    throw new StoreError(`database migration ${failed} failed on ${location}: ${message}`);
  }
}

/** The names of the migrations, in order (for tests and `crow sessions`). */
export const MIGRATIONS = Object.keys(migrations).sort();
