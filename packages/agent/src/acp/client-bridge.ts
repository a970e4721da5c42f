/**
 * The editor's fs and terminal as the tool router's `ClientBridge`: one method per capability the client advertised
 * in `initialize`, each an ACP request with the session id filled in.
 */
import {
  type AgentContext,
  type ClientCapabilities,
  methods,
  type ReadTextFileRequest,
} from "@agentclientprotocol/sdk";
import type { ClientBridge } from "../tools/types.js";

export function clientBridge(
  client: AgentContext,
  sessionId: string,
  capabilities: ClientCapabilities | undefined,
): ClientBridge {
  const bridge: ClientBridge = {};
  if (capabilities?.fs?.readTextFile) {
    bridge.readTextFile = async (path, line, limit) => {
      const params: ReadTextFileRequest = { sessionId, path };
      if (line !== undefined) params.line = line;
      if (limit !== undefined) params.limit = limit;
      return (await client.request(methods.client.fs.readTextFile, params)).content;
    };
  }
  if (capabilities?.fs?.writeTextFile) {
    bridge.writeTextFile = async (path, content) => {
      await client.request(methods.client.fs.writeTextFile, { sessionId, path, content });
    };
  }
  if (capabilities?.terminal) {
    bridge.createTerminal = (params) => client.createTerminal({ sessionId, ...params });
  }
  return bridge;
}
