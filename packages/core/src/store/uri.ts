/**
 * `db_uri` → which database. Accepted forms (see docs/configuration.md, "Sessions and the store"):
 * - `postgresql://…` / `postgres://…` (also SQLAlchemy's `postgresql+psycopg2://…`): PostgreSQL through `pg`.
 * - `sqlite:////abs/path.db` (SQLAlchemy's absolute form) and `sqlite:///abs/path.db` when `/abs` exists: that file.
 * - `sqlite:///rel/path.db`, `sqlite:rel/path.db`: relative to the Crow home directory (not the process cwd, which
 *   is wherever the editor started the agent).
 * - `sqlite://`, `sqlite::memory:`, `:memory:`: an in-memory database (gone when the process exits).
 * - a bare path: `/abs/crow.db`, `~/crow.db`, `rel/crow.db` (relative to the Crow home directory).
 * Anything else is a {@link DbUriError} that lists these forms.
 */
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { crowHome, expandTilde } from "../home.js";
import { DbUriError } from "./types.js";

export { crowHome };

export type DbTarget =
  | { kind: "sqlite" /** Absolute file path, or ":memory:". */; file: string }
  | { kind: "postgres"; url: string };

const FORMS =
  "expected postgresql://user:password@host:port/database, sqlite:////absolute/path.db, sqlite:///relative/path.db " +
  "(relative to the Crow home directory), a file path, or :memory:";

/**
 * The store used when nothing is configured: `CROW_DB_URI`, else SQLite at `<crow home>/crow.db`. The SDK's default
 * for `openStore()` without a URI; the agent never takes it: its configuration loader resolves `CROW_DB_URI`,
 * `db_uri` and `DATABASE_PATH` (with `.env`) and passes the result.
 */
export function defaultDbUri(env: NodeJS.ProcessEnv = process.env): string {
  return env.CROW_DB_URI?.trim() || path.join(crowHome(env), "crow.db");
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * `sqlite:///a/b.db` is relative in SQLAlchemy, but people write it meaning `/a/b.db`: it is taken as absolute when
 * `/a` is an existing directory and `<home>/a` is not.
 */
function sqlitePath(rest: string, baseDir: string): string {
  if (rest.startsWith("/")) return path.resolve(rest);
  const first = rest.split("/")[0] ?? "";
  if (rest.includes("/") && first && isDirectory(`/${first}`) && !existsSync(path.join(baseDir, first))) {
    return path.resolve(`/${rest}`);
  }
  return path.resolve(baseDir, expandTilde(rest));
}

/**
 * Parses a `db_uri`. `baseDir` anchors relative SQLite paths (default: the Crow home directory).
 * Throws {@link DbUriError} with the accepted forms.
 */
export function parseDbUri(uri: string, baseDir: string = crowHome()): DbTarget {
  const raw = uri.trim();
  if (!raw) throw new DbUriError(`db_uri is empty: ${FORMS}.`);
  if (raw === ":memory:" || raw === "sqlite://" || raw === "sqlite::memory:" || raw === "sqlite:///:memory:") {
    return { kind: "sqlite", file: ":memory:" };
  }
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(raw)?.[1]?.toLowerCase();
  // A Windows drive letter is not a scheme, but Crow does not run there; one-letter schemes fall through as paths.
  if (!scheme || scheme.length === 1) return { kind: "sqlite", file: path.resolve(baseDir, expandTilde(raw)) };
  const dialect = scheme.split("+")[0];
  if (dialect === "postgresql" || dialect === "postgres") {
    const url = `postgresql:${raw.slice(scheme.length + 1)}`;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new DbUriError(`db_uri "${redactUri(raw)}" is not a valid PostgreSQL URL: ${FORMS}.`);
    }
    if (!parsed.hostname && !parsed.searchParams.get("host")) {
      throw new DbUriError(`db_uri "${redactUri(raw)}" names no host: ${FORMS}.`);
    }
    return { kind: "postgres", url };
  }
  if (dialect === "sqlite" || dialect === "file") {
    let rest = raw.slice(scheme.length + 1);
    if (rest.startsWith("///")) rest = rest.slice(3);
    else if (rest.startsWith("//")) {
      throw new DbUriError(`db_uri "${raw}" has a host part, which SQLite does not take: ${FORMS}.`);
    }
    rest = decodeURIComponent(rest.split("?")[0] ?? "");
    if (!rest) throw new DbUriError(`db_uri "${raw}" names no file: ${FORMS}.`);
    return { kind: "sqlite", file: sqlitePath(rest, baseDir) };
  }
  throw new DbUriError(`db_uri "${redactUri(raw)}" uses an unsupported database "${scheme}": ${FORMS}.`);
}

/** The URI with any password replaced by `***` (for logs and errors). */
export function redactUri(uri: string): string {
  return uri.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/, "$1***@");
}
