/**
 * Subagents as ACP child sessions (unstable ACP, for clients that declare `clientCapabilities.subagents`): each
 * `task` call's child is announced on its parent with `subagent_update` (title, state, the task's tool call id in
 * `_meta`), the task's prompt is a `session_message` from the parent to the child (and the child's answer one from the
 * child to the parent), and the child's own activity (text, reasoning, tool calls, usage) is ordinary
 * `session/update`s carrying the child's session id. The parent's task call shows one line naming the child instead
 * of the child's whole activity. Children of children nest the same way. Everything goes out through the parent's
 * outbox, so a child is always announced before anything about it.
 *
 * The schema of the SDK in use (2.4.0) has no `session` tool-call content: the task call points at its child with
 * `_meta.subagentSessionId`, which validates.
 */
import { randomUUID } from "node:crypto";
import type { CrowEvent, CrowSession } from "@crow/core";
import type { EventRelay } from "./event-relay.js";
import type { AnyUpdate } from "./outbox.js";
import { idleState, sessionMessage, subagentUpdate, taskLink } from "./subagent-updates.js";

/** What the subagent sessions of one session need from the agent. */
export interface SubagentHost {
  /** A live session of the runtime (a task's child is live while it runs). */
  session(id: string): CrowSession | undefined;
  /** Queues an update about `sessionId` (a child's or the parent's own) on the top session's outbox. */
  send(update: AnyUpdate, sessionId: string): void;
  /** A fresh relay for a child's events (its own tool call ids, its model's context window). */
  relay(child: CrowSession): EventRelay;
}

/** The task's description and prompt, from the arguments it was announced with. */
export function taskArgs(raw: unknown): { description: string; prompt: string } {
  const args = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  return {
    description: typeof args.description === "string" ? args.description : "",
    prompt: typeof args.prompt === "string" ? args.prompt : "",
  };
}

interface Child {
  id: string;
  relay: EventRelay;
  nested: SubagentSessions;
  unsubscribe: () => void;
  /** The child's final answer, once its turn ended. */
  answer?: string;
  stopped: boolean;
}

/** The subagent children of one session (one per `task` call that is running), streamed as child sessions. */
export class SubagentSessions {
  /** By the parent's model call id of the task call. */
  private readonly children = new Map<string, Child>();

  constructor(
    private readonly parentId: string,
    private readonly parentRelay: EventRelay,
    private readonly host: SubagentHost,
  ) {}

  /**
   * The parent's updates for one of its events when the event is about a subagent (its start, its activity, the end
   * of its task call); undefined for any other event (translate it as usual).
   */
  updates(event: CrowEvent): AnyUpdate[] | undefined {
    if (event.type === "tool_call_progress") {
      if (this.children.has(event.id)) return [];
      const childId = event.progress.display?.subagent?.sessionId;
      return childId ? this.start(event.id, childId) : undefined;
    }
    if (event.type === "tool_call_done") {
      const child = this.children.get(event.id);
      if (!child) return undefined;
      this.children.delete(event.id);
      const answer =
        child.answer === undefined
          ? []
          : [sessionMessage(child.answer, { messageId: randomUUID(), sender: child.id, recipient: this.parentId })];
      return [...answer, ...this.parentRelay.translate(event)];
    }
    return undefined;
  }

  /** Stops following every child (the parent session closes). */
  close(): void {
    for (const child of this.children.values()) {
      child.nested.close();
      child.unsubscribe();
    }
    this.children.clear();
  }

  private start(callId: string, childId: string): AnyUpdate[] | undefined {
    const session = this.host.session(childId);
    // Not a live session of this runtime: the progress stays text on the task call.
    if (!session) return undefined;
    const toolCallId = this.parentRelay.toolCallId(callId);
    const { description, prompt } = taskArgs(this.parentRelay.announced(callId)?.rawInput);
    const outgoing = randomUUID();
    const incoming = randomUUID();
    const relay = this.host.relay(session);
    const child: Child = {
      id: childId,
      relay,
      nested: new SubagentSessions(childId, relay, this.host),
      unsubscribe: () => {},
      stopped: false,
    };
    this.children.set(callId, child);
    // The child's turn starts after this returns (the tool reports its start first): nothing of it is missed.
    child.unsubscribe = session.subscribe((event) => this.childEvent(child, event));
    // The announcement first: nothing may name the child before it.
    for (const update of [
      subagentUpdate(childId, { title: description, toolCallId, state: { state: "running" } }),
      sessionMessage(prompt, { messageId: outgoing, recipient: childId, recipientMessageId: incoming }),
      taskLink(toolCallId, childId, description),
    ])
      this.host.send(update, this.parentId);
    this.host.send(
      sessionMessage(prompt, { messageId: incoming, sender: this.parentId, senderMessageId: outgoing }),
      childId,
    );
    return [];
  }

  private childEvent(child: Child, event: CrowEvent): void {
    if (child.stopped) return;
    const updates = child.nested.updates(event) ?? child.relay.translate(event);
    for (const update of updates) this.host.send(update, child.id);
    if (event.type !== "stop") return;
    child.stopped = true;
    child.answer = lastText(event.messages);
    child.nested.close();
    child.unsubscribe();
    this.host.send(subagentUpdate(child.id, { state: idleState(event.reason, event.error?.message) }), this.parentId);
  }
}

/** The text of the last assistant message with text (the child's final answer), "" when none. */
function lastText(messages: ReadonlyArray<{ role: string; content?: unknown }>): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === "assistant" && typeof message.content === "string" && message.content) return message.content;
  }
  return "";
}
