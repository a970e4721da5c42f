/**
 * The agent of `crow run --connect URL`: a Crow served by `crow acp --listen` elsewhere, spoken to over the network
 * exactly as the in-process one is over its in-memory streams (agent-process.ts): same client, same requests. Its
 * tools run where it runs; nothing of this machine's configuration is used but the token.
 */
import { errorText } from "@crow/core";
import { remoteStream } from "../acp-net/connect.js";
import { AgentExitedError, type AgentHandlers, type AgentProcess, clientApp } from "./agent-process.js";

/** Connects to the agent at `url` with `token`. */
export async function connectAgent(handlers: AgentHandlers, url: URL, token: string): Promise<AgentProcess> {
  const remote = await remoteStream(url, token);
  const connection = clientApp(handlers).connect(remote.stream);
  let closing = false;
  const died = connection.closed.then(
    () => {
      throw lost(url, remote.refusal(), closing);
    },
    (error: unknown) => {
      throw lost(url, remote.refusal() ?? errorText(error), closing);
    },
  );
  died.catch(() => {});
  return {
    agent: connection.agent,
    connection,
    died,
    async guard(request) {
      try {
        return await Promise.race([request, died]);
      } catch (error) {
        // A refused connection fails the request it carried: say why the server refused it.
        const refusal = remote.refusal();
        if (refusal && !(error instanceof AgentExitedError)) throw lost(url, refusal, false);
        throw error;
      }
    },
    async close() {
      closing = true;
      connection.close();
      await connection.closed.catch(() => {});
    },
    kill() {
      connection.close();
    },
  };
}

function lost(url: URL, why: string | undefined, closing: boolean): AgentExitedError {
  if (closing) return new AgentExitedError("the connection was closed", "");
  return new AgentExitedError(
    `the agent at ${url.href} ${why ? "refused the connection:" : "closed the connection"}`,
    why ?? "",
  );
}
