/**
 * The translation layer's builders of the unstable subagent kinds (see translate.ts for the stable ones): a child's
 * `subagent_update`, the `session_message`s between parent and child, and the task call's link to its child. Used
 * live (subagent-sessions.ts) and by the replay (subagent-replay.ts).
 */
import type { ToolCallUpdate } from "@agentclientprotocol/sdk";
import type {
  StopReason as UnstableStopReason,
  SessionUpdate as UnstableUpdate,
} from "@agentclientprotocol/sdk/unstable";
import type { PromptResult } from "@crow/core";
import type { AnyUpdate } from "./outbox.js";

/** The `state` of a finished child (`idle`, with how its turn ended). */
export function idleState(reason: PromptResult["stopReason"], error?: string): NonNullable<SubagentUpdate["state"]> {
  if (reason === "error") return { state: "idle", stopReason: "error", error: { code: -32603, message: error ?? "" } };
  return { state: "idle", stopReason: reason satisfies UnstableStopReason };
}

type SubagentUpdate = Extract<UnstableUpdate, { sessionUpdate: "subagent_update" }>;

/** The `subagent_update` announcing a child (or its new state). */
export function subagentUpdate(
  childId: string,
  fields: { title?: string; toolCallId?: string; state: NonNullable<SubagentUpdate["state"]> },
): SubagentUpdate {
  return {
    sessionUpdate: "subagent_update",
    sessionId: childId,
    ...(fields.title ? { title: fields.title } : {}),
    state: fields.state,
    ...(fields.toolCallId ? { _meta: { toolCallId: fields.toolCallId } } : {}),
  };
}

/** A text `session_message`: `from` → `to`, as seen in the transcript it is sent on. */
export function sessionMessage(
  text: string,
  ids: {
    messageId: string;
    sender?: string;
    recipient?: string;
    senderMessageId?: string;
    recipientMessageId?: string;
  },
): UnstableUpdate {
  return {
    sessionUpdate: "session_message",
    messageId: ids.messageId,
    ...(ids.sender ? { senderSessionId: ids.sender } : {}),
    ...(ids.recipient ? { recipientSessionId: ids.recipient } : {}),
    ...(ids.senderMessageId ? { senderMessageId: ids.senderMessageId } : {}),
    ...(ids.recipientMessageId ? { recipientMessageId: ids.recipientMessageId } : {}),
    content: text ? [{ type: "text", text }] : [],
  };
}

/** The line the task call shows instead of its child's activity, with the link to the child. */
export function taskLink(toolCallId: string, childId: string, description: string): ToolCallUpdate & AnyUpdate {
  return {
    sessionUpdate: "tool_call_update",
    toolCallId,
    content: [{ type: "content", content: { type: "text", text: `Subagent ${childId}: ${description}` } }],
    _meta: { subagentSessionId: childId },
  };
}
