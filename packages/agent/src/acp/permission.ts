/**
 * `ask` mode's question to the user: the permission extension's `askPermission` as an ACP
 * `session/request_permission` request (allow once / allow always / reject).
 */
import type { PermissionOption, ToolCallContent, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { callDisplay, type PermissionAnswer, type PermissionRequest } from "@crow/core";
import { log } from "../base/log.js";
import type { Outbox } from "./outbox.js";
import { displayContent, toolCallContent } from "./translate.js";

/**
 * `_meta` key set (true) on a permission request whose "allow" runs the call outside the sandbox. Clients that
 * approve questions on their own (crow run --yes) leave such a request to a person.
 */
export const UNCONFINED_META_KEY = "crow/unconfined";

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

/**
 * What a call proposes, as tool call content the person can judge before allowing it: the command a terminal call
 * runs, or the change a write or edit would make as the permission gate's one dry run computed it (`proposal`: on
 * the toolserver, wherever its disk is, or in the editor's buffer). A call whose dry run fails is never asked about.
 */
export function proposedContent(request: Pick<PermissionRequest, "call" | "proposal">): ToolCallContent[] {
  const { args } = request.call;
  if (typeof args.command === "string" && args.command.trim() !== "") {
    return [{ type: "content", content: { type: "text", text: `\`\`\`sh\n${args.command}\n\`\`\`` } }];
  }
  return request.proposal ? displayContent(request.proposal) : [];
}

export interface PermissionAskerOptions {
  /**
   * The session's outbox (known once the session is open; questions only come during turns): the proposal and the
   * question go out through it, after the updates of the events before them (the `tool_call` they are about).
   */
  outbox: () => Outbox | undefined;
  /** The call as the session announced it (`tool_call`), by model call id: the question shows that very call. */
  announced: (callId: string) => ToolCallUpdate | undefined;
  /** Called when the user dismissed the question (outcome `cancelled`): the turn ends as cancelled. */
  onCancelled: () => void;
}

/** A call the session did not announce, rendered the way `tool_call` renders one (its tool's display). */
function unannouncedCall({ call, tool }: PermissionRequest): ToolCallUpdate {
  const display = tool?.display(call.args) ?? callDisplay(call.name, call.args);
  const toolCall: ToolCallUpdate = { toolCallId: call.id, title: display.title ?? call.name, rawInput: call.args };
  if (display.locations?.length) toolCall.locations = display.locations;
  return toolCall;
}

/** Builds `askPermission` for `installPermissions`. A failed request rejects the call (never "allowed"). */
export function permissionAsker(
  options: PermissionAskerOptions,
): (request: PermissionRequest) => Promise<PermissionAnswer> {
  return async (request) => {
    const { call, kind, signal, reason, unconfined } = request;
    const outbox = options.outbox();
    if (!outbox) return "reject";
    // The loop announces every call before it asks about it; the fallback is for an extension asking on its own.
    const toolCall: ToolCallUpdate = {
      ...(options.announced(call.id) ?? unannouncedCall(request)),
      kind,
      status: "pending",
    };
    const content = proposedContent(request);
    if (content.length > 0) {
      // The pending call in the thread shows the proposal too, before the question.
      outbox.send(toolCallContent(toolCall.toolCallId, content));
    }
    // A question the mode alone would not ask (an `ask` rule, the doom-loop guard) says why it comes.
    const why: ToolCallContent[] = reason
      ? [{ type: "content", content: { type: "text", text: `Asked because of ${reason}.` } }]
      : [];
    if (content.length + why.length > 0) toolCall.content = [...why, ...content];
    try {
      const response = await outbox.ask(
        {
          toolCall,
          options: OPTIONS.map(({ answer: _, ...o }) => o),
          // Clients that answer on their own (crow run --yes) must not answer this one: it lifts the sandbox.
          ...(unconfined ? { _meta: { [UNCONFINED_META_KEY]: true } } : {}),
        },
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
