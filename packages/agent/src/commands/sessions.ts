/**
 * `crow sessions list|show|export|delete|fork`: the configured session store (whatever `db_uri` says: SQLite or
 * PostgreSQL) from the command line.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import type { SessionRecord, SessionStats, Store } from "@crow/core";
import { errorText } from "@crow/core";
import { stripControls } from "@crow/mcp/control-text";
import { parseArgs } from "@crow/mcp/parse-args";
import { configuredToken, TokenError } from "../acp-net/token.js";
import { UsageError } from "../base/exit-codes.js";
import { shellWord } from "../base/shell-word.js";
import { ConfigError, loadConfig } from "../config/index.js";
import { markdownTranscript } from "./transcript.js";

export const SESSIONS_HELP = `Usage: crow sessions <command> [options]

Commands:
  list [--cwd DIR] [--limit N] [--all] [--json]   sessions, most recently updated first (default: 20)
  show ID [--json]                                the session's transcript (long tool results shortened)
  export ID [--format md|json] [-o FILE]          the full session as Markdown (default) or JSON
  delete ID... [--yes]                            delete sessions with their history and archives (asks in a
                                                  terminal; --yes is required otherwise)
  fork ID [--cwd DIR] [--json]                    a new session starting as a copy of ID (prints its id)
  serve [--port N] [--host H] [--open]            a read-only web viewer of the sessions (default 127.0.0.1);
        [--token-file FILE] [--allowed-host NAME...]  it needs a token, on loopback too: the first line of FILE,
                                                  else CROW_VIEWER_TOKEN, else generated; the URL printed
                                                  carries it (--token T works but every local user sees it)

The store is the one in config.yaml's db_uri (or CROW_DB_URI), by default SQLite at ~/.crow/crow.db.`;

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Asks a yes/no question; "no-terminal" when nobody can answer (default: stdin when it is a terminal). */
  confirm?: (question: string) => Promise<boolean | "no-terminal">;
}

/** The question on stderr, the answer from a terminal stdin (y or yes; anything else is no). */
async function confirmAtTerminal(question: string): Promise<boolean | "no-terminal"> {
  if (!process.stdin.isTTY) return "no-terminal";
  const { createInterface } = await import("node:readline/promises");
  const lines = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await lines.question(question)).trim());
  } finally {
    lines.close();
  }
}

/** Runs `crow sessions …`; resolves to the exit code (0 ok, 1 failure, 2 bad usage, an unknown id, a bad setup). */
export async function runSessions(argv: string[], io: Partial<Io> = {}): Promise<number> {
  const out = io.out ?? ((text: string) => process.stdout.write(text));
  const err = io.err ?? ((text: string) => process.stderr.write(text));
  const env = io.env ?? process.env;
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv, env);
  } catch (error) {
    err(`crow sessions: ${errorText(error)}\n\n${SESSIONS_HELP}\n`);
    return 2;
  }
  if (parsed.help) {
    out(`${SESSIONS_HELP}\n`);
    return 0;
  }
  let store: Store;
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(env);
    const { openStore } = await import("@crow/core");
    store = await openStore(config.dbUri, { baseDir: config.home });
  } catch (error) {
    // A configuration the user must fix is a usage error (2), as for `crow run` and `crow acp`.
    err(`crow sessions: ${errorText(error)}\n`);
    const { StoreDriverError, StoreLocationError } = await import("@crow/core");
    const usage =
      error instanceof ConfigError || error instanceof StoreLocationError || error instanceof StoreDriverError;
    return usage ? 2 : 1;
  }
  try {
    if (parsed.command === "serve") {
      // Serves until SIGINT/SIGTERM; the viewer module (and markdown-it) loads only for this command.
      return await (await import("../viewer/serve.js")).serve(store, config, parsed.serve, { out, err });
    }
    return await dispatch(parsed, store, { out, err, env, ...(io.confirm ? { confirm: io.confirm } : {}) });
  } catch (error) {
    err(`crow sessions: ${errorText(error)}\n`);
    return 1;
  } finally {
    await store.close();
  }
}

function parse(argv: string[], env: NodeJS.ProcessEnv) {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      cwd: { type: "string" },
      limit: { type: "string" },
      all: { type: "boolean" },
      json: { type: "boolean" },
      format: { type: "string" },
      output: { type: "string", short: "o" },
      yes: { type: "boolean", short: "y" },
      help: { type: "boolean", short: "h" },
      port: { type: "string" },
      host: { type: "string" },
      open: { type: "boolean" },
      token: { type: "string" },
      "token-file": { type: "string" },
      "allowed-host": { type: "string", multiple: true },
      // The other spelling (crow acp --listen's first one), accepted alike.
      "allow-host": { type: "string", multiple: true },
    },
    strict: true,
    allowPositionals: true,
  });
  const [command, ...ids] = positionals;
  if (values.help) return { help: true as const };
  if (!command) throw new UsageError("missing command (list, show, export, delete, fork or serve)");
  if (!["list", "show", "export", "delete", "fork", "serve"].includes(command)) {
    throw new UsageError(`unknown command "${command}"`);
  }
  if (command === "fork" && ids.length !== 1) throw new UsageError("fork takes exactly one session id");
  if (command === "fork" && values.cwd !== undefined && !path.isAbsolute(values.cwd)) {
    throw new UsageError(`--cwd must be an absolute path, got "${values.cwd}"`);
  }
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    throw new UsageError(`--limit must be a positive whole number, got "${values.limit}"`);
  }
  const format = values.format ?? "md";
  if (format !== "md" && format !== "json") throw new UsageError(`--format must be md or json, got "${format}"`);
  if (command === "list" && ids.length > 0) throw new UsageError(`list takes no session id (got ${ids.join(" ")})`);
  if ((command === "show" || command === "export") && ids.length !== 1) {
    throw new UsageError(`${command} takes exactly one session id`);
  }
  if (command === "delete" && ids.length === 0) throw new UsageError("delete needs at least one session id");
  return { help: false as const, command, ids, values, limit, format, serve: serveOptions(command, ids, values, env) };
}

/** `serve`'s options, checked (port range, no ids, one token source). */
function serveOptions(
  command: string,
  ids: string[],
  values: {
    port?: string;
    host?: string;
    open?: boolean;
    token?: string;
    "token-file"?: string;
    "allowed-host"?: string[];
    "allow-host"?: string[];
  },
  env: NodeJS.ProcessEnv,
) {
  if (command !== "serve") return {};
  if (ids.length > 0) throw new UsageError(`serve takes no session id (got ${ids.join(" ")})`);
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port must be a port number (0-65535), got "${values.port}"`);
  }
  if (values.token !== undefined && values["token-file"] !== undefined) {
    throw new UsageError("--token and --token-file exclude each other");
  }
  if (values.token === "") throw new UsageError("--token must not be empty");
  let token = values.token;
  try {
    token ??= configuredToken(values["token-file"], env, "CROW_VIEWER_TOKEN");
  } catch (error) {
    if (error instanceof TokenError) throw new UsageError(error.message);
    throw error;
  }
  return {
    port,
    ...(values.host ? { host: values.host } : {}),
    ...(values.open ? { open: true } : {}),
    ...(token ? { token } : {}),
    ...(values.token !== undefined ? { tokenOnCommandLine: true } : {}),
    ...(values["allowed-host"] || values["allow-host"]
      ? { allowedHosts: [...(values["allowed-host"] ?? []), ...(values["allow-host"] ?? [])] }
      : {}),
  };
}

type Parsed = Exclude<ReturnType<typeof parse>, { help: true }>;

/**
 * The whole ids the arguments name (each a whole id or a unique beginning of one), or undefined after saying which
 * one names no session or several (a usage error, 2, as for `crow run -s`).
 */
async function resolveIds(store: Store, typed: readonly string[], io: Io): Promise<string[] | undefined> {
  const { AmbiguousSessionIdError, resolveSessionId } = await import("@crow/core/internal");
  const ids: string[] = [];
  for (const id of typed) {
    try {
      const full = await resolveSessionId(store, id);
      if (full === undefined) {
        io.err(`crow sessions: no session ${id} in ${store.location}. 'crow sessions list' shows the ids.\n`);
        return undefined;
      }
      ids.push(full);
    } catch (error) {
      if (!(error instanceof AmbiguousSessionIdError)) throw error;
      io.err(`crow sessions: ${error.message}\n`);
      return undefined;
    }
  }
  return ids;
}

async function dispatch(parsed: Parsed, store: Store, io: Io): Promise<number> {
  const { command, values } = parsed;
  if (command === "list")
    return list(store, io, { cwd: values.cwd, limit: parsed.limit, all: values.all, json: values.json });
  const ids = await resolveIds(store, parsed.ids, io);
  if (!ids) return 2;
  if (command === "delete") {
    if (!values.yes) {
      const asked = await (io.confirm ?? confirmAtTerminal)(
        `Delete ${ids.length === 1 ? `session ${ids[0]}` : `${ids.length} sessions (${ids.join(", ")})`} with its history? [y/N] `,
      );
      if (asked === "no-terminal") {
        io.err("crow sessions: delete asks for confirmation in a terminal; without one, pass --yes\n");
        return 2;
      }
      if (!asked) {
        io.err("nothing deleted\n");
        return 1;
      }
    }
    let missing = 0;
    for (const id of ids) {
      if (await store.deleteSession(id)) io.out(`deleted ${id}\n`);
      else {
        io.err(`no session ${id} in ${store.location}\n`);
        missing++;
      }
    }
    return missing > 0 ? 1 : 0;
  }
  if (command === "fork") return fork(store, io, ids[0] as string, { cwd: values.cwd, json: values.json });
  const id = ids[0] as string;
  const session = await store.getSession(id);
  if (!session || session.archivedFrom) {
    io.err(`crow sessions: no session ${id} in ${store.location}. 'crow sessions list' shows the ids.\n`);
    return 2;
  }
  const messages = await store.loadMessages(id);
  const asJson = command === "show" ? values.json === true : parsed.format === "json";
  const text = asJson
    ? `${JSON.stringify({ session, archives: await store.listArchives(id), messages }, null, 2)}\n`
    : markdownTranscript(session, messages, command === "show" ? { maxToolResultChars: 2000 } : {});
  if (command === "export" && values.output) {
    writeFileSync(values.output, text);
    io.err(`wrote ${values.output}\n`);
  } else if (command === "show" && !asJson) {
    // Read on a terminal: the model's control sequences (clipboard, title, screen clearing) stay out of it.
    io.out(stripControls(text));
  } else io.out(text);
  return 0;
}

async function list(
  store: Store,
  io: Io,
  options: { cwd: string | undefined; limit: number | undefined; all: boolean | undefined; json: boolean | undefined },
): Promise<number> {
  const wanted = options.all ? Number.POSITIVE_INFINITY : (options.limit ?? 20);
  const found: SessionRecord[] = [];
  let cursor: string | undefined;
  let more = false;
  do {
    const page = await store.listSessions({
      // What a user resumes: no never-prompted sessions, no subagent children (their parent shows them).
      prompted: true,
      topLevel: true,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(cursor ? { cursor } : {}),
      limit: Math.min(500, Math.max(1, wanted - found.length)),
    });
    found.push(...page.sessions);
    cursor = page.nextCursor;
    more = cursor !== undefined;
  } while (cursor && found.length < wanted);
  const stats = await store.sessionStats(found.map((s) => s.id));
  if (options.json) {
    const withStats = found.map((s) => {
      const {
        prompts = 0,
        requests = 0,
        promptTokens = 0,
        completionTokens = 0,
        cachedTokens = 0,
      } = stats.get(s.id) ?? {};
      return { ...s, usage: { prompts, requests, promptTokens, completionTokens, cachedTokens } };
    });
    io.out(`${JSON.stringify(withStats, null, 2)}\n`);
    return 0;
  }
  if (found.length === 0) {
    io.out(`no sessions${options.cwd ? ` for ${options.cwd}` : ""} in ${store.location}\n`);
    return 0;
  }
  // Titles are the model's words: drawn without control sequences.
  const rows = found.map((s) => [
    s.id,
    s.updatedAt.replace("T", " ").slice(0, 16),
    stripControls(s.title ?? "(untitled)"),
    tokensColumn(stats.get(s.id)),
    stripControls(s.cwd),
  ]);
  const widths = [0, 1, 3].map((i) => Math.max(...rows.map((r) => (r[i] as string).length)));
  for (const [id, updated, title, tokens, cwd] of rows) {
    io.out(
      `${(id as string).padEnd(widths[0] ?? 0)}  ${(updated as string).padEnd(widths[1] ?? 0)}  ${truncate(title as string, 60)}  ${(tokens as string).padEnd(widths[2] ?? 0)}  ${cwd}\n`,
    );
  }
  if (more) io.out(`… more sessions: use --limit N or --all\n`);
  return 0;
}

/**
 * A session's tokens for the listing: per task (prompt and completion tokens over the user's prompts) and the share
 * of prompt tokens the provider read from its cache, e.g. `12.3k tokens/task, 64% cached`; empty without usage.
 */
export function tokensColumn(stats: SessionStats | undefined): string {
  if (!stats || stats.requests === 0) return "";
  const perTask = (stats.promptTokens + stats.completionTokens) / Math.max(1, stats.prompts);
  const cached = stats.promptTokens > 0 ? Math.round((100 * stats.cachedTokens) / stats.promptTokens) : 0;
  return `${compactCount(perTask)} tokens/task, ${cached}% cached`;
}

/** 950 → "950", 2 500 → "2.5k", 12 345 → "12.3k", 1 234 567 → "1.23M". */
function compactCount(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 999_500) return `${Number((n / 1000).toPrecision(3))}k`;
  return `${Number((n / 1_000_000).toPrecision(3))}M`;
}

/** `crow sessions fork ID`: the store's fork (history and settings copied, linked to ID); says how to go on. */
async function fork(
  store: Store,
  io: Io,
  id: string,
  options: { cwd: string | undefined; json: boolean | undefined },
): Promise<number> {
  const { SessionNotFoundError } = await import("@crow/core");
  let created: SessionRecord;
  try {
    created = await store.forkSession(id, options.cwd ? { cwd: options.cwd } : {});
  } catch (error) {
    if (!(error instanceof SessionNotFoundError)) throw error;
    io.err(`crow sessions: no session ${id} in ${store.location}. 'crow sessions list' shows the ids.\n`);
    return 2;
  }
  if (options.json) {
    io.out(`${JSON.stringify(created, null, 2)}\n`);
    return 0;
  }
  const messages = await store.countMessages(created.id);
  io.out(`${created.id}\n`);
  io.err(
    `Forked ${id} as ${created.id} (${messages} message${messages === 1 ? "" : "s"}, working directory ${created.cwd}).\n` +
      `Continue it with: crow run -s ${created.id} -c ${shellWord(created.cwd)} "<prompt>"\n` +
      "(or -i in place of the prompt for a REPL, or load it from an editor's session list).\n",
  );
  return 0;
}

function truncate(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > max ? `${line.slice(0, max - 1)}…` : line.padEnd(max);
}
