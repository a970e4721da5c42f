/** What the `session/load` tests share: the updates a load replays. */
import { methods, type SessionUpdate } from "@agentclientprotocol/sdk";
import type { AcpTestClient } from "@crow/testkit";

/** The `session/update`s a `session/load` replays for `sessionId` (before its answer). */
export async function replayedUpdates(client: AcpTestClient, sessionId: string, cwd: string): Promise<SessionUpdate[]> {
  const before = client.notifications.length;
  await client.agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
  return client.notifications
    .slice(before)
    .filter((n) => n.sessionId === sessionId)
    .map((n) => n.update);
}
