/**
 * The rule every client message of `crow acp --listen` passes before its agent sees it (live-sessions.ts applies
 * it): a session belongs to the connection that opened it. A message naming a session — its `sessionId`, or any
 * `…SessionId` of its params (`_crow/subagent`'s `parentSessionId`) — in any method, standard, `_crow/*`, an
 * extension's or one added later, goes on only when that session is open on the caller's connection. The methods
 * that open or end a stored session by its `sessionId` (load, resume, fork, close, delete) may also name one no
 * connection holds: a stored session is anyone's. Without this, a second holder of the token ran a subagent on
 * the first connection's tools (its editor's files and terminal), and rewound or compacted its session.
 *
 * The rule reads the message as the SDK will (the same parsed object): anything with a `method` is checked,
 * requests and notifications alike.
 */

/** The methods that may name, by `sessionId`, a stored session no connection holds (they open or end it). */
export const TAKING = new Set(["session/load", "session/resume", "session/fork", "session/close", "session/delete"]);

/** A session a message names: the params key and the id. */
export interface NamedSession {
  key: string;
  id: string;
}

/** Whether a params key names a session: `sessionId`, or any `…SessionId` (`parentSessionId`). */
function namesSession(key: string): boolean {
  return key === "sessionId" || key.endsWith("SessionId");
}

/**
 * The sessions `params` names (its top level, where every method reads them), or the first key naming one with a
 * value that is not a string (refused: a method could otherwise coerce it into an id the check never saw).
 */
export function namedSessions(params: unknown): { named: NamedSession[]; invalid?: string } {
  if (typeof params !== "object" || params === null || Array.isArray(params)) return { named: [] };
  const named: NamedSession[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (!namesSession(key) || value === undefined) continue;
    if (typeof value !== "string") return { named, invalid: key };
    named.push({ key, id: value });
  }
  return { named };
}

/** Printable, short: what a client said its name was, fit to show another client. */
function shown(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const text = value.replace(/[\u0000-\u001f\u007f-\u009f]/g, "").trim();
  return text === "" ? undefined : text.slice(0, 40);
}

/**
 * How a connection is named to other clients: its number in this process, the client it said it was (`initialize`'s
 * `clientInfo`) and when it connected. Never the transport's `Acp-Connection-Id` (over HTTP, whoever knows it can
 * post on that connection), the token or the peer's address.
 */
export function connectionLabel(number: number, since: Date, clientInfo: unknown): string {
  const info = (typeof clientInfo === "object" && clientInfo !== null ? clientInfo : {}) as Record<string, unknown>;
  const client = [shown(info.name), shown(info.version)].filter((s) => s !== undefined).join(" ");
  const at = `connected at ${since.toISOString().slice(11, 19)} UTC`;
  return `connection #${number} (${client ? `${client}, ` : ""}${at})`;
}

/** A refusal: the JSON-RPC error a request gets (a notification is dropped, and the refusal logged). */
export interface ClaimRefusal {
  code: number;
  message: string;
}

/** Why a session named by `method` is not the caller's to use: held by `holder`, or open on no connection. */
export function claimRefusal(
  method: string,
  { key, id }: NamedSession,
  holder: string | undefined,
): ClaimRefusal | undefined {
  const taking = key === "sessionId" && TAKING.has(method);
  if (holder !== undefined) {
    return {
      code: -32600,
      message: `${method}: session ${id} is open on ${holder}; only that connection may use it (it can be opened here once that connection closes it with session/close or disconnects)`,
    };
  }
  if (taking) return undefined;
  return {
    code: -32002,
    message: `${method}: session ${id} is not open on this connection: open it here first (session/load or session/resume)`,
  };
}
