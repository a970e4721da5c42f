/**
 * Questions to the user (the `ask_user` tool's, MCP servers' elicitations) as ACP `elicitation/create` requests:
 * scoped to the session and to the tool call waiting for the answer, sent through the session's outbox (after the
 * `tool_call` they are about), withdrawn with `$/cancel_request` when the question is (the turn was cancelled).
 * A URL question done on the server's side becomes `elicitation/complete`.
 */
import type { ClientCapabilities, CreateElicitationResponse } from "@agentclientprotocol/sdk";
import type { UserAnswer, UserAnswerValue, UserAsker, UserQuestion } from "@crow/core";
import { log } from "../base/log.js";
import type { ElicitationParams, Outbox } from "./outbox.js";

export interface ElicitationAskerOptions {
  /** The session's outbox (known once the session is open; questions only come during turns). */
  outbox: () => Outbox | undefined;
  /** The ACP tool call id the session announced for a model call id (undefined: not announced). */
  toolCallId: (callId: string) => string | undefined;
}

/** The question kinds the client said it can show (`clientCapabilities.elicitation`). */
export function elicitationModes(capabilities: ClientCapabilities | undefined): Array<UserQuestion["mode"]> {
  const elicitation = capabilities?.elicitation;
  if (!elicitation) return [];
  const modes: Array<UserQuestion["mode"]> = [];
  if (elicitation.form) modes.push("form");
  if (elicitation.url) modes.push("url");
  return modes;
}

/** The client's answer as the runtime's; an action ACP may add later counts as a decline that says so. */
export function userAnswer(response: CreateElicitationResponse): UserAnswer {
  if (response.action === "decline") return { action: "decline" };
  if (response.action === "cancel") return { action: "cancel" };
  if (response.action !== "accept") return { action: "decline", reason: `the client answered "${response.action}"` };
  const content = (response as { content?: Record<string, UserAnswerValue> | null }).content;
  return content ? { action: "accept", content } : { action: "accept" };
}

/** `elicitation/create` params for a question (the outbox adds the session id). */
function elicitationParams(question: UserQuestion, toolCallId: string | undefined): ElicitationParams {
  const scope = toolCallId ? { toolCallId } : {};
  if (question.mode === "url") {
    return { mode: "url", message: question.message, ...scope, elicitationId: question.id, url: question.url };
  }
  return { mode: "form", message: question.message, ...scope, requestedSchema: question.form };
}

/**
 * The session's asker when the client can show questions (undefined otherwise: the runtime then declines them with
 * the reason, and `ask_user` is not offered).
 */
export function elicitationAsker(
  capabilities: ClientCapabilities | undefined,
  options: ElicitationAskerOptions,
): UserAsker | undefined {
  const modes = elicitationModes(capabilities);
  if (modes.length === 0) return undefined;
  return {
    modes,
    async ask(question) {
      const outbox = options.outbox();
      if (!outbox) return { action: "decline", reason: "the session is not open yet" };
      const toolCallId = question.callId === undefined ? undefined : options.toolCallId(question.callId);
      try {
        const response = await outbox.elicit(elicitationParams(question, toolCallId), {
          cancellationSignal: question.signal,
          stopWaitingOnCancel: true,
        });
        return userAnswer(response);
      } catch (error) {
        if (question.signal.aborted) return { action: "cancel", reason: "the question was withdrawn" };
        log.warn("elicitation/create failed", error);
        throw error;
      }
    },
    completed(id) {
      if (modes.includes("url")) options.outbox()?.completeElicitation(id);
    },
  };
}
