/**
 * `ask` mode's question to the user: the permission extension's `askPermission` as an ACP
 * `session/request_permission` request (allow once / allow always / reject).
 */
import { type AgentContext, methods, type PermissionOption, type ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { PermissionAnswer, PermissionRequest } from "@crow/core";
import { log } from "../log.js";
import { locationsFor, toolCallTitle } from "../tools/data.js";

const OPTIONS: Array<PermissionOption & { answer: PermissionAnswer }> = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once", answer: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always", answer: "allow_always" },
  { optionId: "reject", name: "Reject", kind: "reject_once", answer: "reject" },
];

/** Maps the client's answer to the permission extension's; unknown option ids count as a rejection. */
export function permissionAnswer(
  outcome: { outcome: "cancelled" } | { outcome: "selected"; optionId: string },
): PermissionAnswer {
  if (outcome.outcome === "cancelled") return "cancelled";
  return OPTIONS.find((o) => o.optionId === outcome.optionId)?.answer ?? "reject";
}

export interface PermissionAskerOptions {
  client: AgentContext;
  /** The session's id (known once the session is open; questions only come during turns). */
  sessionId: () => string;
  /** The ACP tool call id already announced for this model call id. */
  toolCallId: (callId: string) => string;
  /** Called when the user dismissed the question (outcome `cancelled`): the turn ends as cancelled. */
  onCancelled: () => void;
  /**
   * Runs before the question is sent: the loop's events are pushed ahead of their consumer, so without this the
   * client could get the question before the `tool_call` (and text) it is about.
   */
  beforeAsk?: () => Promise<void>;
}

/** Builds `askPermission` for `installPermissions`. A failed request rejects the call (never "allowed"). */
export function permissionAsker(
  options: PermissionAskerOptions,
): (request: PermissionRequest) => Promise<PermissionAnswer> {
  return async ({ call, kind, signal, reason }) => {
    await options.beforeAsk?.();
    const toolCall: ToolCallUpdate = {
      toolCallId: options.toolCallId(call.id),
      title: toolCallTitle(call.name, call.args),
      kind,
      status: "pending",
      rawInput: call.args,
    };
    const locations = locationsFor(call.name, call.args);
    if (locations.length > 0) toolCall.locations = locations;
    // A question the mode alone would not ask (an `ask` rule, the doom-loop guard) says why it comes.
    if (reason)
      toolCall.content = [{ type: "content", content: { type: "text", text: `Asked because of ${reason}.` } }];
    try {
      const response = await options.client.request(
        methods.client.session.requestPermission,
        { sessionId: options.sessionId(), toolCall, options: OPTIONS.map(({ answer: _, ...o }) => o) },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      );
      const answer = permissionAnswer(response.outcome);
      if (answer === "cancelled") options.onCancelled();
      return answer;
    } catch (error) {
      if (signal.aborted) return "cancelled";
      log.warn(`permission request for ${call.name} failed`, error);
      return "reject";
    }
  };
}
