/**
 * The summarizer request: the span to compact rendered as a transcript, between the first and the last user
 * message, sent without tools. The summary is the text of the model's answer, exactly (upstream stored the literal
 * word "content" here by unpacking a dict into a tuple).
 */
import type { LlmClient, LlmError, RequestParams } from "../llm/types.js";
import type { ChatMessage, Usage } from "../messages.js";
import type { CompactionPlan } from "./plan.js";
import { clip, renderTranscript, summaryText, type TranscriptOptions } from "./transcript.js";

/** The summarizer's instructions (its system message). */
export const SUMMARIZER_INSTRUCTIONS = `You compact the context of a coding agent. The agent (Crow) has been working \
on a task with a user, through tools (reading and editing files, running commands, searching the web). Its context is \
getting full, so the part of the conversation between the user's first message and their latest message will be \
replaced by your summary. The agent continues the work from the first message, your summary, and the latest message \
only: anything you leave out is forgotten.

Write one Markdown summary, in the second person ("you") addressed to the agent, covering:
- the goal and the user's requirements, preferences and constraints stated so far (quote exact wording when it matters);
- what was done: files read, created and changed (absolute paths), with the substance of each change;
- commands run and their significant results (builds, test outcomes, errors with their exact messages);
- decisions made and why, approaches that failed and must not be retried;
- the current state: what works, what is left to do, open questions, and the next step.

Be specific (names, paths, values, line numbers) and leave out chatter. Do not invent anything. Do not answer the \
latest message and do not call tools: only write the summary.`;

/** The user message of the summarizer request. */
export function summarizerPrompt(plan: CompactionPlan, transcript: TranscriptOptions = {}): string {
  const lastText = summaryText(plan.tail[0]?.content);
  const max = transcript.maxMessageChars ?? 8_000;
  return [
    "FIRST USER MESSAGE (kept verbatim before your summary):",
    clip(summaryText(plan.first.content), max),
    "",
    "CONVERSATION TO SUMMARIZE:",
    "<conversation>",
    renderTranscript(plan.middle, transcript),
    "</conversation>",
    "",
    "LATEST USER MESSAGE (kept verbatim after your summary; do not answer it):",
    clip(lastText, max),
    "",
    "Write the summary now.",
  ].join("\n");
}

export interface SummarizeOptions {
  llm: LlmClient;
  model: string;
  signal?: AbortSignal;
  /** Sampling options (e.g. `max_tokens`) for the summarizer request. */
  params?: RequestParams;
  transcript?: TranscriptOptions;
}

export interface Summary {
  text: string;
  usage?: Usage;
}

/** A summarizer request that failed or returned no text. */
export class CompactionError extends Error {
  override name = "CompactionError";
  constructor(
    message: string,
    readonly llmError?: LlmError,
  ) {
    super(message);
  }
}

/** The messages of the summarizer request (no tools, no tool messages). */
export function summarizerMessages(plan: CompactionPlan, transcript?: TranscriptOptions): ChatMessage[] {
  return [
    { role: "system", content: SUMMARIZER_INSTRUCTIONS },
    { role: "user", content: summarizerPrompt(plan, transcript) },
  ];
}

/** Asks the model for the summary of `plan.middle`. Rejects with {@link CompactionError}. */
export async function summarize(plan: CompactionPlan, options: SummarizeOptions): Promise<Summary> {
  const result = await options.llm.stream(
    {
      model: options.model,
      messages: summarizerMessages(plan, options.transcript),
      ...(options.params ? { params: options.params } : {}),
    },
    options.signal ? { signal: options.signal } : {},
  );
  if (!result.ok) {
    throw new CompactionError(`The summary request failed: ${result.error.message}`, result.error);
  }
  const text = (result.message.content ?? "").trim();
  if (!text) throw new CompactionError("The model returned an empty summary; the history was left as it was.");
  return { text, ...(result.usage ? { usage: result.usage } : {}) };
}
