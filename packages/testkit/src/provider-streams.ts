/**
 * Chat-completion streams in the shapes real providers send, written from their public API documentation and the
 * shapes their users reported (not captured traffic: no keys, no personal data). Each fixture is the exact sequence
 * of `data:` payloads; `recordedReply` plays one through the mock LLM unchanged (no finish or usage chunk added).
 *
 *   mock.script(recordedReply(PROVIDER_STREAMS.mistralThinking));
 */
import { type MockTurn, ReplyBuilder } from "./mock-llm-script.js";

/** One recorded stream: the chunks in order, and whether `data: [DONE]` ends it. */
export interface RecordedStream {
  /** Who sends this shape, and what is peculiar about it. */
  readonly description: string;
  readonly chunks: readonly Record<string, unknown>[];
  readonly done: boolean;
}

const created = 1_760_000_000;

function chunk(model: string, choices: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: `rec-${model}`, object: "chat.completion.chunk", created, model, choices, ...extra };
}

function choice(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return { index: 0, delta, finish_reason: finishReason };
}

const thinking = (text: string) => ({ type: "thinking", thinking: [{ type: "text", text }] });
const textPart = (text: string) => ({ type: "text", text });

/** Azure OpenAI's content filter annotations, as they appear on every choice and on the first chunk. */
const filterResults = {
  hate: { filtered: false, severity: "safe" },
  self_harm: { filtered: false, severity: "safe" },
  sexual: { filtered: false, severity: "safe" },
  violence: { filtered: false, severity: "safe" },
};

/** The recorded shapes, by name. The comment of each says what the client must make of it. */
export const PROVIDER_STREAMS = {
  /**
   * Mistral reasoning models (Magistral; mistral-small with `reasoning_effort`): `content` is an array of `thinking`
   * and `text` parts, mixed with plain string deltas, both part types in one delta once, and `{"content": ""}` with
   * the finish reason and the usage at the end.
   * Reasoning: "The user is asking for 2 + 2. Simple arithmetic." Text: "2 + 2 = 4."
   */
  mistralThinking: {
    description: "Mistral: content as an array of thinking/text parts, mixed with string deltas",
    done: true,
    chunks: [
      chunk("magistral-medium-2509", [choice({ role: "assistant", content: "" })]),
      chunk("magistral-medium-2509", [choice({ content: [thinking("The user is asking")] })]),
      chunk("magistral-medium-2509", [choice({ content: [thinking(" for 2 + 2.")] })]),
      chunk("magistral-medium-2509", [choice({ content: [thinking(" Simple arithmetic."), textPart("2 + 2")] })]),
      chunk("magistral-medium-2509", [choice({ content: [textPart(" = 4")] })]),
      chunk("magistral-medium-2509", [choice({ content: "." })]),
      chunk("magistral-medium-2509", [choice({ content: "" }, "stop")], {
        usage: { prompt_tokens: 12, total_tokens: 52, completion_tokens: 40 },
      }),
    ],
  },

  /**
   * Gemini's OpenAI-compatible endpoint: tool calls without `index`, each complete in one fragment, two of them in
   * the one chunk that also carries `finish_reason` and `usage`.
   * Calls: read {file_path: "a.txt"}, read {file_path: "b.txt"}.
   */
  geminiToolCalls: {
    description: "Gemini: unindexed complete tool calls in one chunk with finish_reason and usage",
    done: true,
    chunks: [
      chunk(
        "gemini-2.5-flash",
        [
          {
            index: 0,
            delta: {
              role: "assistant",
              tool_calls: [
                {
                  id: "function-call-1",
                  type: "function",
                  function: { name: "read", arguments: '{"file_path":"a.txt"}' },
                },
                {
                  id: "function-call-2",
                  type: "function",
                  function: { name: "read", arguments: '{"file_path":"b.txt"}' },
                },
              ],
            },
            finish_reason: "tool_calls",
          },
        ],
        { usage: { prompt_tokens: 40, completion_tokens: 16, total_tokens: 56 } },
      ),
    ],
  },

  /**
   * Unindexed calls arriving one per chunk, ids empty (as some OpenAI-compatible gateways send them): each fragment
   * that names a function is a new call.
   * Calls: read {file_path: "a.txt"}, terminal {command: "ls"}.
   */
  unindexedCallsPerChunk: {
    description: "unindexed tool calls, one whole call per chunk, empty ids",
    done: true,
    chunks: [
      chunk("gateway-model", [
        choice({ role: "assistant", tool_calls: [{ id: "", function: { name: "read", arguments: '{"file_path":' } }] }),
      ]),
      chunk("gateway-model", [choice({ tool_calls: [{ id: "", function: { arguments: '"a.txt"}' } }] })]),
      chunk("gateway-model", [
        choice({ tool_calls: [{ id: "", function: { name: "terminal", arguments: '{"command":"ls"}' } }] }),
      ]),
      chunk("gateway-model", [choice({}, "tool_calls")]),
    ],
  },

  /**
   * Tool-call parsers of some local servers number every call 0: a second call comes with the same `index` and a
   * new id. A new id at a used index is a new call.
   * Calls: call_a read {file_path: "a.txt"}, call_b read {file_path: "b.txt"}.
   */
  reusedIndex: {
    description: "every tool call numbered index 0, told apart by their ids",
    done: true,
    chunks: [
      chunk("local-model", [
        choice({
          tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "read", arguments: "" } }],
        }),
      ]),
      chunk("local-model", [choice({ tool_calls: [{ index: 0, function: { arguments: '{"file_path":"a.txt"}' } }] })]),
      chunk("local-model", [
        choice({
          tool_calls: [{ index: 0, id: "call_b", type: "function", function: { name: "read", arguments: "" } }],
        }),
      ]),
      chunk("local-model", [choice({ tool_calls: [{ index: 0, function: { arguments: '{"file_path":"b.txt"}' } }] })]),
      chunk("local-model", [choice({}, "tool_calls")]),
    ],
  },

  /**
   * Qwen on DashScope's compatible mode (and some vLLM versions): the first fragment of a call has its id, later
   * fragments of the same call repeat `index` with `"id": ""`, `"type": "function"` and an empty name.
   * Call: call_qwen_1 read {file_path: "src/main.ts", offset: 10}.
   */
  emptyIdContinuations: {
    description: 'later fragments of one call carry id "" and an empty name',
    done: true,
    chunks: [
      chunk("qwen-plus", [choice({ role: "assistant", content: null })]),
      chunk("qwen-plus", [
        choice({
          content: null,
          tool_calls: [{ index: 0, id: "call_qwen_1", type: "function", function: { name: "read", arguments: "" } }],
        }),
      ]),
      chunk("qwen-plus", [
        choice({
          tool_calls: [
            { index: 0, id: "", type: "function", function: { name: "", arguments: '{"file_path": "src/' } },
          ],
        }),
      ]),
      chunk("qwen-plus", [
        choice({
          tool_calls: [{ index: 0, id: "", type: "function", function: { arguments: 'main.ts", "offset": 10}' } }],
        }),
      ]),
      chunk("qwen-plus", [choice({}, "tool_calls")]),
      chunk("qwen-plus", [], { usage: { prompt_tokens: 30, completion_tokens: 20, total_tokens: 50 } }),
    ],
  },

  /**
   * DeepSeek's reasoner: `reasoning_content` with `content: null` next to it, then content with
   * `reasoning_content: null`; every chunk carries `usage: null` except the last (`choices: []`, OpenAI's
   * `include_usage` shape).
   * Reasoning: "Check the file first." Text: "Done."
   */
  deepseekReasoningContent: {
    description: "DeepSeek: reasoning_content next to content: null; usage only in the last chunk",
    done: true,
    chunks: [
      chunk("deepseek-reasoner", [choice({ role: "assistant", content: null, reasoning_content: "" })], {
        usage: null,
      }),
      chunk("deepseek-reasoner", [choice({ content: null, reasoning_content: "Check the file" })], { usage: null }),
      chunk("deepseek-reasoner", [choice({ content: null, reasoning_content: " first." })], { usage: null }),
      chunk("deepseek-reasoner", [choice({ content: "Done", reasoning_content: null })], { usage: null }),
      chunk("deepseek-reasoner", [choice({ content: ".", reasoning_content: null })], { usage: null }),
      chunk("deepseek-reasoner", [choice({ content: "", reasoning_content: null }, "stop")], { usage: null }),
      chunk("deepseek-reasoner", [], {
        usage: {
          prompt_tokens: 20,
          completion_tokens: 30,
          total_tokens: 50,
          prompt_tokens_details: { cached_tokens: 8 },
          completion_tokens_details: { reasoning_tokens: 24 },
        },
      }),
    ],
  },

  /**
   * OpenRouter: reasoning in `reasoning` (and again, structured, in `reasoning_details`, which must not double it),
   * `content: ""` alongside.
   * Reasoning: "Plan: answer briefly." Text: "Hi!"
   */
  openrouterReasoning: {
    description: "OpenRouter: `reasoning` plus `reasoning_details`, empty content alongside",
    done: true,
    chunks: [
      chunk("openrouter/model", [
        choice({
          role: "assistant",
          content: "",
          reasoning: "Plan: ",
          reasoning_details: [{ type: "reasoning.text", text: "Plan: ", format: "unknown", index: 0 }],
        }),
      ]),
      chunk("openrouter/model", [
        choice({
          content: "",
          reasoning: "answer briefly.",
          reasoning_details: [{ type: "reasoning.text", text: "answer briefly.", format: "unknown", index: 0 }],
        }),
      ]),
      chunk("openrouter/model", [choice({ content: "Hi!", reasoning: null })]),
      chunk("openrouter/model", [choice({ content: "" }, "stop")], {
        usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 },
      }),
    ],
  },

  /**
   * A vLLM release in the middle of renaming the field: every reasoning delta carries the same text as both
   * `reasoning` and `reasoning_content` (one of them empty on the first delta). The text must appear once.
   * Reasoning: "Think once." Text: "Once."
   */
  bothReasoningFields: {
    description: "vLLM: the same reasoning in `reasoning` and `reasoning_content`",
    done: true,
    chunks: [
      chunk("vllm-model", [choice({ role: "assistant", content: "", reasoning_content: "", reasoning: "Think" })]),
      chunk("vllm-model", [choice({ reasoning_content: " once.", reasoning: " once." })]),
      chunk("vllm-model", [choice({ content: "Once." })]),
      chunk("vllm-model", [choice({}, "stop")]),
    ],
  },

  /**
   * Azure OpenAI: the first chunk has `choices: []` and only `prompt_filter_results` (and empty id and model); the
   * choices carry `content_filter_results`; usage comes last.
   * Text: "Filtered fine."
   */
  azureFilterFirst: {
    description: "Azure: a first chunk with choices [] and only prompt filter results",
    done: true,
    chunks: [
      {
        choices: [],
        created: 0,
        id: "",
        model: "",
        object: "",
        prompt_filter_results: [{ prompt_index: 0, content_filter_results: filterResults }],
      },
      chunk("gpt-4o-2024-11-20", [{ ...choice({ role: "assistant", content: "" }), content_filter_results: {} }]),
      chunk("gpt-4o-2024-11-20", [{ ...choice({ content: "Filtered" }), content_filter_results: filterResults }]),
      chunk("gpt-4o-2024-11-20", [{ ...choice({ content: " fine." }), content_filter_results: filterResults }]),
      chunk("gpt-4o-2024-11-20", [{ ...choice({}, "stop"), content_filter_results: {} }]),
      chunk("gpt-4o-2024-11-20", [], { usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } }),
    ],
  },
} satisfies Record<string, RecordedStream>;

/**
 * Non-streaming completions (a server that ignores `stream: true` answers with one of these as `application/json`),
 * in the same providers' shapes.
 */
export const PROVIDER_COMPLETIONS = {
  /** Mistral reasoning model: `message.content` as thinking and text parts. Reasoning "Add them." Text "4". */
  mistralThinking: {
    id: "rec-mistral",
    object: "chat.completion",
    created,
    model: "magistral-small-2509",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: [thinking("Add them."), textPart("4")], tool_calls: null },
        finish_reason: "stop",
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 6, total_tokens: 16 },
  },
  /** A reasoning server: `content: null` next to `reasoning` and a tool call. Reasoning "Look first." */
  reasoningWithToolCall: {
    id: "rec-ollama",
    object: "chat.completion",
    created,
    model: "qwen3",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: null,
          reasoning: "Look first.",
          tool_calls: [{ id: "call_x", type: "function", function: { name: "read", arguments: '{"file_path":"a"}' } }],
        },
        finish_reason: "tool_calls",
      },
    ],
  },
} satisfies Record<string, Record<string, unknown>>;

/** A mock reply that plays a recorded stream exactly as recorded. */
export function recordedReply(stream: RecordedStream): ReplyBuilder {
  const builder = new ReplyBuilder().finish(null);
  for (const data of stream.chunks) builder.chunk({ ...data });
  return stream.done ? builder : builder.withoutDone();
}

/** A mock answer that ignores `stream: true` and sends one JSON completion instead. */
export function jsonCompletion(completion: Record<string, unknown>): MockTurn {
  return {
    kind: "http_error",
    status: 200,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(completion),
  };
}
