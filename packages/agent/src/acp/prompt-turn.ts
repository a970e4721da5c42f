/**
 * One `session/prompt` of a session: a slash command answered at once, or a prompt turn (one at a time through the
 * session's turn gate, queued behind the running one): the checks, the prompt's content read, the runtime's turn (its events reach the client through
 * the session's subscription), the answer once its updates are written.
 */
import { type ContentBlock, RequestError, type StopReason } from "@agentclientprotocol/sdk";
import { findModel, providerProblem } from "../config/index.js";
import type { AcpConnection } from "./acp-connection.js";
import type { AcpSession } from "./acp-session.js";
import { PromptContentError, promptContentUnless, singleText } from "./prompt-content.js";
import type { TurnTicket } from "./turn-gate.js";

/** What a prompt needs from the connection: the runtime (or the error telling why it is not there), the configuration. */
type PromptHost = Pick<AcpConnection, "crow" | "config">;

export async function runPrompt(
  acp: AcpSession,
  blocks: ContentBlock[],
  signal: AbortSignal,
  host: PromptHost,
): Promise<StopReason> {
  const { session } = acp;
  const receipt = acp.turns.receipt();
  if (blocks.length === 0)
    throw RequestError.invalidParams(undefined, "prompt is empty: send at least one content block");
  const text = singleText(blocks);
  const { parseSlashCommand } = await import("@crow/core/internal");
  const command = text === undefined ? undefined : parseSlashCommand(text);
  // A skill's `/name` is a prompt for the model (the skills extension brings the skill in), not a command.
  if (command && !session.commands().some((c) => c.prompt && c.name === command.name)) {
    acp.reply(await session.command(command.name, command.args));
    await acp.written();
    return "end_turn";
  }
  // Queued behind a running turn, it may be cancelled before it starts (session/cancel, or its own request).
  const ticket = await acp.turns.enter(receipt, signal);
  if (!ticket) return "cancelled";
  try {
    return await promptTurn(acp, blocks, signal, ticket, host);
  } finally {
    ticket.end();
  }
}

/** One prompt turn (the gate is held): checks, prompt content, the runtime's turn relayed as updates. */
async function promptTurn(
  acp: AcpSession,
  blocks: ContentBlock[],
  signal: AbortSignal,
  ticket: TurnTicket,
  host: PromptHost,
): Promise<StopReason> {
  const { session } = acp;
  // Busy with something else than a prompt (a compaction requested by `_crow/compact`).
  if (session.running) throw RequestError.invalidRequest(undefined, "the session is busy; try again when it is done");
  const crow = await host.crow();
  const config = host.config();
  const provider = findModel(config, session.model)?.provider;
  const problem = provider && crow.providers().includes(provider) ? undefined : providerProblem(config, session.model);
  if (problem) throw new RequestError(-32603, problem);
  let content: Awaited<ReturnType<typeof promptContentUnless>>;
  try {
    // Reading the prompt's files and images stops on session/cancel as well as when the request is cancelled.
    content = await promptContentUnless([signal, ticket.signal], blocks, session.cwd, {
      ...(session.model ? { model: session.model } : {}),
      additionalDirectories: session.additionalDirectories,
    });
  } catch (error) {
    if (error instanceof PromptContentError) throw RequestError.invalidParams(undefined, error.message);
    throw error;
  }
  if (content === undefined) return "cancelled";
  // Cancelled while its content was being read: the turn never starts.
  if (ticket.cancelled) return "cancelled";
  try {
    const run = session.prompt(content, {
      signal,
      // Its events reach the client through the session's subscription: the run keeps none.
      events: false,
      // Resources become text for the model; the blocks themselves are kept so a load shows them again.
      ...(blocks.some((b) => b.type === "resource" || b.type === "resource_link") ? { original: blocks } : {}),
    });
    ticket.started();
    // The answer waits until the turn's events are out to the client.
    const outcome = await run.result;
    await acp.written();
    if (outcome.stopReason !== "error") return outcome.stopReason;
    const error = outcome.error;
    // The model router already says which provider failed and what to try: the editor shows the same message.
    throw new RequestError(-32603, error?.message ?? "LLM provider error: unknown failure", {
      kind: error?.kind,
      status: error?.status,
      code: error?.code,
      attempts: error?.attempts,
    });
  } catch (error) {
    // The runtime's class, imported as lazily as the runtime (which is loaded by now: the error came from it).
    const { SessionBusyError } = await import("@crow/core");
    if (error instanceof SessionBusyError) throw RequestError.invalidRequest(undefined, error.message);
    throw error;
  }
}
