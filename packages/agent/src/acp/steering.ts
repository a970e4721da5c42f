/**
 * `_session/steering`, the steering extension of the official ACP adapters (claude-agent-acp, codex-acp): a message
 * for the session's running turn. `{sessionId, prompt: ContentBlock[], _meta?: {steering: {idleBehavior}}}` →
 * `{outcome: "injected" | "promptRequired" | "failed", reason?}`. Advertised as `_meta.steering.supported` in the
 * initialize response.
 *
 * - `injected`: the running turn took it. It joins the conversation after the running tool calls answer, before the
 *   turn's next request (a turn about to end makes one more request for it), stored as the user's message there and
 *   shown to the client as a `user_message_chunk` at that point. The turn's `session/prompt` answers only after it.
 *   If the turn is cancelled or fails before that request, a notice says the steer was dropped.
 * - With no running turn nothing starts (no turn without a `session/prompt` to own it): `promptRequired` when the
 *   client opted in with `idleBehavior: "promptRequired"`, else `failed` with reason `noRunningTurn`.
 *
 * Steers of one session are handled one after another, in arrival order (reading a steer's files takes time: a
 * later steer never overtakes an earlier one).
 */
import { type ContentBlock, RequestError } from "@agentclientprotocol/sdk";
import type { AcpSession } from "./acp-session.js";
import { PromptContentError, promptContentUnless } from "./prompt-content.js";

export const STEER_METHOD = "_session/steering";

/** The `_meta` of the initialize response that advertises the extension. */
export const STEERING_META = { steering: { supported: true } } as const;

export interface SteerParams {
  sessionId: string;
  prompt: ContentBlock[];
  /** The client opted in to `promptRequired` answers (`_meta.steering.idleBehavior`). */
  promptRequired: boolean;
}

export type SteerResponse =
  | { outcome: "injected" }
  | { outcome: "promptRequired"; reason: "noRunningTurn" }
  | { outcome: "failed"; reason: string; message: string };

const SHAPE = `${STEER_METHOD} expects {"sessionId": "<id>", "prompt": [<content blocks>]}`;

/** Parses the request's params (a clear invalid-params error for anything else). */
export function steerParams(raw: unknown): SteerParams {
  const p = (raw ?? {}) as Record<string, unknown>;
  if (typeof p.sessionId !== "string" || !Array.isArray(p.prompt)) throw RequestError.invalidParams(undefined, SHAPE);
  const blocks = p.prompt as unknown[];
  if (blocks.length === 0) throw RequestError.invalidParams(undefined, `${SHAPE}: the prompt is empty`);
  if (!blocks.every((b) => typeof b === "object" && b !== null && typeof (b as { type?: unknown }).type === "string"))
    throw RequestError.invalidParams(undefined, `${SHAPE}: each prompt entry must be a content block with a type`);
  const meta = p._meta as { steering?: { idleBehavior?: unknown } } | undefined;
  return {
    sessionId: p.sessionId,
    prompt: blocks as ContentBlock[],
    promptRequired: meta?.steering?.idleBehavior === "promptRequired",
  };
}

/** One steer, after every earlier steer of the session (see the file's comment). */
export function steer(acp: AcpSession, params: SteerParams, signal: AbortSignal): Promise<SteerResponse> {
  return acp.steers.run(() => steerNow(acp, params, signal));
}

async function steerNow(acp: AcpSession, params: SteerParams, signal: AbortSignal): Promise<SteerResponse> {
  const { session } = acp;
  // A prompt still reading its content holds the gate without a runtime turn yet: the steer belongs to it.
  if (!session.running) await acp.turns.turnStarted();
  if (!session.running) return idle(params);
  let content: Awaited<ReturnType<typeof promptContentUnless>>;
  try {
    content = await promptContentUnless([signal], params.prompt, session.cwd, {
      ...(session.model ? { model: session.model } : {}),
      additionalDirectories: session.additionalDirectories,
    });
  } catch (error) {
    if (error instanceof PromptContentError) throw RequestError.invalidParams(undefined, error.message);
    throw error;
  }
  if (content === undefined) throw RequestError.requestCancelled();
  const resources = params.prompt.some((b) => b.type === "resource" || b.type === "resource_link");
  const outcome = session.steer(content, resources ? { original: params.prompt } : {});
  return outcome === "injected" ? { outcome } : idle(params);
}

function idle(params: SteerParams): SteerResponse {
  if (params.promptRequired) return { outcome: "promptRequired", reason: "noRunningTurn" };
  return {
    outcome: "failed",
    reason: "noRunningTurn",
    message: "no turn is running in this session: send the message as session/prompt",
  };
}
