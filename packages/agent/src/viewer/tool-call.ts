/**
 * One tool call in the timeline: its name, a one-line summary, status and duration, then its arguments — an edit or
 * a write as a diff (the one stored with its result, else from the arguments), a terminal command as a shell line,
 * anything else as JSON — and its result (monospaced, images inline). Tools are recognised by their arguments' shape, not their names, so renamed or upstream-named tools
 * (`file_path` + `old_string`/`new_string`, `file_path` + `content`, `command`) render the same.
 */
import type { ContentPart, ToolCall, ToolDisplay } from "@crow/core";
import { callArguments } from "@crow/core/internal";
import { withoutResultDiff } from "@crow/mcp/edit";
import { unifiedDiff } from "../base/unified-diff.js";
import { html, q, type SafeHtml } from "./html.js";

/** How a call ended, as far as the stored history tells. */
export type CallStatus = "ok" | "error" | "running";

export interface CallResult {
  content: string | ContentPart[];
  /** How long the call ran (stored), or, for rows stored before that, from the response to the stored result. */
  durationMs?: number;
  /** The stored error flag; absent on rows stored before it was kept (then read from the text). */
  isError?: boolean;
  /** The display stored with the result (migration 0007): the diff the live session showed. */
  display?: ToolDisplay;
}

/**
 * Whether a result reports a failure: the stored `isError` flag when the row has it; for rows stored before it was
 * kept, the shapes Crow's failures take: tool and loop errors start with "Error", cancellations and failed
 * subagents say so in their first words.
 */
export function isErrorResult(text: string, stored?: boolean): boolean {
  if (stored !== undefined) return stored;
  return /^(Error\b|Tool call cancelled|The subagent (failed|was cancelled))/.test(text.trimStart());
}

/** A message content's text and its images (data: or http(s) URLs only). */
export function contentParts(content: string | ContentPart[] | null): { text: string; images: string[] } {
  if (content === null) return { text: "", images: [] };
  if (typeof content === "string") return { text: content, images: [] };
  const text: string[] = [];
  const images: string[] = [];
  for (const part of content) {
    if (part.type === "text") text.push(part.text);
    else if (part.type === "image_url" && /^(data:image\/|https?:)/i.test(part.image_url.url)) {
      images.push(part.image_url.url);
    } else text.push(part.type === "image_url" ? "[image]" : "[audio]");
  }
  return { text: text.join("\n"), images };
}

/**
 * Images shown inline (the URLs come from {@link contentParts}, so only data: images and http(s)). A data: image is
 * in the store already; an http(s) one shows as a link naming its URL, so opening a session fetches nothing from
 * elsewhere (the page's Content-Security-Policy would refuse it anyway).
 */
export function images(urls: readonly string[]): SafeHtml {
  return html`${urls.map((url) =>
    /^data:/i.test(url)
      ? html`<img class="inline-image" alt="image" loading="lazy" src="${url}">`
      : html`<a class="image-link" href="${url}" rel="noopener noreferrer nofollow" target="_blank">[image] ${url}</a>`,
  )}`;
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

function diff(file: string, before: string | null, after: string): SafeHtml {
  const lines = unifiedDiff(file, before, after, { maxLines: 400 });
  return html`<pre class="diff">${lines.map((l) => html`<span class="d-${l.kind}">${l.text}</span>\n`)}</pre>`;
}

/**
 * The arguments block and a one-line summary for the header. A change the store kept the diff of (`shown`: the whole
 * file before and after, as the live session showed it) is that diff; older rows get it from the arguments.
 */
function describeArgs(
  call: ToolCall,
  shown?: ToolDisplay,
): { summary: string; body: SafeHtml; terminal?: boolean; isDiff?: boolean } {
  const args = callArguments(call);
  if (shown?.diff) {
    const { path, oldText, newText } = shown.diff;
    return {
      summary: (args && (str(args.file_path) ?? str(args.path))) ?? path,
      body: diff(path, oldText, newText),
      isDiff: true,
    };
  }
  if (!args) return { summary: "", body: html`<pre class="args">${call.function.arguments}</pre>` };
  const file = str(args.file_path) ?? str(args.path);
  const oldText = str(args.old_string);
  const newText = str(args.new_string);
  if (file !== undefined && oldText !== undefined && newText !== undefined) {
    return { summary: file, body: diff(file, oldText === "" ? null : oldText, newText), isDiff: true };
  }
  const content = str(args.content);
  if (file !== undefined && content !== undefined)
    return { summary: file, body: diff(file, null, content), isDiff: true };
  const command = str(args.command);
  if (command !== undefined) {
    return {
      summary: command.split("\n")[0] ?? "",
      body: html`<pre class="terminal command">$ ${command}</pre>`,
      terminal: true,
    };
  }
  const first = Object.values(args).find((v) => typeof v === "string");
  return {
    summary: file ?? str(first) ?? "",
    body: html`<pre class="args">${JSON.stringify(args, null, 2)}</pre>`,
  };
}

function duration(ms: number | undefined): string {
  if (ms === undefined) return "";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/** A subagent's session id named in a result ("(subagent session ID)"), linked. */
function subagentLink(text: string): SafeHtml | undefined {
  const id = /\(subagent session ([A-Za-z0-9_-]+)\)/.exec(text)?.[1];
  return id ? html`<a class="subagent-link" href="/s/${q(id)}">subagent session ${id}</a>` : undefined;
}

/** A tool call with its result (undefined: still running, or lost). */
export function renderToolCall(call: ToolCall, result: CallResult | undefined): SafeHtml {
  const { summary, body, terminal, isDiff } = describeArgs(call, result?.display);
  const parts = result ? contentParts(result.content) : undefined;
  // The card shows the change as a diff already: the unified diff the result repeats for the model is left out.
  if (parts && isDiff) parts.text = withoutResultDiff(parts.text);
  // A command that ran and failed is not a tool error (the model reads its output), but it did not go "ok" either.
  const exit = terminal && parts ? /\[Command failed with exit code (-?\d+)\]\s*$/.exec(parts.text)?.[1] : undefined;
  const status: CallStatus = !parts
    ? "running"
    : isErrorResult(parts.text, result?.isError) || exit !== undefined
      ? "error"
      : "ok";
  const badge = exit !== undefined ? `exit ${exit}` : status;
  const resultClass = terminal ? "result terminal" : "result";
  const shortSummary = summary.length > 120 ? `${summary.slice(0, 119)}…` : summary;
  return html`<details class="tool status-${status}" data-call-id="${call.id}" data-tool="${call.function.name}" ${status === "error" ? "open" : ""}>
<summary><span class="tool-name">${call.function.name}</span> <span class="tool-summary">${shortSummary}</span> <span class="badge ${status}">${badge}</span> <span class="duration">${duration(result?.durationMs)}</span></summary>
<div class="tool-body"><div class="label">arguments</div>${body}
${
  parts
    ? html`<div class="label">result</div>${subagentLink(parts.text)}<pre class="${resultClass}">${parts.text}</pre>${images(parts.images)}`
    : html`<div class="label">result</div><p class="pending">running…</p>`
}</div>
</details>`;
}
