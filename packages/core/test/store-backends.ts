/**
 * The databases the store tests run on: SQLite in a temp directory and a real PostgreSQL server (a private instance
 * from the installed binaries; skipped with the reason where PostgreSQL is not installed — CI installs it).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { findPostgresBin, type PostgresServer, startPostgres } from "@crow/testkit";

export interface StoreBackend {
  name: string;
  skip?: string;
  /** A fresh database's URI (open it as often as a test needs: what the next Crow process would). */
  create(): Promise<string>;
  cleanup(): Promise<void>;
}

function sqliteBackend(prefix: string): StoreBackend {
  let dir = "";
  return {
    name: "SQLite",
    async create() {
      dir = await mkdtemp(path.join(tmpdir(), `${prefix}-`));
      return `sqlite:///${dir}/crow.db`;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

function postgresBackend(): StoreBackend {
  let server: PostgresServer | undefined;
  const backend: StoreBackend = {
    name: "PostgreSQL",
    async create() {
      server = await startPostgres();
      return server.createDatabase();
    },
    cleanup: async () => server?.stop(),
  };
  if (!findPostgresBin()) backend.skip = "PostgreSQL is not installed (apt-get install -y postgresql)";
  return backend;
}

/** SQLite (temp directories named `<prefix>-…`) and PostgreSQL. */
export function storeBackends(prefix: string): StoreBackend[] {
  return [sqliteBackend(prefix), postgresBackend()];
}
