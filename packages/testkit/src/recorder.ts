/**
 * Reading what was recorded: what the user saw (the ACP updates the test client recorded, of a turn or of a session's
 * replay) and what the model was sent (a request the mock captured), as text.
 */
import { methods, type SessionUpdate } from "@agentclientprotocol/sdk";
import type { AcpTestClient } from "./acp-client.js";
import type { CapturedRequest } from "./mock-llm-script.js";

/** Updates that describe the session rather than its history (sent on load too, in no fixed order). */
const SESSION_STATE: ReadonlySet<string> = new Set(["available_commands_update", "session_info_update"]);

/**
 * Sends `session/load` and returns the history the agent replayed for that session before answering (without the
 * command list and title updates that accompany it).
 */
export async function loadReplay(agent: AcpTestClient, sessionId: string, cwd: string): Promise<SessionUpdate[]> {
  const start = agent.notifications.length;
  await agent.agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
  return agent.notifications
    .slice(start)
    .filter((n) => n.sessionId === sessionId && !SESSION_STATE.has(n.update.sessionUpdate))
    .map((n) => n.update);
}

/** The text of the streamed chunks of one kind, joined (how an editor shows them). Default: the agent's answer. */
export function chunkText(
  updates: readonly SessionUpdate[],
  kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk" = "agent_message_chunk",
): string {
  return updates.map((u) => (u.sessionUpdate === kind && u.content.type === "text" ? u.content.text : "")).join("");
}

/** The text entries of a tool_call_update's `content` (a tool's result as shown), joined; "" for anything else. */
export function toolResultText(update: SessionUpdate | undefined): string {
  if (update?.sessionUpdate !== "tool_call_update") return "";
  return (update.content ?? [])
    .map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : ""))
    .join("");
}

/** The last user message of a request, as text. */
export function lastUserText(request: CapturedRequest): string {
  return String([...request.body.messages].reverse().find((m) => m.role === "user")?.content ?? "");
}

/** The content of a request's last message (the newest tool result when the model called a tool), as text. */
export function lastToolResult(request: CapturedRequest): string {
  return String(request.body.messages.at(-1)?.content ?? "");
}
