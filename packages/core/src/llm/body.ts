/**
 * The chat-completions request body, serialized here rather than by the SDK. A session's history is append-only
 * and resent with every request, so each message is encoded to UTF-8 JSON once and the body is the concatenation
 * of those pieces. On a 1 200-message history that is 0.14 ms per request instead of 0.5 ms for stringify + encode
 * (and the SDK's string path costs more still: undici re-scans and re-encodes a string body). Messages are treated
 * as immutable once sent: the loop and the runtime only ever append new message objects.
 */
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import type { ChatMessage } from "../messages.js";
import type { LlmRequest } from "./types.js";

const asSent = new WeakMap<ChatMessage, Buffer>();
const withoutReasoning = new WeakMap<ChatMessage, Buffer>();
const COMMA = Buffer.from(",");
const OPEN = Buffer.from('{"messages":[');

function messageJson(message: ChatMessage, sendReasoning: boolean): Buffer {
  const cache = sendReasoning ? asSent : withoutReasoning;
  let json = cache.get(message);
  if (json === undefined) {
    // The message's id is Crow's own: not part of the chat-completions message.
    const { id: _id, ...sent } = message as ChatMessage & { id?: string };
    if (!sendReasoning && sent.role === "assistant" && sent.reasoning_content !== undefined) {
      const { reasoning_content: _dropped, ...rest } = sent;
      json = Buffer.from(JSON.stringify(rest));
    } else if (sent.role === "user" && sent.original !== undefined) {
      // The host's own record of the prompt: not part of the chat-completions message.
      const { original: _kept, ...rest } = sent;
      json = Buffer.from(JSON.stringify(rest));
    } else {
      json = Buffer.from(JSON.stringify(sent));
    }
    cache.set(message, json);
  }
  return json;
}

/** The request parameters (everything but the messages), as the SDK's typed call expects them. */
export function requestParams(request: LlmRequest): ChatCompletionCreateParamsStreaming {
  const { extra, parallel_tool_calls, ...params } = request.params ?? {};
  const body: ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages: [],
    stream: true,
    stream_options: { include_usage: true },
    ...params,
  };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools;
    body.parallel_tool_calls = parallel_tool_calls ?? true;
  }
  // Provider-specific fields, outside the SDK's type: merged as they are (they may also override the fields above).
  Object.assign(body, extra);
  return body;
}

/** The whole body as UTF-8 JSON: `params` with `messages` (an `extra.messages` cannot replace the history). */
export function encodeBody(
  params: ChatCompletionCreateParamsStreaming,
  request: LlmRequest,
  sendReasoning: boolean,
): Buffer {
  const { messages: _placeholder, ...rest } = params;
  const parts: Buffer[] = [OPEN];
  request.messages.forEach((message, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(messageJson(message, sendReasoning));
  });
  const others = JSON.stringify(rest);
  parts.push(Buffer.from(others === "{}" ? "]}" : `],${others.slice(1)}`));
  return Buffer.concat(parts);
}
