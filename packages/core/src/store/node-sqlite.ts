/**
 * The embedded store on Node's own SQLite (`node:sqlite`, unflagged from Node 22.13): nothing to compile at install.
 * Kysely's SQLite dialect takes a better-sqlite3-like database (`prepare(sql)` → `{reader, all, run, iterate}`); this
 * adapts `DatabaseSync` to it. Used wherever `node:sqlite` exists; better-sqlite3 (an optional dependency) only
 * where it does not (Node 20). `CROW_SQLITE_DRIVER=better-sqlite3` forces the other one (tests, comparisons).
 */
import type { SqliteDatabase, SqliteStatement } from "kysely";

/** The part of `node:sqlite`'s `StatementSync` used here (typed locally: @types/node for Node 20 lacks it). */
interface StatementSync {
  all(...parameters: unknown[]): unknown[];
  run(...parameters: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate?(...parameters: unknown[]): IterableIterator<unknown>;
  /** Node 22.16+: the result columns (none for a statement that returns no rows). */
  columns?(): unknown[];
}

interface DatabaseSync {
  prepare(sql: string): StatementSync;
  exec(sql: string): void;
  close(): void;
}

interface NodeSqliteModule {
  DatabaseSync: new (file: string) => DatabaseSync;
}

/** The SQLite driver names `crow doctor` reports. */
export type SqliteDriverName = "node:sqlite" | "better-sqlite3";

let loaded: NodeSqliteModule | null | undefined;

/**
 * `node:sqlite`, or undefined where this Node has none (Node 20; 22.5–22.12 without `--experimental-sqlite`). Node
 * prints an ExperimentalWarning when the module loads: it is about Crow's own store, so it is dropped (only that
 * warning, only during the load) instead of reaching the user's terminal.
 */
export function nodeSqlite(): NodeSqliteModule | undefined {
  if (loaded !== undefined) return loaded ?? undefined;
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === "string" ? warning : warning.message;
    const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const name = typeof warning === "string" ? type : warning.name;
    if (name === "ExperimentalWarning" && /sqlite/i.test(text)) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    loaded = (process.getBuiltinModule?.("node:sqlite") as NodeSqliteModule | undefined) ?? null;
  } catch {
    loaded = null;
  } finally {
    process.emitWarning = emitWarning;
  }
  return loaded ?? undefined;
}

/**
 * The driver the embedded store uses in this process. `CROW_SQLITE_DRIVER` is read here, not by the agent's
 * configuration loader: a process-wide switch for tests and comparisons rather than a user's setting, and the store
 * is also opened by SDK hosts that load no configuration.
 */
export function sqliteDriverName(env: NodeJS.ProcessEnv = process.env): SqliteDriverName {
  const forced = env.CROW_SQLITE_DRIVER?.trim();
  if (forced === "better-sqlite3") return "better-sqlite3";
  return nodeSqlite() ? "node:sqlite" : "better-sqlite3";
}

/** Whether a statement returns rows: its columns where Node says (22.16+), else its first keyword. */
function readsRows(statement: StatementSync, sql: string): boolean {
  if (typeof statement.columns === "function") return statement.columns().length > 0;
  return /^\s*(select|with|pragma|values|explain)\b/i.test(sql) || /\breturning\b/i.test(sql);
}

/** Statements kept prepared per connection (the store issues a few dozen distinct SQL strings). */
const STATEMENT_CACHE_SIZE = 200;

/** `DatabaseSync` as Kysely's SQLite dialect wants it, with statements reused by SQL text. */
export function nodeSqliteDatabase(database: DatabaseSync): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  const adapt = (sql: string): SqliteStatement => {
    const statement = database.prepare(sql);
    const reader = readsRows(statement, sql);
    return {
      reader,
      all: (parameters) => statement.all(...parameters),
      run: (parameters) => statement.run(...parameters),
      iterate: (parameters) =>
        statement.iterate ? statement.iterate(...parameters) : statement.all(...parameters)[Symbol.iterator](),
    };
  };
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      let statement = cache.get(sql);
      if (statement) cache.delete(sql);
      else {
        statement = adapt(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) {
          const [oldest] = cache.keys();
          if (oldest !== undefined) cache.delete(oldest);
        }
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/** Opens `file` with `node:sqlite` (the caller made sure it exists); pragmas as for better-sqlite3. */
export function openNodeSqlite(file: string, busyTimeoutMs: number): SqliteDatabase {
  const sqlite = nodeSqlite();
  if (!sqlite) throw new Error("node:sqlite is not available in this Node.js");
  const database = new sqlite.DatabaseSync(file);
  database.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  if (file !== ":memory:") database.exec("PRAGMA journal_mode = WAL");
  database.exec("PRAGMA synchronous = NORMAL");
  return nodeSqliteDatabase(database);
}
