/**
 * A stretch of a stored history as timeline items (`<article class="item" data-seq=…>`): user messages, assistant
 * messages (thoughts collapsed, text as safe Markdown, each tool call paired with its result) and, for tool results
 * whose call lies outside the stretch, the result on its own. Read from the store a page at a time, so a 10 000-
 * message session shows its first screen without loading the rest.
 */
import type { AssistantMessage, Store, StoredMessage, ToolMessage, UserMessage } from "@crow/core";
import type { MarkLoader } from "./checkpoint-marks.js";
import { html, type SafeHtml, when } from "./html.js";
import { markdown } from "./markdown.js";
import { type CallResult, contentParts, images, renderToolCall } from "./tool-call.js";

/** Messages per timeline page. */
export const PAGE_SIZE = 150;

export interface TimelinePage {
  html: SafeHtml;
  /** The seq to continue from: past the last message, or the first message of a turn still waiting for results. */
  next: number;
  /** Whether the history goes on past this page. */
  more: boolean;
}

/**
 * A file or directory attached to a prompt, as the agent inlined it (prompt-content.ts): `File PATH:` or `File PATH
 * (lines …):`, a directory listing, or an editor's embedded resource (`file_location: URI`). Its lines are content,
 * not Markdown: they keep their line breaks.
 */
const ATTACHMENT = /^(File [^\n]+:|Directory [^\n]+ entries\):|file_location: [^\n]+)\n/;

/** Where an attachment starts inside one text (`crow run` sends the prompt and its `@path` files as one string). */
const ATTACHMENT_START = /\n\n(?=File [^\n]+:\n|Directory [^\n]+ entries\):\n|file_location: [^\n]+\n)/;

/**
 * One text part of a user message: each attachment in it as its heading and its lines verbatim, the rest Markdown.
 */
function userText(text: string): SafeHtml {
  const pieces = text.split(ATTACHMENT_START);
  return html`${pieces.map(userPiece)}`;
}

function userPiece(text: string): SafeHtml {
  const attached = ATTACHMENT.exec(text);
  if (!attached) return html`<div class="md">${markdown(text)}</div>`;
  const heading = (attached[1] ?? "").replace(/:$/, "");
  return html`<details class="attachment" open><summary>${heading}</summary><pre>${text.slice(attached[0].length)}</pre></details>`;
}

function userItem(stored: StoredMessage, content: UserMessage["content"], mark?: SafeHtml): SafeHtml {
  const parts = typeof content === "string" || content === null ? [content ?? ""] : content;
  const texts = parts.map((part) => (typeof part === "string" ? part : part.type === "text" ? part.text : undefined));
  const { images: urls } = contentParts(content);
  // Non-text parts other than shown images ([audio], an image that cannot be shown) keep their placeholder.
  const others = contentParts(
    parts.filter((part): part is Exclude<typeof part, string> => typeof part !== "string" && part.type !== "text"),
  ).text;
  return html`<article class="item user" data-seq="${stored.seq}"><div class="who">user <time>${when(stored.createdAt)}</time></div>
${texts.filter((t): t is string => t !== undefined).map(userText)}${others ? html`<div class="md">${markdown(others)}</div>` : ""}${images(urls)}${mark ?? ""}</article>`;
}

function assistantItem(
  stored: StoredMessage,
  message: AssistantMessage,
  results: Map<string, CallResult>,
  summary: boolean,
): SafeHtml {
  const usage = stored.usage;
  return html`<article class="item assistant${summary ? " summary" : ""}" data-seq="${stored.seq}">
<div class="who">${summary ? "compaction summary" : "assistant"} <time>${when(stored.createdAt)}</time>${usage ? html` <span class="usage">${usage.promptTokens} → ${usage.completionTokens} tokens</span>` : ""}</div>
${message.reasoning_content ? html`<details class="thought"><summary>Thought</summary><pre>${message.reasoning_content}</pre></details>` : ""}
${message.content ? html`<div class="md">${markdown(message.content)}</div>` : ""}
${(message.tool_calls ?? []).map((call) => renderToolCall(call, results.get(call.id)))}
</article>`;
}

function orphanResult(stored: StoredMessage, message: ToolMessage): SafeHtml {
  const { text, images: urls } = contentParts(message.content);
  return html`<article class="item tool-result" data-seq="${stored.seq}"><div class="who">result of ${message.tool_call_id}</div>
<pre class="result">${text}</pre>${images(urls)}</article>`;
}

/**
 * Renders `messages` (consecutive, in seq order). `atEnd`: nothing follows them in the store, so calls without a
 * result are still running. `summarySeq`: the compaction summary's seq, labelled as such.
 */
export function renderItems(
  messages: readonly StoredMessage[],
  atEnd: boolean,
  summarySeq?: number,
  /** Checkpoint marks by the seq of the user message they follow (checkpoint-marks.ts). */
  marks?: ReadonlyMap<number, SafeHtml>,
): { html: SafeHtml; pendingFrom?: number } {
  const items: SafeHtml[] = [];
  let pendingFrom: number | undefined;
  const paired = new Set<number>();
  for (let i = 0; i < messages.length; i++) {
    const stored = messages[i] as StoredMessage;
    const { message } = stored;
    if (message.role === "tool") {
      if (!paired.has(i)) items.push(orphanResult(stored, message));
      continue;
    }
    if (message.role === "user") items.push(userItem(stored, message.content, marks?.get(stored.seq)));
    else if (message.role === "system")
      items.push(html`<article class="item system" data-seq="${stored.seq}"><pre>${message.content}</pre></article>`);
    else {
      const results = new Map<string, CallResult>();
      const started = Date.parse(stored.createdAt);
      for (let j = i + 1; j < messages.length && messages[j]?.message.role === "tool"; j++) {
        const result = messages[j] as StoredMessage;
        const tool = result.message as ToolMessage;
        results.set(tool.tool_call_id, {
          content: tool.content,
          // What the store kept; rows from before it did: inferred from the timestamps and the text.
          durationMs: result.outcome?.durationMs ?? Math.max(0, Date.parse(result.createdAt) - started),
          ...(result.outcome ? { isError: result.outcome.isError } : {}),
          ...(result.outcome?.display ? { display: result.outcome.display } : {}),
        });
        paired.add(j);
      }
      const calls = message.tool_calls ?? [];
      if (atEnd && calls.some((c) => !results.has(c.id))) pendingFrom = stored.seq;
      items.push(assistantItem(stored, message, results, stored.seq === summarySeq));
    }
  }
  return pendingFrom === undefined ? { html: html`${items}` } : { html: html`${items}`, pendingFrom };
}

/**
 * The timeline page starting at `fromSeq`: PAGE_SIZE messages, plus the tool results that follow the last one (a
 * call and its results are never split across pages).
 */
export async function timelinePage(
  store: Store,
  sessionId: string,
  fromSeq: number,
  summarySeq?: number,
  marks?: MarkLoader,
): Promise<TimelinePage> {
  const messages = await store.loadMessagePage(sessionId, { fromSeq, limit: PAGE_SIZE + 1 });
  let more = messages.length > PAGE_SIZE;
  if (more) messages.pop();
  const last = messages.at(-1);
  if (
    more &&
    last &&
    (last.message.role === "tool" || (last.message.role === "assistant" && last.message.tool_calls?.length))
  ) {
    const following = await store.loadMessagePage(sessionId, { fromSeq: last.seq + 1, limit: 257 });
    let k = 0;
    while (k < following.length && following[k]?.message.role === "tool")
      messages.push(following[k++] as StoredMessage);
    more = k < following.length;
  }
  const rendered = renderItems(messages, !more, summarySeq, marks ? await marks(sessionId, messages) : undefined);
  const end = messages.at(-1);
  return {
    html: rendered.html,
    next: rendered.pendingFrom ?? (end ? end.seq + 1 : fromSeq),
    more,
  };
}
