/** The session store (SQLite or PostgreSQL through Kysely). `openStore(uri)` is the entry point. */
export type * from "./checkpoint-types.js";
export type {
  EvalArtifact,
  EvalRunRecord,
  EvalStepDetails,
  EvalStore,
  EvalTrialDetails,
  EvalTrialRecord,
} from "./eval-types.js";
export { sessionSlug } from "./ids.js";
export type * from "./lease-types.js";
export { MIGRATIONS } from "./migrations.js";
export { type SqliteDriverName, sqliteDriverName } from "./node-sqlite.js";
export { type OpenStoreOptions, openStore, openTarget } from "./open.js";
export { AmbiguousSessionIdError, resolveSessionId } from "./resolve.js";
export * from "./types.js";
export { crowHome, type DbTarget, defaultDbUri, parseDbUri, redactUri } from "./uri.js";
