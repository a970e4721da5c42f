/**
 * The ACP agent: a translator over a Crow runtime. ACP requests become runtime calls (new/load session, prompt,
 * cancel, modes, model, commands, custom methods) and the runtime's events become `session/update`s. The runtime
 * owns sessions, persistence, compaction, permissions and extensions; this layer owns what is per connection
 * (acp-connection.ts: the client's capabilities, sign-in, the runtime's start) and per session (acp-session.ts: the outbox,
 * the relay of events to updates, tool call ids, questions to the user). This file is the method table: each method
 * finds its session and delegates.
 */
import path from "node:path";
import { type AgentApp, type agent, methods, RequestError } from "@agentclientprotocol/sdk";
import { agent as unstableAgent } from "@agentclientprotocol/sdk/unstable";
import { errorText } from "@crow/core";
import type { AcpMcpServer } from "../tools/types.js";
import { AcpConnection, type AgentOptions } from "./acp-connection.js";
import { requestedDirectories } from "./additional-directories.js";
import { registerAuthMethods } from "./auth.js";
import { findMode, setConfigOption } from "./config-options.js";
import { runPrompt } from "./prompt-turn.js";
import { registerSessionMethods } from "./session-methods.js";
import { STEER_METHOD, steer, steerParams } from "./steering.js";

export type { AgentOptions, OpenRequest } from "./acp-connection.js";
export type { AcpSession } from "./acp-session.js";

/**
 * The app builder with the unstable schema's parsers: the same builder as the stable one, but `initialize` keeps
 * `clientCapabilities.subagents` (the stable parser drops it). Typed as the stable app: the layer speaks the stable
 * schema, and sends the unstable subagent kinds only to clients that declared them (subagent-sessions.ts).
 */
const acpAgent = unstableAgent as unknown as typeof agent;

/** Builds the agent app. `close()` on the returned handle closes the runtime (every session, the store). */
export function createAgent(options: AgentOptions): { app: AgentApp; close: () => Promise<void> } {
  const connection = new AcpConnection(options);
  const app = acpAgent({ name: "crow" })
    .onRequest(methods.agent.initialize, ({ params }) => connection.initialize(params.clientCapabilities ?? undefined))
    .onRequest(methods.agent.session.new, async ({ params, client }) => {
      if (!path.isAbsolute(params.cwd))
        throw RequestError.invalidParams(undefined, `cwd must be absolute: ${params.cwd}`);
      const session = await connection.open(client, {
        kind: "new",
        cwd: params.cwd,
        mcpServers: params.mcpServers as AcpMcpServer[],
        additionalDirectories: requestedDirectories(params.additionalDirectories, "session/new"),
      });
      session.introduce();
      return { sessionId: session.id, ...session.state() };
    })
    .onRequest(methods.agent.session.prompt, async ({ params, signal }) => ({
      stopReason: await runPrompt(connection.find(params.sessionId), params.prompt, signal, connection),
    }))
    .onRequest(STEER_METHOD, steerParams, ({ params, signal }) =>
      steer(connection.find(params.sessionId), params, signal),
    )
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      connection.sessions.get(params.sessionId)?.cancel();
    })
    .onRequest(methods.agent.session.setMode, ({ params }) => {
      const session = connection.find(params.sessionId);
      const mode = findMode(params.modeId);
      if (!mode) throw RequestError.invalidParams(undefined, `unknown mode "${params.modeId}" (code, ask, read-only)`);
      // The session tells its listeners (current_mode_update, config_option_update) and persistence stores it.
      session.session.setMode(mode);
      return {};
    })
    .onRequest(methods.agent.session.setConfigOption, ({ params }) => {
      const session = connection.find(params.sessionId);
      setConfigOption(connection.config(), session.session, params.configId, params.value);
      return { configOptions: session.configOptions() };
    })
    // Custom methods (`_crow/compact`, extensions'): the runtime's registry answers them.
    .onRequest("*", async ({ method, params, signal }) => {
      if (!method.startsWith("_")) throw RequestError.methodNotFound(method);
      const crow = await connection.crow();
      if (!crow.methods().includes(method)) throw RequestError.methodNotFound(method);
      try {
        return await crow.callMethod(method, params, { signal });
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        const data = (error as { data?: unknown }).data;
        throw new RequestError(typeof code === "number" ? code : -32603, errorText(error), data);
      }
    });
  registerAuthMethods(app, {
    signIn: connection.signIn,
    config: () => connection.config(),
    signedIn: connection.ready,
    adopt: (next) => connection.adopt(next),
  });
  registerSessionMethods(app, connection);
  return { app, close: () => connection.close() };
}
