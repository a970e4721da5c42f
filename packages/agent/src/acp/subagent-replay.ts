/**
 * `session/load`'s replay of a session's subagent children, for clients that declared `subagents`: the same shape a
 * live turn has (subagent-sessions.ts). Before each `task` call's result: the child's `subagent_update` (title, how
 * it ended, the task's tool call id), the prompt as a `session_message` to the child, the child's own stored history
 * under the child's session id (its prompt as the `session_message` it received), and its answer as a
 * `session_message` back to the parent. Children of children are replayed the same way.
 */
import { randomUUID } from "node:crypto";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { type ChatMessage, MAX_SUBAGENT_DEPTH, type PromptResult, type StoredToolOutcome } from "@crow/core";
import { SUBAGENT_NOTE } from "@crow/core/internal";
import type { AddressedUpdate } from "./outbox.js";
import { type Replay, replayHistory } from "./replay.js";
import { taskArgs } from "./subagent-sessions.js";
import { idleState, sessionMessage, subagentUpdate, taskLink } from "./subagent-updates.js";

/** A stored child session, as the replay needs it. */
export interface StoredChild {
  cwd: string;
  /** Its history without the system prompt. */
  messages: ChatMessage[];
  outcomes: StoredToolOutcome[];
}

/** The text of the last assistant message with text, "" when none. */
function answerOf(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === "assistant" && typeof message.content === "string" && message.content) return message.content;
  }
  return "";
}

/**
 * The updates of `replay` (the history of `sessionId`) addressed to their sessions, with its children's replays
 * woven in. A child that is no longer stored keeps only the task call's own updates.
 */
export async function replayWithSubagents(
  sessionId: string,
  replay: Replay,
  load: (childId: string) => Promise<StoredChild | undefined>,
  depth = 0,
): Promise<AddressedUpdate[]> {
  const out: AddressedUpdate[] = [];
  const own = (update: SessionUpdate) => out.push({ sessionId, update });
  let next = 0;
  for (const task of replay.subagents) {
    for (; next < task.at; next++) own(replay.updates[next] as SessionUpdate);
    const child = depth < MAX_SUBAGENT_DEPTH ? await load(task.childId) : undefined;
    if (!child) continue;
    const { description, prompt } = taskArgs(task.args);
    const outgoing = randomUUID();
    const incoming = randomUUID();
    const reason = (task.stopReason ?? "end_turn") as PromptResult["stopReason"];
    const state = idleState(reason, reason === "error" ? "the subagent failed" : undefined);
    out.push(
      { sessionId, update: subagentUpdate(task.childId, { title: description, toolCallId: task.toolCallId, state }) },
      {
        sessionId,
        update: sessionMessage(prompt, { messageId: outgoing, recipient: task.childId, recipientMessageId: incoming }),
      },
      { sessionId, update: taskLink(task.toolCallId, task.childId, description) },
    );
    // The child's prompt is the session message it received (without the note Crow adds for the child's model).
    const childReplay = replayHistory(child.messages, child.cwd, child.outcomes);
    let first = 0;
    while (childReplay.updates[first]?.sessionUpdate === "user_message_chunk") first++;
    const firstUser = child.messages.find((m) => m.role === "user");
    const text = typeof firstUser?.content === "string" ? firstUser.content.replace(SUBAGENT_NOTE, "") : prompt;
    out.push({
      sessionId: task.childId,
      update: sessionMessage(text, { messageId: incoming, sender: sessionId, senderMessageId: outgoing }),
    });
    const rest: Replay = {
      updates: childReplay.updates.slice(first),
      usedIds: childReplay.usedIds,
      subagents: childReplay.subagents.map((s) => ({ ...s, at: s.at - first })),
    };
    out.push(...(await replayWithSubagents(task.childId, rest, load, depth + 1)));
    const answer = answerOf(child.messages);
    if (answer) {
      out.push({
        sessionId,
        update: sessionMessage(answer, { messageId: randomUUID(), sender: task.childId, recipient: sessionId }),
      });
    }
  }
  for (; next < replay.updates.length; next++) own(replay.updates[next] as SessionUpdate);
  return out;
}
