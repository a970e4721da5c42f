/**
 * The names of the custom methods built into every runtime (its built-in extensions register them). A module of its
 * own (`@crow/core/methods`) so the ACP agent can advertise them at `initialize` without loading the runtime.
 */

/** The custom method that compacts a session on request. */
export const COMPACT_METHOD = "_crow/compact";

/** The custom method that runs a subagent. */
export const SUBAGENT_METHOD = "_crow/subagent";

/** The custom method of `/rewind`. */
export const REWIND_METHOD = "_crow/rewind";

/** Every built-in custom method, in the order the runtime registers them. */
export const BUILTIN_METHODS: readonly string[] = [COMPACT_METHOD, SUBAGENT_METHOD, REWIND_METHOD];
