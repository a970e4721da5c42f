/**
 * `openStore(uri)`: the one way to get a {@link Store}. Picks the dialect from the `db_uri`, opens the connection
 * (the drivers load lazily, so an agent that never opens a store never loads the native SQLite module), runs the
 * migrations, and fails with a message that names the database and what went wrong.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type BetterSqlite3Type from "better-sqlite3";
import {
  CompiledQuery,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  Kysely,
  PostgresDialect,
  SqliteAdapter,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  type SqliteStatement,
} from "kysely";
import { errorText } from "../error-text.js";
import { buildNeeds, missingDriverText } from "./driver-build.js";
import { migrate } from "./migrations.js";
import { openNodeSqlite, sqliteDriverName } from "./node-sqlite.js";
import type { Database } from "./schema.js";
import { KyselyStore } from "./store.js";
import { type Store, StoreDriverError, StoreError, StoreLocationError } from "./types.js";
import { crowHome, type DbTarget, defaultDbUri, parseDbUri, redactUri } from "./uri.js";

export interface OpenStoreOptions {
  /** Anchors relative SQLite paths (default: the Crow home directory, `CROW_HOME` or `~/.crow`). */
  baseDir?: string;
  /** SQLite: how long a write waits for another process's lock, in ms (default 5000). */
  busyTimeoutMs?: number;
  /** PostgreSQL: connections in the pool (default 4). */
  poolSize?: number;
}

/**
 * SQLite write transactions start with `BEGIN IMMEDIATE`: a deferred transaction that reads first and then writes
 * fails at once with SQLITE_BUSY when another process wrote in between (the busy timeout does not apply to that
 * upgrade), while an immediate one waits for the lock.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
  }
}

/**
 * Kysely's SQLite adapter says DDL is not transactional and takes no migration lock (it assumes one process), so two
 * processes opening a new database at once (an editor's agent and `crow sessions serve`, two `crow run`s) both ran
 * the first migration and one failed with "table already exists". SQLite's DDL is transactional: migrations run in
 * one `BEGIN IMMEDIATE` transaction, so the second process waits for the first, then sees its migrations as done.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class CrowSqliteDialect extends SqliteDialect {
  constructor(private readonly config: SqliteDialectConfig) {
    super(config);
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.config);
  }
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/** Statements kept prepared per connection; the store issues a few dozen distinct SQL strings. */
const STATEMENT_CACHE_SIZE = 200;

/**
 * Whether better-sqlite3's native objects (connections, statements) must never be garbage collected. Node 24.19
 * added environment cleanup hooks to the header-only `node::ObjectWrap` that better-sqlite3 12 builds on: an addon
 * compiled against those headers (any source build on Node >= 24.19, which is what an install without access to the
 * prebuilt binaries does) removes its hook in the destructor, and when V8 collects the object in a GC that runs
 * outside a JavaScript context (an idle or memory-reducer task) Node aborts the process ("Assertion failed: (env) !=
 * nullptr" in RemoveEnvironmentCleanupHook, nodejs/node#65446). `crow acp` died that way right after startup, one of
 * the `pragma()` calls' throwaway statements being collected. Node 20 and 22 headers have no such hook. Every Node
 * 24 and later counts, not only >= 24.19: the hazard follows the headers the addon was compiled against, not the
 * runtime (an addon built under 24.19 aborts on 24.18 too), and the runtime cannot tell which headers those were.
 * Since Node 22.13 and 24 use `node:sqlite` (node-sqlite.ts), this only applies when `CROW_SQLITE_DRIVER=better-sqlite3`
 * forces the addon on Node 24. Drop it with better-sqlite3 13 (Node-API, no ObjectWrap), or with Node 20.
 */
function nativeObjectsMustStayReachable(version = process.versions.node): boolean {
  return Number(version.split(".")[0]) >= 24;
}

/**
 * Native objects kept reachable until the process exits when {@link nativeObjectsMustStayReachable}: the statements
 * dropped from a cache and the connections closed (iterators are never made, see {@link withoutNativeIterator}).
 * Both are small once closed or finalized (SQLite's memory goes with `close()`; a dropped statement keeps its
 * compiled program), and distinct SQL strings are bounded.
 */
const keptAlive: unknown[] = [];

/**
 * `statement` with `iterate` reading through `all`: better-sqlite3's iterator is one more native object, made per
 * streamed query and dropped after it. Crow's store never streams; Kysely's `stream()` still works, its rows read at
 * once.
 */
function withoutNativeIterator(statement: SqliteStatement): SqliteStatement {
  return {
    get reader() {
      return statement.reader;
    },
    all: (parameters) => statement.all(parameters),
    run: (parameters) => statement.run(parameters),
    iterate: (parameters) => statement.all(parameters)[Symbol.iterator](),
  };
}

/**
 * The database as Kysely sees it, with prepared statements reused by SQL text: Kysely prepares every query anew,
 * which was the largest part of a message write (each turn writes several). better-sqlite3 statements are
 * synchronous and reset after each run (or when a streamed query is abandoned), and Kysely runs one query at a time
 * on its single SQLite connection, so reusing one is safe. The least recently used is dropped past the limit (kept
 * reachable instead where collecting it would abort the process).
 */
function withStatementCache(database: BetterSqlite3Type.Database, keep: boolean): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => {
      database.close();
      if (keep) keptAlive.push(database, ...cache.values());
    },
    prepare(sql: string): SqliteStatement {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = keep ? withoutNativeIterator(database.prepare(sql)) : database.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) {
          const [oldest] = cache;
          if (oldest) {
            cache.delete(oldest[0]);
            if (keep) keptAlive.push(oldest[1]);
          }
        }
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/**
 * better-sqlite3's compiled addon, where its install builds it. Given to the driver, it is loaded directly instead of
 * being searched for by the `bindings` package (a dozen candidate paths tried, ~2–8 ms of a start); undefined (the
 * driver searches) when it is not there.
 */
function nativeBinding(): string | undefined {
  try {
    const addon = createRequire(import.meta.url).resolve("better-sqlite3/build/Release/better_sqlite3.node");
    return existsSync(addon) ? addon : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes sure the SQLite file exists and only its owner can read it: the transcripts hold tool output and whatever
 * secrets a model echoed. Directories created for it (the Crow home on a first `crow run`) are 0700, a new file 0600
 * (SQLite gives its -wal and -shm files the database's mode), and an existing file readable by others (made by a
 * Crow before this rule) is tightened to 0600 along with its -wal and -shm. A file that cannot be changed (someone
 * else's) is left as it is: opening it says what is wrong, if anything.
 */
function createPrivately(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  if (!existsSync(file)) closeSync(openSync(file, "a", 0o600));
  for (const each of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      if ((statSync(each).mode & 0o077) !== 0) chmodSync(each, 0o600);
    } catch {
      // Not there (no -wal or -shm), or not ours to change.
    }
  }
}

async function sqliteDb(file: string, busyTimeoutMs: number): Promise<Kysely<Database>> {
  if (file !== ":memory:") createPrivately(file);
  if (sqliteDriverName() === "node:sqlite") {
    return new Kysely<Database>({ dialect: new CrowSqliteDialect({ database: openNodeSqlite(file, busyTimeoutMs) }) });
  }
  // An optional dependency: where it failed to install, the error says what to do instead.
  const BetterSqlite3 = requireBetterSqlite3();
  const addon = nativeBinding();
  const database = new BetterSqlite3(file, { timeout: busyTimeoutMs, ...(addon ? { nativeBinding: addon } : {}) });
  // exec, not pragma(): pragma() prepares a statement and drops it (see nativeObjectsMustStayReachable).
  if (file !== ":memory:") database.exec("PRAGMA journal_mode = WAL");
  // NORMAL in WAL mode: a commit survives the process being killed (kill -9); only a power loss may lose the
  // last commits. FULL would fsync on every message.
  database.exec("PRAGMA synchronous = NORMAL");
  database.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  const cached = withStatementCache(database, nativeObjectsMustStayReachable());
  return new Kysely<Database>({ dialect: new CrowSqliteDialect({ database: cached }) });
}

/**
 * better-sqlite3, the driver where Node has no `node:sqlite` (Node 20). It is an optional dependency: an install
 * whose build of it failed still runs on Node 22 and 24; here, say what to do.
 */
function requireBetterSqlite3(): typeof BetterSqlite3Type {
  try {
    return createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3Type;
  } catch (error) {
    throw driverError(error);
  }
}

/**
 * Why better-sqlite3 did not load, in one line: not installed (its build at install failed, and npm dropped the
 * optional dependency: the message names what the build lacks here, driver-build.ts) or installed with an addon that
 * does not load. The raw error's require stack is left out.
 */
function driverError(error: unknown): StoreDriverError {
  const code = (error as { code?: unknown } | undefined)?.code;
  const raw = errorText(error).split("\n")[0] ?? "";
  const missing = code === "MODULE_NOT_FOUND" && /['"]better-sqlite3['"]/.test(raw);
  const node = `Node.js ${process.versions.node} has no built-in SQLite (node:sqlite, Node 22.13 and later)`;
  if (missing) {
    const { problem, fix } = missingDriverText(node, buildNeeds());
    return new StoreDriverError(problem, fix, { cause: error });
  }
  return new StoreDriverError(
    `${node}, and better-sqlite3, the SQLite driver Crow uses there, does not load (${raw.trim()}): its compiled addon is missing or was built for another Node.js`,
    "Use Node.js 22.13 or later (its built-in SQLite needs nothing compiled), or reinstall Crow with this Node.js (npm install -g --foreground-scripts shows the build's output)",
    { cause: error },
  );
}

async function postgresDb(url: string, poolSize: number): Promise<Kysely<Database>> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle client's error (server restart) must not crash the process; the next query reports it.
  pool.on("error", () => {});
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => {});
    // Not errorText: the AggregateError of a host whose every address refused has an empty message; its name is shown.
    const message = error instanceof Error ? error.message || error.name : String(error);
    throw new StoreError(`cannot connect to PostgreSQL at ${redactUri(url)}: ${message}`, { cause: error });
  }
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** Whether opening SQLite failed because of where the file is (permissions, read-only, not a directory). */
function unusableLocation(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return (
    typeof code === "string" &&
    ["EACCES", "EPERM", "EROFS", "ENOTDIR", "ENOENT", "SQLITE_CANTOPEN", "SQLITE_READONLY"].includes(code)
  );
}

/** Opens the store a target names and brings its schema up to date. */
export async function openTarget(target: DbTarget, options: OpenStoreOptions = {}): Promise<Store> {
  const location = target.kind === "sqlite" ? target.file : redactUri(target.url);
  let db: Kysely<Database>;
  try {
    db =
      target.kind === "sqlite"
        ? await sqliteDb(target.file, options.busyTimeoutMs ?? 5000)
        : await postgresDb(target.url, options.poolSize ?? 4);
  } catch (error) {
    if (error instanceof StoreError) throw error;
    const message = errorText(error);
    const text = `cannot open the SQLite database ${location}: ${message}`;
    if (unusableLocation(error)) {
      throw new StoreLocationError(
        text,
        "Set CROW_HOME to a directory Crow can write (config, .env and the store move there), or CROW_DB_URI to another database (e.g. sqlite:////tmp/crow.db).",
        { cause: error },
      );
    }
    throw new StoreError(text, { cause: error });
  }
  try {
    await migrate(db as Kysely<unknown>, location);
  } catch (error) {
    await db.destroy().catch(() => {});
    throw error;
  }
  return new KyselyStore(db, target.kind, location);
}

/**
 * Opens the store named by a `db_uri` (default: `CROW_DB_URI`, else SQLite at `~/.crow/crow.db`). Throws DbUriError
 * for an unusable URI and StoreError when the database cannot be opened or migrated.
 */
export function openStore(uri: string = defaultDbUri(), options: OpenStoreOptions = {}): Promise<Store> {
  return openTarget(parseDbUri(uri, options.baseDir ?? crowHome()), options);
}
