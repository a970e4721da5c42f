/**
 * MCP servers' questions to the user (`elicitation/create`, form and URL modes) forwarded to the session's user: each
 * becomes a runtime question (the ACP layer shows it to the editor, `crow run` in the terminal) tied to the tool
 * call that is waiting on the server, and the answer goes back as the server's `ElicitResult`. Crow declares the
 * capability to every server and answers every question: when nobody can be asked (an editor without the
 * elicitation capability, `crow run --yes`), the answer is a decline whose `_meta` says why, and the call goes on.
 */
import type { UserAnswer, UserForm, UserQuestion } from "@crow/core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";

/** `_meta` key of a decline (or cancel) Crow answered on its own, with the reason for the server's logs. */
export const ELICITATION_REASON_META_KEY = "crow/reason";

/** The MCP client capabilities that let servers ask: both modes (Crow forwards or declines each question). */
export const ELICITATION_CAPABILITIES = { elicitation: { form: {}, url: {} } };

/** Where a session's MCP connections send their servers' questions (the runtime session's user). */
export interface SessionUser {
  askUser(question: UserQuestion): Promise<UserAnswer>;
  /** A URL question is done on the server's side (`notifications/elicitation/complete`). */
  completeUserQuestion?(id: string): void;
}

/** A tool call running on the connection: the model's call id and the call's own signal. */
export interface RunningCall {
  callId?: string;
  signal: AbortSignal;
}

/** The runtime's answer as the MCP result; a decline or cancel with a reason carries it in `_meta`. */
export function elicitResult(answer: UserAnswer): ElicitResult {
  if (answer.action === "accept") return { action: "accept", ...(answer.content ? { content: answer.content } : {}) };
  return {
    action: answer.action,
    ...(answer.reason ? { _meta: { [ELICITATION_REASON_META_KEY]: answer.reason } } : {}),
  };
}

/**
 * Forwards `client`'s elicitations to `user`. `running` lists the tool calls in flight on this connection: a question
 * that comes while exactly one runs belongs to it (MCP does not say which request a question is for; with several
 * in flight it is tied to the session only). The question is withdrawn when the server cancels it or when the call
 * it belongs to is cancelled. The client must have been made with {@link ELICITATION_CAPABILITIES}.
 */
export function forwardElicitations(
  client: Client,
  server: string,
  user: SessionUser,
  running: () => ReadonlySet<RunningCall>,
): void {
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    const calls = running();
    const call = calls.size === 1 ? [...calls][0] : undefined;
    const base = {
      // The person must see who is asking (a server may ask for anything).
      message: `${server}: ${request.params.message}`,
      signal: call ? AbortSignal.any([extra.signal, call.signal]) : extra.signal,
      ...(call?.callId !== undefined ? { callId: call.callId } : {}),
    };
    const params = request.params;
    const question: UserQuestion =
      params.mode === "url"
        ? { ...base, mode: "url", url: params.url, id: params.elicitationId }
        : // The SDK checked it is a flat form of primitive fields: the runtime's form, structurally.
          { ...base, mode: "form", form: params.requestedSchema as UserForm };
    return elicitResult(await user.askUser(question));
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
    user.completeUserQuestion?.(notification.params.elicitationId);
  });
}
