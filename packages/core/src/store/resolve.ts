/**
 * Session ids as people type them: a whole id, or any unique beginning of one (`crow run -s drunk-tomato`). Used
 * wherever a command takes a session id.
 */
import { type Store, StoreError } from "./types.js";

/** Candidates shown when a prefix is ambiguous. */
const SHOWN = 8;

/** A prefix that starts several sessions' ids; the message lists them (most recent first). */
export class AmbiguousSessionIdError extends StoreError {
  override name = "AmbiguousSessionIdError";
  constructor(
    readonly prefix: string,
    readonly candidates: string[],
  ) {
    super(
      `"${prefix}" starts several session ids: ${candidates.slice(0, SHOWN).join(", ")}${candidates.length > SHOWN ? ", …" : ""} (give more of the id)`,
    );
  }
}

/**
 * The id of the live session `id` names: itself when it is one, else the one live session whose id starts with it.
 * Undefined when none does; throws {@link AmbiguousSessionIdError} when several do.
 */
export async function resolveSessionId(store: Store, id: string): Promise<string | undefined> {
  const exact = await store.getSession(id);
  if (exact && exact.archivedFrom === null) return id;
  if (id.trim() === "") return undefined;
  const { sessions } = await store.listSessions({ idPrefix: id, limit: SHOWN + 1 });
  if (sessions.length === 1) return sessions[0]?.id;
  if (sessions.length > 1)
    throw new AmbiguousSessionIdError(
      id,
      sessions.map((s) => s.id),
    );
  return undefined;
}
