/**
 * The chunk shapes providers actually send, and how one delta is read into text, reasoning and tool-call fragments.
 * Everything is optional and loosely typed on purpose: the same field means the same thing across providers, but
 * which fields appear, and in which form, varies (see the recorded shapes in @crow/testkit's provider-streams.ts).
 */

/** One tool-call fragment of a delta. `index` is missing on some providers (Gemini), `id` is `""` on others' later fragments. */
export interface ToolCallFragment {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

/** The parts of a chat-completion delta this client reads. */
export interface ChunkDelta {
  /** A string (most providers), or an array of parts (Mistral's reasoning models: `thinking` and `text` parts). */
  content?: unknown;
  /** DeepSeek, llama.cpp, older vLLM. */
  reasoning_content?: string | null;
  /** OpenRouter, Ollama, newer vLLM (which sent both names for a while). */
  reasoning?: string | null;
  tool_calls?: ToolCallFragment[] | null;
}

/** A chat-completion chunk (or a non-streaming completion turned into one, see client.ts). */
export interface Chunk {
  /** Empty on Azure's first chunk (prompt filter results only) and on OpenAI's usage-only last chunk. */
  choices?: Array<{ index?: number; delta?: ChunkDelta | null; finish_reason?: string | null }> | null;
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    total_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number } | null;
    completion_tokens_details?: { reasoning_tokens?: number } | null;
  } | null;
  error?: { message?: string; code?: string | number; type?: string } | null;
}

/** A piece of streamed output, in the order the provider sent it. */
export type DeltaPiece = { kind: "text" | "reasoning"; text: string };

/**
 * The text and reasoning of one delta, in order: the reasoning field first (providers send it before the answer),
 * then the content. Empty pieces are left out.
 *
 * Only one reasoning field is read: a server that sends `reasoning` and `reasoning_content` together sends the same
 * text twice. The first non-empty one wins (an empty `reasoning_content` next to a filled `reasoning` happens).
 */
export function deltaPieces(delta: ChunkDelta): DeltaPiece[] {
  const pieces: DeltaPiece[] = [];
  const reasoning = nonEmpty(delta.reasoning_content) ?? nonEmpty(delta.reasoning);
  if (reasoning !== undefined) pieces.push({ kind: "reasoning", text: reasoning });
  if (typeof delta.content === "string") {
    if (delta.content.length > 0) pieces.push({ kind: "text", text: delta.content });
  } else if (Array.isArray(delta.content)) {
    for (const part of delta.content) pushPart(pieces, part);
  }
  return pieces;
}

/**
 * One element of an array `content`. Mistral's reasoning models send `{type: "thinking", thinking: [{type: "text",
 * text}]}` and `{type: "text", text}`; `thinking` as a plain string is accepted too. Other part types (references,
 * images) carry no text for the user and are skipped.
 */
function pushPart(pieces: DeltaPiece[], part: unknown): void {
  if (typeof part === "string") {
    if (part.length > 0) pieces.push({ kind: "text", text: part });
    return;
  }
  if (typeof part !== "object" || part === null) return;
  const { type, text, thinking } = part as { type?: unknown; text?: unknown; thinking?: unknown };
  if (type === "text" && typeof text === "string" && text.length > 0) pieces.push({ kind: "text", text });
  if (type === "thinking") {
    const inner = thinkingText(thinking);
    if (inner.length > 0) pieces.push({ kind: "reasoning", text: inner });
  }
}

function thinkingText(thinking: unknown): string {
  if (typeof thinking === "string") return thinking;
  if (!Array.isArray(thinking)) return "";
  let text = "";
  for (const inner of thinking) {
    if (typeof inner === "string") text += inner;
    else if (typeof inner === "object" && inner !== null) {
      const value = (inner as { text?: unknown }).text;
      if (typeof value === "string") text += value;
    }
  }
  return text;
}

function nonEmpty(value: string | null | undefined): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
