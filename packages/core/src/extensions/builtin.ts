/**
 * The built-in features as extensions on the public API (DESIGN.md §5: that they fit proves the API is sufficient):
 * the doom-loop guard, the permission modes, the compaction watcher, persistence, the slash commands
 * `/compact /clear /stop /help` and the `_crow/compact` method. `createRuntime` loads them before user extensions, in
 * this order (the guard gates before permissions, so a looping model does not keep prompting the user).
 */

import type { CrowSession, SessionBusyError } from "../api/types.js";
import type { CompactionResult } from "../compaction/compact-history.js";
import { type SessionCompactions, watchPromptSize } from "../compaction/policy.js";
import { errorText } from "../error-text.js";
import { type ContentPart, contentText } from "../messages.js";
import { COMPACT_METHOD } from "../methods.js";
import type { SessionPatch, Store } from "../store/types.js";
import { type Extension, type ExtensionHookContext, MethodError } from "./api.js";
import { doomLoopGuard } from "./doom-loop.js";
import { compilePermissionRules, type PermissionRules } from "./permission-rules.js";
import { type PermissionGate, permissionGate } from "./permissions.js";

/** Per-session state of a built-in (sessions are the keys, so closed ones are collected). */
function perSession<T>(make: (session: CrowSession) => T): (session: CrowSession) => T {
  const states = new WeakMap<CrowSession, T>();
  return (session) => {
    let state = states.get(session);
    if (state === undefined) {
      state = make(session);
      states.set(session, state);
    }
    return state;
  };
}

/**
 * The permission gate of each session (`code`, `ask`, `read-only`, and config.yaml's rules), reading the session's
 * mode and cwd; `ask` goes through `session.askPermission`, "allow always" is remembered per session. `isReadOnly`
 * tells which tools of kind `other` only read. Shared by the permissions extension and the doom-loop guard (which
 * asks through it in `ask` mode).
 */
export function permissionGates(
  isReadOnly: (session: CrowSession, name: string) => boolean | undefined,
  rules: PermissionRules = {},
  isConfined?: (session: CrowSession, name: string) => boolean,
): (session: CrowSession) => PermissionGate {
  // Invalid rules fail here, when the runtime starts: a gate that threw later would be isolated like any failing
  // hook, and the call would run.
  compilePermissionRules(rules);
  return perSession(
    (session): PermissionGate =>
      permissionGate({
        mode: () => session.mode,
        askPermission: (request) => session.askPermission(request),
        isReadOnly: (name) => isReadOnly(session, name),
        ...(isConfined ? { isConfined: (name: string) => isConfined(session, name) } : {}),
        rules,
        cwd: () => session.cwd,
        extraRoots: () => session.additionalDirectories,
      }),
  );
}

/**
 * The same tool with identical arguments three times in a row is blocked (per session, reset at turn end); in `ask`
 * mode the user is asked instead, through the session's permission gate (so deny rules still refuse first).
 */
export function doomLoopExtension(gates: (session: CrowSession) => PermissionGate): Extension {
  return (api) => {
    const guard = perSession((session) =>
      doomLoopGuard({
        confirm: (event, ctx, why) =>
          session.mode === "ask"
            ? gates(session).confirm(event, ctx, why)
            : Promise.resolve({ block: true, reason: why.reason }),
      }),
    );
    api.on("before_tool_call", (event, ctx) => guard(ctx.session).gate(event, ctx));
    api.on("turn_end", (_event, ctx) => guard(ctx.session).reset());
  };
}

/** The permission modes and rules as a `before_tool_call` gate (see {@link permissionGates}). */
export function permissionsExtension(gates: (session: CrowSession) => PermissionGate): Extension {
  return (api) => {
    api.on("before_tool_call", (event, ctx) => gates(ctx.session).gate(event, ctx));
  };
}

/** The prompt-size watcher of compaction/policy.ts on the extension API: each session's compaction in `compactions`. */
export function compactionExtension(compactions: SessionCompactions): Extension {
  return (api) => watchPromptSize<ExtensionHookContext>(api.on.bind(api), (ctx) => compactions.of(ctx.session));
}

/** The longest title derived from a first message. */
const TITLE_LENGTH = 80;

/** A session title from the first user message: its first non-empty line, whitespace collapsed, shortened. */
export function titleFrom(content: string | ContentPart[]): string | undefined {
  const text = contentText(content);
  const line = text
    .split("\n")
    .map((l) => l.replace(/\s+/g, " ").trim())
    .find((l) => l.length > 0);
  if (!line) return undefined;
  return line.length > TITLE_LENGTH ? `${line.slice(0, TITLE_LENGTH - 1).trimEnd()}…` : line;
}

/**
 * Persistence: every message is stored as soon as it is part of the history (the `message` hook: the user message at
 * turn start, each message the loop appends — including a cancelled turn's partial text and the synthetic results of
 * unanswered calls), so a `kill -9` loses at most the message being streamed. The first user message gives the
 * title; mode and model changes are stored too. A failed write is logged and reported once; the session goes on in
 * memory. `setTitle` is the runtime's (it tells the session's listeners).
 */
export function persistenceExtension(
  store: Store,
  setTitle: (session: CrowSession, title: string, updatedAt: string) => void,
): Extension {
  return (api) => {
    const reported = new WeakSet<CrowSession>();
    const failed = (session: CrowSession, what: string, error: unknown) => {
      const message = errorText(error);
      api.log.error(`session ${session.id}: ${what} was not stored: ${message}`);
      if (reported.has(session)) return;
      reported.add(session);
      session.notify(`The session could not be saved (${message}); it continues in memory only.`, "warning");
    };
    api.on("message", async ({ message, usage, outcome }, { session }) => {
      try {
        await store.appendMessages(session.id, [
          { message, ...(usage ? { usage } : {}), ...(outcome ? { outcome } : {}) },
        ]);
      } catch (error) {
        return failed(session, `a ${message.role} message`, error);
      }
      if (message.role !== "user" || session.title !== null) return;
      const title = titleFrom(message.content);
      if (!title) return;
      try {
        const record = await store.updateSession(session.id, { title });
        setTitle(session, title, record.updatedAt);
      } catch (error) {
        failed(session, "the title", error);
      }
    });
    api.onSession((session) =>
      session.subscribe((event) => {
        let patch: SessionPatch;
        if (event.type === "mode") patch = { mode: event.mode };
        else if (event.type === "model") patch = { model: event.model };
        // The session's request settings: today only the reasoning effort (null: none chosen).
        else if (event.type === "reasoning_effort")
          patch = { requestParams: event.effort === null ? null : { reasoning_effort: event.effort } };
        else return;
        // Returned: the session's writes include it (a fork right after a mode change copies that mode).
        return store.updateSession(session.id, patch).then(
          () => undefined,
          (error: unknown) => failed(session, "a session change", error),
        );
      }),
    );
  };
}

/** The answer text of a compaction (used by `/compact`). */
export function compactedText(before: number, after: number, archiveId: string | undefined): string {
  const archived = archiveId ? ` The full history is archived as ${archiveId}.` : "";
  return `Compacted the conversation: ${before} messages → ${after} (first message, summary, latest request).${archived}`;
}

export { COMPACT_METHOD };

/** The answer of `_crow/compact`. */
export interface CompactResponse {
  compacted: boolean;
  /** What happened, for people. */
  message: string;
  /** The stored summary (when compacted). */
  summary?: string;
  /** The archive holding the previous history. */
  archiveId?: string;
  messagesBefore?: number;
  messagesAfter?: number;
}

/** A `_crow/compact` whose request was cancelled (JSON-RPC -32800, as ACP answers a cancelled request). */
function cancelled(): MethodError {
  return new MethodError(-32800, `${COMPACT_METHOD} was cancelled; the history is unchanged`);
}

function compactResponse(result: CompactionResult): CompactResponse {
  if (!result.compacted) return { compacted: false, message: result.message };
  return {
    compacted: true,
    message: compactedText(result.messagesBefore, result.messagesAfter, result.archiveId),
    summary: result.summary,
    ...(result.archiveId ? { archiveId: result.archiveId } : {}),
    messagesBefore: result.messagesBefore,
    messagesAfter: result.messagesAfter,
  };
}

/**
 * The built-in slash commands and `_crow/compact`. `/stop` runs on its own, outside the turn it stops (upstream's
 * ran inside the prompt task it meant to cancel); `/compact` and `/clear` refuse while a turn runs.
 */
export function commandsExtension(isBusy: (error: unknown) => error is SessionBusyError): Extension {
  return (api) => {
    api.registerCommand("compact", {
      description: "Summarize the conversation so far to free context (the full history is archived)",
      run: async (_args, { session }) => {
        const result = await session.compact();
        return result.compacted
          ? compactedText(result.messagesBefore, result.messagesAfter, result.archiveId)
          : result.message;
      },
    });
    api.registerCommand("clear", {
      description: "Start a fresh context in this session (the history so far is archived)",
      run: async (_args, { session }) => {
        const archiveId = await session.clear();
        return archiveId
          ? `Cleared the context. The previous conversation is archived as ${archiveId}.`
          : "Cleared the context.";
      },
    });
    api.registerCommand("stop", {
      description: "Stop the running prompt turn",
      run: (_args, { session }) => (session.cancel() ? "Stopped the running turn." : "Nothing is running."),
    });
    api.registerCommand("help", {
      description: "Show available slash commands",
      // A Markdown list (editors render replies as Markdown; lines without one ran into a single paragraph).
      run: (_args, { commands }) =>
        `Available commands:\n\n${commands.map((c) => `- /${c.name} - ${c.description}`).join("\n")}`,
    });
    api.registerMethod(COMPACT_METHOD, async (params, { crow: runtime, signal }) => {
      const sessionId = (params as { sessionId?: unknown } | null)?.sessionId;
      if (typeof sessionId !== "string" || sessionId === "") {
        throw MethodError.invalidParams(`${COMPACT_METHOD} expects {"sessionId": "<id>"}`);
      }
      const session = runtime.session(sessionId);
      if (!session) throw MethodError.sessionNotFound(sessionId);
      // The request cancelled (ACP `$/cancel_request`) stops the compaction it started, as `/stop` would.
      const stop = () => session.cancel();
      signal.addEventListener("abort", stop, { once: true });
      try {
        const result = await session.compact();
        if (!result.compacted && signal.aborted) throw cancelled();
        return compactResponse(result);
      } catch (error) {
        if (error instanceof MethodError) throw error;
        if (isBusy(error)) throw MethodError.invalidRequest(error.message);
        if (signal.aborted) throw cancelled();
        throw new MethodError(-32603, errorText(error));
      } finally {
        signal.removeEventListener("abort", stop);
      }
    });
  };
}
